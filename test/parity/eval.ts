/**
 * eval.ts: the parity evaluation against the real BAZINGA builder: does every spawn get
 * at least what BAZINGA's own context section gave it?
 *
 * Usage:  npm run eval:parity -- <BAZINGA checkout> [--json] [--only A1,B1] [--keep]
 * Input:  a checkout of BAZINGA (github mehdic/bazinga) holding .claude/skills/prompt-builder/scripts/
 *         prompt_builder.py, .claude/skills/bazinga-db/scripts/bazinga_db.py and agents/; python3.
 * Output: stdout: the markdown report (a table a spawn, the totals, every builder item not shown),
 *         or with --json one JSON document; stderr: progress, one line a spawn.
 * Exit:   0 every builder item present or stated and every prompt byte-identical outside the
 *         markers; 1 otherwise (or an instrument problem); 2 usage (no checkout, not one).
 *
 * It lays out two temporary BAZINGA projects from the checkout as `bazinga init` would (BAZINGA's
 * code stays the checkout's; nothing of it enters this repository): one served by this product
 * (install-skills --wire, as the tests install it), one where only BAZINGA ever runs. Every write of
 * the grid (grid.ts) goes through each project's own bazinga_db.py, a time-ordered one in a second
 * of its own (BAZINGA stamps to the second); at each spawn the real prompt_builder.py runs without
 * the hook (its section: the floor), then as Claude Code runs it, with the hook. The stand-in
 * builder of the tests runs beside the real one on the same database, and says when it selects
 * otherwise. Takes about two minutes (the seconds the writes wait for, and a hook process a spawn).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeStandInScript } from '../standInBuilder.ts';
import { GRID } from './grid.ts';
import { meetsFloor } from './measure.ts';
import { installProduct, layoutFromCheckout, missingFromCheckout } from './project.ts';
import { renderJson, renderMarkdown } from './report.ts';
import { runGrid, STAND_IN_BESIDE } from './run.ts';
import { bazingaWriter } from './writers.ts';

const HELP = `eval:parity: every spawn of today's BAZINGA flow, the real prompt builder's context section beside
the block this product's prompt hook puts in its place

Usage: npm run eval:parity -- <BAZINGA checkout> [--json] [--only A1,B1] [--keep]

  <BAZINGA checkout>  a checkout of BAZINGA holding .claude/skills/prompt-builder/scripts/prompt_builder.py,
                      .claude/skills/bazinga-db/scripts/bazinga_db.py and agents/ (for example:
                      git clone --no-checkout <bazinga> b && git -C b checkout HEAD -- .claude templates agents bazinga workflow)
  --json              one JSON document instead of the markdown report
  --only IDS          only these spawns (comma-separated ids of the table); every write is made all the same
  --keep              keep the temporary projects (their path on stderr)

Prints a table a spawn: the builder's items (packages, reasoning entries, error patterns) and how many
the block shows, states the absence of, or leaves out silently; the section's and the block's sizes;
whether every byte outside the markers is the builder's. Exit 0 when nothing is absent silently and
every prompt is identical outside the markers, 1 otherwise, 2 for a usage error.
`;

function usage(message: string): never {
  process.stderr.write(`eval:parity: ${message}\nUsage: npm run eval:parity -- <BAZINGA checkout> [--json] [--only A1,B1] [--keep]  (--help for more)\n`);
  process.exit(2);
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  let checkout: string | undefined;
  let json = false;
  let keep = false;
  let only: Set<string> | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--json') json = true;
    else if (a === '--keep') keep = true;
    else if (a === '--only') {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) usage('--only needs the spawn ids, comma-separated (A1,B1)');
      only = new Set(v.split(',').map((s) => s.trim()).filter(Boolean));
    } else if (a.startsWith('-')) usage(`unknown flag ${a}; flags: --json, --only IDS, --keep, --help`);
    else if (checkout === undefined) checkout = a;
    else usage(`one checkout only (got ${checkout} and ${a})`);
  }
  if (checkout === undefined) usage('the path of a BAZINGA checkout is required');
  const root = path.resolve(checkout);
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) usage(`${root} is not a folder`);
  const missing = missingFromCheckout(root);
  if (missing !== undefined) usage(`${root} is not a BAZINGA checkout: it holds no ${missing}`);
  const known = new Set(GRID.flatMap((s) => s.steps.flatMap((st) => (st.do === 'spawn' ? [st.id] : []))));
  for (const id of only ?? []) if (!known.has(id)) usage(`--only: no spawn ${id} in the grid (spawns: ${[...known].join(', ')})`);
  if (spawnSync('python3', ['--version']).status !== 0) usage('python3 is needed to run BAZINGA');

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-parity-'));
  const served = path.join(tmp, 'served');
  const alone = path.join(tmp, 'bazinga-alone');
  const env: NodeJS.ProcessEnv = { ...process.env, CONTEXT_ASSEMBLER_NO_SERVER: '1' };
  for (const k of ['CLAUDE_PROJECT_DIR', 'BAZINGA_ROOT', 'BAZINGA_PROMPT_FILE_LIMIT', 'BAZINGA_VERBOSE']) delete env[k];
  try {
    for (const p of [served, alone]) layoutFromCheckout(root, p);
    installProduct(served);
    writeStandInScript(served, STAND_IN_BESIDE);
    const log = (line: string) => process.stderr.write(`[parity] ${line}\n`);
    const run = await runGrid({ root: served, writers: [bazingaWriter(served, env), bazingaWriter(alone, env)], wallClock: true, env, alone, standIn: STAND_IN_BESIDE }, GRID, { ...(only ? { only } : {}), log });
    const commit = spawnSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
    const meta = { checkout: root, bazinga_commit: commit.status === 0 ? commit.stdout.trim() : null };
    process.stdout.write(json ? renderJson(run.measures, meta, run.notes) : `BAZINGA checkout: ${root}${meta.bazinga_commit ? ` (${meta.bazinga_commit})` : ''}\n\n${renderMarkdown(run.measures, run.notes)}`);
    return meetsFloor(run.measures) ? 0 : 1;
  } finally {
    if (keep) process.stderr.write(`[parity] projects kept: ${served} (served) and ${alone} (BAZINGA alone)\n`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
}

process.exitCode = await main(process.argv.slice(2));
