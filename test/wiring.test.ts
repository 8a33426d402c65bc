/**
 * Today's BAZINGA spawn flow, end to end in real processes, on a project laid out like a BAZINGA
 * install (made here): the stand-in prompt builder (standInBuilder.ts: the real builder's output
 * formats and prompt layout), agent definitions, the original's bazinga-db script, the user's own
 * `.claude/settings.json`, the v19 fixture database. The hook runs the way Claude Code runs a
 * PostToolUse hook: its registered command through /bin/sh, the event on stdin.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILDER_IF, EARLIER_WIRED_HOOK_COMMANDS, PLUGIN_HOOK_COMMAND, WIRED_HOOK_COMMAND } from '../skills/context-assembler/scripts/lib/wiring/hookCommand.ts';
import { projectWiresHook } from '../skills/context-assembler/scripts/lib/wiring/promptHook.ts';
import { BLOCK_BEGIN, BLOCK_END } from '../skills/context-assembler/scripts/lib/wiring/promptSection.ts';
import { bazingaDb, copyFixture, REPO_ROOT, S1, runScript, writeArtifact, type Project } from './helpers.ts';
import { BUILD, installStandInBuilder } from './standInBuilder.ts';

const USER_SETTINGS = `{
  "permissions": {
    "allow": ["Bash(npm test)"]
  },
  "hooks": {
    "PostToolUse": [
      { "matcher": "Write", "hooks": [{ "type": "command", "command": "echo formatted" }] }
    ]
  }
}
`;

const INSTALL = path.join(REPO_ROOT, 'scripts', 'install.mjs');
const DOCTOR = path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
let project: Project;
const P = (rel: string) => path.join(project.root, rel);
const DIR = `bazinga/prompts/${S1}`;
const paramsOf = (agent: string, group: string) => `${DIR}/params_${agent}_${group}.json`;
const promptOf = (agent: string, group: string) => `${DIR}/${agent}_${group}.md`;

function install(...args: string[]) {
  const r = spawnSync(process.execPath, [INSTALL, project.root, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function writeParams(agent: string, group: string, extra: Record<string, unknown> = {}): string {
  const file = paramsOf(agent, group);
  fs.writeFileSync(
    P(file),
    JSON.stringify({
      agent_type: agent, session_id: S1, group_id: group, task_title: group === 'AUTH' ? 'Login flow with refresh tokens' : 'Offline cart',
      task_requirements: group === 'AUTH' ? 'Users stay logged in; refresh tokens rotate' : 'Cart survives going offline',
      branch: 'feature/x', mode: 'parallel', testing_mode: 'full', model: 'sonnet', output_file: promptOf(agent, group), ...extra,
    }, null, 2),
  );
  return file;
}

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Whether a hook's `if` rule (permission-rule syntax) lets it run for this Bash command. */
function ifMatches(rule: string | undefined, command: string): boolean {
  if (rule === undefined) return true;
  const m = /^Bash\((.*)\)$/.exec(rule);
  if (!m) return false;
  return new RegExp(`^${(m[1] as string).split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(command);
}

/** Every PostToolUse hook on Bash of the project's settings and (given) the plugin's hooks.json, run as Claude Code runs them. */
function runHooks(command: string, response: { stdout: string; stderr: string }, opts: { plugin?: boolean; env?: NodeJS.ProcessEnv } = {}): HookRun[] {
  const event = {
    session_id: 'cc-session', hook_event_name: 'PostToolUse', cwd: project.root, tool_name: 'Bash',
    tool_input: { command, description: 'Build the agent prompt' },
    tool_response: { ...response, interrupted: false, isImage: false, noOutputExpected: false },
  };
  const sources: { hooks?: { PostToolUse?: { matcher?: string; hooks: { command: string; if?: string }[] }[] } }[] = [];
  if (fs.existsSync(P('.claude/settings.json'))) sources.push(JSON.parse(fs.readFileSync(P('.claude/settings.json'), 'utf8')));
  if (opts.plugin) sources.push(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'hooks', 'hooks.json'), 'utf8')));
  const runs: HookRun[] = [];
  for (const settings of sources) {
    for (const entry of settings.hooks?.PostToolUse ?? []) {
      if (entry.matcher !== undefined && !new RegExp(`^(?:${entry.matcher})$`).test('Bash')) continue;
      for (const h of entry.hooks) {
        if (!ifMatches(h.if, command)) continue;
        const r = spawnSync('/bin/sh', ['-c', h.command], {
          cwd: project.root,
          input: JSON.stringify(event) + '\n',
          encoding: 'utf8',
          env: { ...process.env, CLAUDE_PROJECT_DIR: project.root, CLAUDE_PLUGIN_ROOT: REPO_ROOT, ...opts.env },
        });
        runs.push({ code: r.status, stdout: r.stdout, stderr: r.stderr });
      }
    }
  }
  return runs;
}

/** The orchestrator's Bash call of the builder, then the hooks: the builder's own prompt and the one the agent reads. */
function spawnPrompt(agent: string, group: string, opts: { plugin?: boolean; env?: NodeJS.ProcessEnv } = {}) {
  const command = BUILD(paramsOf(agent, group));
  // Claude Code's Bash tool runs the command with both streams into one: the hook gets them merged in stdout.
  const build = spawnSync('/bin/sh', ['-c', `${command} 2>&1`], { cwd: project.root, encoding: 'utf8', env: { ...process.env, ...opts.env } });
  expect(build.status, build.stdout).toBe(0);
  expect(build.stdout).toMatch(/^PROMPT_FILE=/m);
  const builder = fs.readFileSync(P(promptOf(agent, group)), 'utf8');
  const hooks = runHooks(command, { stdout: build.stdout.replace(/\n$/, ''), stderr: '' }, opts);
  return { build, builder, hooks, prompt: fs.readFileSync(P(promptOf(agent, group)), 'utf8') };
}

/** The block the agent reads; and a check that everything after it is the builder's prompt from `next` on, byte for byte. */
function onlyContextChanged(builder: string, prompt: string, next: string): string {
  expect(prompt.startsWith(`${BLOCK_BEGIN}\n`)).toBe(true);
  expect(prompt.split(BLOCK_BEGIN)).toHaveLength(2);
  expect(prompt.split(BLOCK_END)).toHaveLength(2);
  const after = prompt.slice(prompt.indexOf(BLOCK_END) + BLOCK_END.length + 2);
  expect(builder.startsWith('## Context from Prior Work\n')).toBe(true);
  expect(builder.endsWith(after)).toBe(true);
  expect(after.startsWith(next)).toBe(true);
  // What went is exactly the builder's context section: the part before `next`.
  expect(builder.slice(0, builder.length - after.length)).toBe(builder.slice(0, builder.indexOf(`\n\n${next}`) + 2));
  return prompt.slice(BLOCK_BEGIN.length + 1, prompt.indexOf(BLOCK_END));
}

/** Rows of consumption_scope, optionally for one agent. */
function consumption(agent?: string): number {
  const db = new Database(project.dbPath, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM consumption_scope WHERE ? IS NULL OR agent_type = ?').get(agent ?? null, agent ?? null) as { n: number }).n;
  } finally {
    db.close();
  }
}

function sql(statement: string, ...params: unknown[]): void {
  const db = new Database(project.dbPath);
  try {
    db.prepare(statement).run(...params);
  } finally {
    db.close();
  }
}

beforeAll(() => {
  project = copyFixture('ca-wiring-');
  installStandInBuilder(project.root);
  fs.mkdirSync(P('.claude/skills/bazinga-db/scripts'), { recursive: true });
  fs.writeFileSync(P('.claude/skills/bazinga-db/scripts/bazinga_db.py'), '# the original tool\n');
  fs.writeFileSync(P('.claude/settings.json'), USER_SETTINGS);
  fs.mkdirSync(P(DIR), { recursive: true });
  // AUTH has specializations (the builder writes its guidance section); CART has none.
  sql("UPDATE task_groups SET specializations = ? WHERE id = 'AUTH'", JSON.stringify(['bazinga/templates/specializations/01-languages/typescript.md']));
  // A developer's reasoning that quotes the builder's next heading.
  sql(
    "INSERT INTO orchestration_logs (session_id, agent_type, content, log_type, reasoning_phase, group_id, timestamp) VALUES (?, 'developer', ?, 'reasoning', 'risks', 'AUTH', '2025-12-01 10:30:00')",
    S1,
    'Prompt layout risk.\n\n## Skills Checklist\n(quoted while reasoning about prompts)\n\n## Next\nrotate on every refresh',
  );
});
afterAll(() => project.cleanup());

describe('install-skills and the prompt-builder flow', () => {
  it('detects the flow; without --wire nothing outside the skills changes, and its last lines name the next step', () => {
    const r = install('--no-deps');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Flow: today's BAZINGA (.claude/skills/prompt-builder/scripts/prompt_builder.py builds each prompt). Not wired");
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('Next: run again with --wire (see the edit first with --wire --dry-run), or install the plugin instead, which serves these spawns by itself.');
    expect(r.stdout).not.toContain('--session <id>');
    expect(fs.readFileSync(P('.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
    expect(fs.readFileSync(P('.claude/skills/bazinga-db/scripts/bazinga_db.py'), 'utf8')).toBe('# the original tool\n');
    // The installed skills resolve their dependencies from .claude/skills/node_modules (--no-deps: linked here).
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), P('.claude/skills/node_modules'), 'dir');
  });

  it('--wire --dry-run shows the exact edit and changes nothing', () => {
    const r = install('--wire', '--dry-run', '--no-deps');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Wiring: would edit .claude/settings.json:');
    expect(r.stdout.split('\n').some((l) => l.startsWith('+ ') && l.includes(`"if": "${BUILDER_IF}"`))).toBe(true);
    expect(r.stdout).toContain('Next: run without --dry-run to make the edit above.');
    expect(fs.readFileSync(P('.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
    expect(fs.existsSync(P('.claude/skills/.context-assembler-wiring.json'))).toBe(false);
  });

  it("--wire registers the hook beside the user's settings, read back from the file; a second --wire changes nothing", () => {
    const r = install('--wire', '--no-deps');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Wired: .claude/settings.json has a PostToolUse hook on Bash');
    expect(r.stdout).toContain('Next: nothing; check with: npm run doctor');
    const settings = JSON.parse(fs.readFileSync(P('.claude/settings.json'), 'utf8'));
    expect(settings.permissions).toEqual({ allow: ['Bash(npm test)'] });
    expect(settings.hooks.PostToolUse).toEqual([
      { matcher: 'Write', hooks: [{ type: 'command', command: 'echo formatted' }] },
      { matcher: 'Bash', hooks: [{ type: 'command', if: BUILDER_IF, command: WIRED_HOOK_COMMAND, timeout: 60 }] },
    ]);
    const again = fs.readFileSync(P('.claude/settings.json'));
    expect(install('--wire', '--no-deps').stdout).toContain('Wiring: already wired; nothing changed.');
    expect(fs.readFileSync(P('.claude/settings.json')).equals(again)).toBe(true);
  });
});

describe('spawns of one group, as the orchestrator makes them', () => {
  it('developer, QA, developer retry with qa_feedback, tech lead: each prompt carries the block once, only the context section changed', () => {
    writeParams('developer', 'AUTH');
    const dev = spawnPrompt('developer', 'AUTH');
    expect(dev.hooks.map((h) => [h.code, h.stderr])).toEqual([[0, '']]);
    const devBlock = onlyContextChanged(dev.builder, dev.prompt, '## SPECIALIZATION GUIDANCE (Advisory)\n');
    expect(devBlock).toMatch(/^## Context for developer\n/);
    expect(dev.prompt).toContain('- rule 69 of bazinga/templates/specializations/01-languages/typescript.md');

    writeParams('qa_expert', 'AUTH');
    expect(consumption('qa_expert')).toBe(0);
    const qa = spawnPrompt('qa_expert', 'AUTH');
    // What the placed block delivers is recorded once the prompt holds it.
    expect(consumption('qa_expert')).toBeGreaterThan(0);
    const qaBlock = onlyContextChanged(qa.builder, qa.prompt, '## SPECIALIZATION GUIDANCE (Advisory)\n');
    // The builder quoted the reasoning that holds its own next heading; the section still ends at the guidance.
    expect(qa.builder.indexOf('(quoted while reasoning about prompts)')).toBeLessThan(qa.builder.indexOf('## SPECIALIZATION GUIDANCE'));
    expect(qaBlock).toMatch(/^## Context for qa_expert\n[\s\S]*### Relevant Packages \([1-9]/);

    sql("UPDATE task_groups SET revision_count = 1 WHERE id = 'AUTH'");
    writeParams('developer', 'AUTH', { qa_feedback: 'TokenExpiredError: jwt expired at verify() in auth.middleware.test.ts' });
    const retry = spawnPrompt('developer', 'AUTH');
    onlyContextChanged(retry.builder, retry.prompt, '## SPECIALIZATION GUIDANCE (Advisory)\n');
    expect(retry.prompt).toContain('## Previous QA Feedback (FIX THESE ISSUES)\n\nTokenExpiredError');

    writeParams('tech_lead', 'AUTH');
    const tl = spawnPrompt('tech_lead', 'AUTH');
    expect(onlyContextChanged(tl.builder, tl.prompt, '## SPECIALIZATION GUIDANCE (Advisory)\n')).toMatch(/^## Context for tech_lead\n/);

    // Each spawn the hook served is on record, with the prompt's size by the builder's estimate
    // (characters ÷ 3.85, plus 2 %) and what the block delivered, in the transaction that recorded it.
    const db = new Database(project.dbPath, { readonly: true });
    try {
      const recs = db.prepare("SELECT agent_type, iteration, source, outcome, prompt_tokens, detail FROM ca_assemblies WHERE source = 'prompt-hook' ORDER BY id").all() as { agent_type: string; iteration: number; outcome: string; prompt_tokens: number; detail: string }[];
      expect(recs.map((r) => [r.agent_type, r.iteration, r.outcome])).toEqual([
        ['developer', 0, 'recorded'],
        ['qa_expert', 0, 'recorded'],
        ['developer', 1, 'recorded'],
        ['tech_lead', 1, 'recorded'],
      ]);
      expect(recs[3]?.prompt_tokens).toBe(Math.floor((Array.from(tl.prompt).length / 3.85) * 1.02));
      const delivered = JSON.parse(recs[1]?.detail as string).delivered as number[];
      const consumed = (db.prepare("SELECT package_id FROM consumption_scope WHERE agent_type = 'qa_expert' AND iteration = 0 ORDER BY package_id").all() as { package_id: number }[]).map((r) => r.package_id);
      expect([...delivered].sort((a, b) => a - b)).toEqual(consumed);
    } finally {
      db.close();
    }
  });

  it('a group without specializations: the section ends at the skills checklist', () => {
    writeParams('developer', 'CART');
    const dev = spawnPrompt('developer', 'CART');
    onlyContextChanged(dev.builder, dev.prompt, '## Skills Checklist\n');
  });

  it('QA again with byte-identical params after a new package: a new assembly shows it; a rebuild with nothing new gets the same block', () => {
    const params = fs.readFileSync(P(paramsOf('qa_expert', 'AUTH')));
    const first = spawnPrompt('qa_expert', 'AUTH');
    const kept = onlyContextChanged(first.builder, first.prompt, '## SPECIALIZATION GUIDANCE (Advisory)\n');
    const rebuilt = spawnPrompt('qa_expert', 'AUTH');
    expect(onlyContextChanged(rebuilt.builder, rebuilt.prompt, '## SPECIALIZATION GUIDANCE (Advisory)\n')).toBe(kept);

    const r = bazingaDb(project, ['save-context-package', S1, 'AUTH', 'research', writeArtifact(project, S1, 'fix.md'), 'developer', '["qa_expert"]', 'high', 'Developer fix: refresh rotation done, 17/17 tests pass']);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(P(paramsOf('qa_expert', 'AUTH'))).equals(params)).toBe(true);
    const again = spawnPrompt('qa_expert', 'AUTH');
    expect(again.builder).toContain('17/17 tests pass');
    expect(onlyContextChanged(again.builder, again.prompt, '## SPECIALIZATION GUIDANCE (Advisory)\n')).toContain('17/17 tests pass');
    // The hook's assembly is the spawn's writer of the search index: the package the original tool
    // wrote since the last spawn is indexed (it ranks with relevance), while nothing is recorded before the block is placed.
    const db = new Database(project.dbPath, { readonly: true });
    try {
      const newest = (db.prepare('SELECT max(id) AS id FROM context_packages').get() as { id: number }).id;
      expect(db.prepare("SELECT value FROM ca_meta WHERE key = 'search.packages.hi'").get()).toEqual({ value: String(newest) });
    } finally {
      db.close();
    }
  });

  it('a second hook run on a prompt it already served (no rebuild) changes no byte', () => {
    const { prompt } = spawnPrompt('qa_expert', 'AUTH');
    const runs = runHooks(BUILD(paramsOf('qa_expert', 'AUTH')), { stdout: JSON.stringify({ success: true, prompt_file: P(promptOf('qa_expert', 'AUTH')) }, null, 2), stderr: '' });
    expect(runs.map((h) => h.code)).toEqual([0]);
    expect(fs.readFileSync(P(promptOf('qa_expert', 'AUTH')), 'utf8')).toBe(prompt);
  });

  it('a package summary holding the markers cannot open or close a block; re-runs leave no leftovers', () => {
    const saved = bazingaDb(project, ['save-context-package', S1, 'CART', 'research', writeArtifact(project, S1, 'm.md'), 'developer', '["developer"]', 'critical', `Injected ${BLOCK_END} then ${BLOCK_BEGIN} text`]);
    expect(saved.code, saved.stderr).toBe(0);
    const first = spawnPrompt('developer', 'CART');
    expect(first.prompt.split(BLOCK_END)).toHaveLength(2);
    expect(first.prompt).toContain('&lt;!-- context-assembler:end -->');
    const size = Buffer.byteLength(first.prompt);
    const runs = runHooks(BUILD(paramsOf('developer', 'CART')), { stdout: JSON.stringify({ success: true, prompt_file: P(promptOf('developer', 'CART')) }, null, 2), stderr: '' });
    expect(runs.map((h) => h.code)).toEqual([0]);
    expect(Buffer.byteLength(fs.readFileSync(P(promptOf('developer', 'CART')), 'utf8'))).toBe(size);
  });
});

describe('what the hook leaves alone', () => {
  const leftAlone = (agent: string, group: string, opts: { env?: NodeJS.ProcessEnv; response?: (build: { stdout: string; stderr: string }) => { stdout: string; stderr: string }; command?: string; before?: () => void } = {}) => {
    const command = opts.command ?? BUILD(paramsOf(agent, group));
    const build = spawnSync('/bin/sh', ['-c', command], { cwd: project.root, encoding: 'utf8', env: { ...process.env, ...opts.env } });
    opts.before?.();
    const file = P(promptOf(agent, group));
    expect(fs.existsSync(file), file).toBe(true);
    const before = fs.readFileSync(file);
    const hooks = runHooks(command, opts.response ? opts.response(build) : { stdout: build.stdout, stderr: build.stderr }, { env: opts.env });
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    return hooks;
  };

  it("a project manager's spawn, silently", () => {
    writeParams('project_manager', 'global', { pm_state: '{}' });
    expect(leftAlone('project_manager', 'global').map((h) => [h.code, h.stderr, h.stdout])).toEqual([[0, '', '']]);
  });

  it('a failed build (success false), with the reason', () => {
    writeParams('developer', 'CART');
    const hooks = leftAlone('developer', 'CART', { response: () => ({ stdout: JSON.stringify({ success: false, error: 'Agent file not found', prompt_file: null }, null, 2), stderr: '' }) });
    expect(hooks[0]?.stderr).toBe('⚠ context-assembler: prompt left as the builder wrote it (the prompt builder reported failure: Agent file not found)\n');
  });

  it("an agent no package names (the investigator) gets the builder's packages in the block: a consumer list hides nothing", () => {
    writeParams('investigator', 'AUTH');
    const { builder, prompt, hooks } = spawnPrompt('investigator', 'AUTH');
    expect(builder).toContain('### Relevant Context');
    expect(hooks.map((h) => [h.code, h.stderr])).toEqual([[0, '']]);
    const block = prompt.slice(prompt.indexOf(BLOCK_BEGIN), prompt.indexOf(BLOCK_END));
    // Every package line of the builder's section is in the block (by its path), none named as left out.
    const paths = [...builder.matchAll(/^\*\*\[[A-Z]+\]\*\* (\S+)$/gm)].map((m) => m[1] as string);
    expect(paths.length).toBeGreaterThan(0);
    for (const p of paths) expect(block).toContain(`${p} (id `);
    // (The fixture's patterns are past their TTL at today's date: those the block names, as stale.)
    expect(block, block).not.toMatch(/Also in BAZINGA's own (?:context section, not shown here|section): [^\n]*package/);
  });

  it('a prompt it cannot place is left before anything is assembled: nothing recorded as delivered', () => {
    writeParams('tech_lead', 'CART');
    const before = consumption();
    const hooks = leftAlone('tech_lead', 'CART', {
      before: () => fs.writeFileSync(P(promptOf('tech_lead', 'CART')), `${BLOCK_BEGIN}\nsomeone else's\n${BLOCK_END}\n\n` + fs.readFileSync(P(promptOf('tech_lead', 'CART')), 'utf8')),
    });
    expect(hooks[0]?.stderr).toContain('the prompt opens with a block this hook did not make');
    expect(consumption()).toBe(before);
  });

  it("a prompt the block would take past the builder's file-read budget stays as built, nothing recorded", () => {
    writeParams('tech_lead', 'CART');
    // A budget of 92 tokens (the stand-in, unlike the builder, does not trim to it): any block passes it.
    const env = { BAZINGA_PROMPT_FILE_LIMIT: '100' };
    const recorded = consumption('tech_lead');
    const hooks = leftAlone('tech_lead', 'CART', { env });
    expect(hooks[0]?.stderr).toMatch(/prompt would be about \d+ tokens by the builder's estimate, past its file-read budget of 92\)\n$/);
    expect(consumption('tech_lead')).toBe(recorded);
    expect(fs.existsSync(P(`${DIR}/.context-assembler/tech_lead_CART.md.json`))).toBe(false);
    // On record: the agent got the builder's prompt, and why.
    const db = new Database(project.dbPath, { readonly: true });
    try {
      const last = db.prepare("SELECT agent_type, group_id, outcome, reason, prompt_tokens, detail FROM ca_assemblies WHERE source = 'prompt-hook' ORDER BY id DESC LIMIT 1").get() as Record<string, unknown>;
      expect(last).toMatchObject({ agent_type: 'tech_lead', group_id: 'CART', outcome: 'left', reason: expect.stringContaining('past its file-read budget of 92') });
      expect(last.prompt_tokens as number).toBeGreaterThan(92);
      expect(JSON.parse(last.detail as string)).toMatchObject({ delivered: [], shown: [] });
      expect(last.prompt_tokens).not.toBeNull();
    } finally {
      db.close();
    }
  });

  it('a project reached through a symbolic link (CLAUDE_PROJECT_DIR) is served', () => {
    const link = `${project.root}-link`;
    fs.symlinkSync(project.root, link);
    try {
      writeParams('developer', 'CART');
      const { builder, prompt } = spawnPrompt('developer', 'CART', { env: { CLAUDE_PROJECT_DIR: link } });
      onlyContextChanged(builder, prompt, '## Skills Checklist\n');
    } finally {
      fs.rmSync(link);
    }
  });

  it('one command building two prompts: both as built', () => {
    writeParams('qa_expert', 'CART');
    const both = `${BUILD(paramsOf('developer', 'CART'))} && ${BUILD(paramsOf('qa_expert', 'CART'))}`;
    const before = fs.readFileSync(P(promptOf('developer', 'CART')));
    const hooks = leftAlone('qa_expert', 'CART', { command: both });
    expect(hooks[0]?.stderr).toContain('runs the prompt builder 2 times');
    expect(fs.readFileSync(P(promptOf('developer', 'CART'))).toString().startsWith('## Context from Prior Work\n')).toBe(true);
    expect(before.length).toBeGreaterThan(0);
  });

  it('an unknown session in the params file: the builder\'s section stays', () => {
    fs.writeFileSync(P(`${DIR}/params_developer_GHOST.json`), JSON.stringify({ agent_type: 'developer', session_id: 'no_such_session', group_id: 'GHOST', output_file: `${DIR}/developer_GHOST.md` }));
    fs.writeFileSync(P(`${DIR}/developer_GHOST.md`), '## Context from Prior Work\n\n### Relevant Context\n\nx\n\n## Skills Checklist\n\n- a\n');
    const command = BUILD(`${DIR}/params_developer_GHOST.json`);
    const before = fs.readFileSync(P(`${DIR}/developer_GHOST.md`));
    const hooks = runHooks(command, { stdout: JSON.stringify({ success: true, prompt_file: P(`${DIR}/developer_GHOST.md`) }, null, 2), stderr: '' });
    expect(hooks[0]?.stderr).toContain("session 'no_such_session' is not in");
    expect(fs.readFileSync(P(`${DIR}/developer_GHOST.md`)).equals(before)).toBe(true);
  });

  it('a prompt that is a symbolic link, and a kept-block folder that is one: never followed', () => {
    writeParams('investigator', 'CART');
    const outside = path.join(project.root, '..', `outside-${path.basename(project.root)}.md`);
    const hooks = leftAlone('investigator', 'CART', {
      before: () => {
        fs.renameSync(P(promptOf('investigator', 'CART')), outside);
        fs.symlinkSync(outside, P(promptOf('investigator', 'CART')));
      },
    });
    expect(hooks[0]?.stderr).toContain('is a symbolic link');
    expect(fs.lstatSync(P(promptOf('investigator', 'CART'))).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(outside, 'utf8').startsWith('## Context from Prior Work\n')).toBe(true);
    fs.rmSync(outside);
    fs.rmSync(P(promptOf('investigator', 'CART')));

    const sub = P(`bazinga/prompts/linked`);
    fs.mkdirSync(sub, { recursive: true });
    const away = fs.mkdtempSync(path.join(path.dirname(project.root), 'away-'));
    fs.symlinkSync(away, path.join(sub, '.context-assembler'));
    fs.writeFileSync(P('bazinga/prompts/linked/params.json'), JSON.stringify({ agent_type: 'developer', session_id: S1, group_id: 'CART', output_file: 'bazinga/prompts/linked/developer_CART.md' }));
    fs.writeFileSync(P('bazinga/prompts/linked/developer_CART.md'), '## Skills Checklist\n');
    const runs = runHooks(BUILD('bazinga/prompts/linked/params.json'), { stdout: JSON.stringify({ success: true, prompt_file: P('bazinga/prompts/linked/developer_CART.md') }, null, 2), stderr: '' });
    expect(runs[0]?.stderr).toContain('.context-assembler is a symbolic link');
    expect(fs.readdirSync(away)).toEqual([]);
    fs.rmSync(away, { recursive: true });
  });

  it('a params file that is a symbolic link out of the project: not followed', () => {
    const away = path.join(path.dirname(project.root), `params-away-${path.basename(project.root)}.json`);
    fs.writeFileSync(away, JSON.stringify({ agent_type: 'developer', session_id: S1, group_id: 'CART', output_file: promptOf('developer', 'CART') }));
    fs.symlinkSync(away, P(`${DIR}/params_linked.json`));
    const before = fs.readFileSync(P(promptOf('developer', 'CART')));
    const runs = runHooks(BUILD(`${DIR}/params_linked.json`), { stdout: JSON.stringify({ success: true, prompt_file: P(promptOf('developer', 'CART')) }, null, 2), stderr: '' });
    expect(runs[0]?.stderr).toContain(`the params file ${P(`${DIR}/params_linked.json`)} is a symbolic link`);
    expect(fs.readFileSync(P(promptOf('developer', 'CART'))).equals(before)).toBe(true);
    fs.rmSync(away);
    fs.rmSync(P(`${DIR}/params_linked.json`));
  });

  it('any other Bash call: the shell test decides before Node starts (no node on the PATH is never noticed)', () => {
    // A PATH with the shell's `cat` and no node.
    const bin = fs.mkdtempSync(path.join(path.dirname(project.root), 'bin-'));
    fs.symlinkSync(spawnSync('/bin/sh', ['-c', 'command -v cat'], { encoding: 'utf8' }).stdout.trim(), path.join(bin, 'cat'));
    const noNode = { PATH: bin };
    expect(spawnSync('/bin/sh', ['-c', 'command -v node'], { env: noNode }).status).not.toBe(0);
    const other = runHooks('echo prompt_builder_py is not here', { stdout: 'x\n', stderr: '' }, { env: noNode });
    // The `if` rule already keeps the hook from running; the shell test alone, too:
    expect(other).toEqual([]);
    const direct = spawnSync('/bin/sh', ['-c', WIRED_HOOK_COMMAND], { input: JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'git status' } }), encoding: 'utf8', env: noNode });
    expect([direct.status, direct.stderr]).toEqual([0, '']);
    const builder = spawnSync('/bin/sh', ['-c', WIRED_HOOK_COMMAND], { input: JSON.stringify({ tool_name: 'Bash', tool_input: { command: BUILD('x') } }), encoding: 'utf8', env: noNode });
    expect(builder.stderr).toMatch(/node: (?:not found|command not found)/);
    fs.rmSync(bin, { recursive: true });
  });
});

describe('the plugin\'s hook', () => {
  it("steps aside only for this version's wiring: an earlier version's hook cannot read today's builder", () => {
    const dir = fs.mkdtempSync(path.join(path.dirname(project.root), 'wires-'));
    fs.mkdirSync(path.join(dir, '.claude'));
    const settings = (command: string) => JSON.stringify({ hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command }] }] } });
    fs.writeFileSync(path.join(dir, '.claude', 'settings.json'), settings(EARLIER_WIRED_HOOK_COMMANDS[0] as string));
    expect(projectWiresHook(dir)).toBe(false);
    fs.writeFileSync(path.join(dir, '.claude', 'settings.local.json'), settings(WIRED_HOOK_COMMAND));
    expect(projectWiresHook(dir)).toBe(true);
    fs.rmSync(dir, { recursive: true });
  });

  it('registers the same guarded command and if rule in hooks/hooks.json', () => {
    const hooks = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'hooks', 'hooks.json'), 'utf8'));
    expect(hooks.hooks.PostToolUse).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', if: BUILDER_IF, command: PLUGIN_HOOK_COMMAND, timeout: 60 }] }]);
  });

  it('steps aside where the project\'s wiring serves the spawns: one block, one hook acting', () => {
    writeParams('developer', 'CART');
    const { hooks, prompt, builder } = spawnPrompt('developer', 'CART', { plugin: true });
    expect(hooks.map((h) => [h.code, h.stderr])).toEqual([[0, ''], [0, '']]);
    onlyContextChanged(builder, prompt, '## Skills Checklist\n');
  });

  it('serves a plugin-only project, and is silent in a project without the prompt builder', () => {
    expect(install('--unwire').code).toBe(0);
    const { hooks, prompt, builder } = spawnPrompt('developer', 'CART', { plugin: true });
    expect(hooks.map((h) => [h.code, h.stderr])).toEqual([[0, '']]);
    onlyContextChanged(builder, prompt, '## Skills Checklist\n');

    fs.renameSync(P('.claude/skills/prompt-builder'), P('.claude/skills/prompt-builder.off'));
    try {
      const before = fs.readFileSync(P(promptOf('developer', 'CART')));
      const runs = runHooks(BUILD(paramsOf('developer', 'CART')), { stdout: JSON.stringify({ success: true, prompt_file: P(promptOf('developer', 'CART')) }, null, 2), stderr: '' }, { plugin: true });
      expect(runs.map((h) => [h.code, h.stderr, h.stdout])).toEqual([[0, '', '']]);
      expect(fs.readFileSync(P(promptOf('developer', 'CART'))).equals(before)).toBe(true);
    } finally {
      fs.renameSync(P('.claude/skills/prompt-builder.off'), P('.claude/skills/prompt-builder'));
    }
  });
});

describe('doctor on the integration', () => {
  it('names the flow, the hook and what a dry run on the newest prompt would replace', () => {
    expect(install('--wire', '--no-deps').code).toBe(0);
    spawnSync('/bin/sh', ['-c', BUILD(paramsOf('qa_expert', 'AUTH'))], { cwd: project.root });
    const r = spawnSync(process.execPath, [DOCTOR, 'doctor', '--project-root', project.root, '--format', 'json'], { encoding: 'utf8', env: { ...process.env, HOME: project.root } });
    const rows = Object.fromEntries((JSON.parse(r.stdout).checks as { check: string; status: string; detail: string }[]).map((c) => [c.check, c]));
    expect(rows.flow).toMatchObject({ status: 'ok', detail: "today's BAZINGA: .claude/skills/prompt-builder/scripts/prompt_builder.py builds each spawn's prompt" });
    expect(rows['prompt hook']).toMatchObject({ status: 'ok', detail: "the project's wiring (.claude/settings.json)" });
    expect(rows['prompt dry run']?.status).toBe('ok');
    expect(rows['prompt dry run']?.detail).toMatch(
      /qa_expert_AUTH\.md: would replace the builder's "## Context from Prior Work" section \(bytes 0-\d+, \d+ lines\), up to "## SPECIALIZATION GUIDANCE \(Advisory\)" \(it lists \d+ packages: a block without packages leaves it\); the other \d+ bytes stay as they are, from "## SPECIALIZATION GUIDANCE \(Advisory\)" on \(the builder's ## SPECIALIZATION GUIDANCE \(Advisory\), ## Skills Checklist, ## 🔴 MANDATORY REASONING SAVES, ## Current Task Assignment\)/,
    );
    expect(rows.relevance).toMatchObject({ status: 'ok' });

    // Once the hook served it, the dry run recognises the block it kept.
    spawnPrompt('qa_expert', 'AUTH');
    const served = spawnSync(process.execPath, [DOCTOR, 'doctor', '--project-root', project.root, '--format', 'json'], { encoding: 'utf8', env: { ...process.env, HOME: project.root } });
    const row = (JSON.parse(served.stdout).checks as { check: string; status: string; detail: string }[]).find((c) => c.check === 'prompt dry run');
    expect(row?.status).toBe('ok');
    expect(row?.detail).toMatch(/qa_expert_AUTH\.md: served: it opens with this product's block \(bytes 0-\d+\), the builder's components follow from "## SPECIALIZATION GUIDANCE \(Advisory\)"/);

    // A path is printed as it is, however random its folder's name looks (a session id with a hash).
    const hashed = 'bazinga/prompts/bazinga_1764982800_9f8e7d6c5b4a/qa_expert_AUTH.md';
    fs.mkdirSync(path.dirname(P(hashed)), { recursive: true });
    fs.copyFileSync(P(promptOf('qa_expert', 'AUTH')), P(hashed));
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(P(hashed), later, later);
    const again = spawnSync(process.execPath, [DOCTOR, 'doctor', '--project-root', project.root, '--format', 'json'], { encoding: 'utf8', env: { ...process.env, HOME: project.root } });
    const dry = (JSON.parse(again.stdout).checks as { check: string; status: string; detail: string }[]).find((c) => c.check === 'prompt dry run');
    expect(dry?.detail.startsWith(`${hashed}: `)).toBe(true);
    expect(again.stdout).not.toContain('REDACTED');
  });

  it('warns when the plugin and the wiring both register the hook', () => {
    fs.mkdirSync(P('home/.claude'), { recursive: true });
    fs.writeFileSync(P('home/.claude/settings.json'), JSON.stringify({ enabledPlugins: { 'context-assembler@context-assembler': true } }));
    const r = spawnSync(process.execPath, [DOCTOR, 'doctor', '--project-root', project.root, '--format', 'json'], { encoding: 'utf8', env: { ...process.env, HOME: P('home') } });
    const hook = (JSON.parse(r.stdout).checks as { check: string; status: string; detail: string }[]).find((c) => c.check === 'prompt hook');
    expect(hook).toMatchObject({ status: 'warn' });
    expect(hook?.detail).toContain('registered twice');
  });
});

describe('wiring a settings file', () => {
  /** The settings after --wire then --unwire, for a project whose settings start as `text` (undefined: none). */
  function roundTrip(text: string | undefined, mode = 0o644) {
    const settings = P('.claude/settings.json');
    install('--unwire');
    fs.rmSync(settings, { force: true });
    if (text !== undefined) fs.writeFileSync(settings, text, { mode });
    if (text !== undefined) fs.chmodSync(settings, mode);
    const wire = install('--wire', '--no-deps');
    expect(wire.code, wire.stderr).toBe(0);
    const record = P('.claude/skills/.context-assembler-wiring.json');
    const recordMode = fs.statSync(record).mode & 0o777;
    const unwire = install('--unwire');
    expect(unwire.code, unwire.stderr).toBe(0);
    return { after: fs.existsSync(settings) ? fs.readFileSync(settings, 'utf8') : undefined, recordMode, unwire };
  }

  it.each([
    ['no file', undefined],
    ['{}', '{}'],
    ['an empty hooks object', '{"hooks": {}}'],
    ['an empty PostToolUse list', '{"hooks": {"PostToolUse": []}}'],
    ['odd spacing and no final newline', '{ "hooks" : { "PostToolUse" : [ ] } ,"model":"opus" }'],
    ["the user's settings", USER_SETTINGS],
  ])('--unwire gives back %s byte for byte', (_name, text) => {
    expect(roundTrip(text).after).toBe(text);
  });

  it('the record of a private settings file (it holds the file\'s earlier text) is as private as the file', () => {
    const secret = '{"env": {"ANTHROPIC_API_KEY": "sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}\n';
    const { after, recordMode } = roundTrip(secret, 0o600);
    expect(recordMode).toBe(0o600);
    expect(after).toBe(secret);
    fs.writeFileSync(P('.claude/settings.json'), USER_SETTINGS, { mode: 0o644 });
    fs.chmodSync(P('.claude/settings.json'), 0o644);
  });

  it("an earlier version's wiring (Node on every Bash call) is replaced by --wire and given back by --unwire", () => {
    install('--unwire');
    const earlier = JSON.stringify({ hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: EARLIER_WIRED_HOOK_COMMANDS[0], timeout: 60 }] }] } }, null, 2) + '\n';
    fs.writeFileSync(P('.claude/settings.json'), USER_SETTINGS);
    fs.writeFileSync(P('.claude/skills/.context-assembler-wiring.json'), JSON.stringify({ settings: '.claude/settings.json', existed: true, original: USER_SETTINGS }, null, 2));
    fs.writeFileSync(P('.claude/settings.json'), earlier);
    expect(install('--wire', '--no-deps').code).toBe(0);
    const hooks = JSON.parse(fs.readFileSync(P('.claude/settings.json'), 'utf8')).hooks.PostToolUse;
    expect(hooks).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', if: BUILDER_IF, command: WIRED_HOOK_COMMAND, timeout: 60 }] }]);
    expect(install('--unwire').code).toBe(0);
    expect(fs.readFileSync(P('.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
  });

  it('settings changed since --wire: --unwire takes out only the hook and keeps the rest as it is now', () => {
    fs.writeFileSync(P('.claude/settings.json'), USER_SETTINGS);
    expect(install('--wire', '--no-deps').code).toBe(0);
    const wired = JSON.parse(fs.readFileSync(P('.claude/settings.json'), 'utf8'));
    wired.permissions.allow.push('Bash(npm run lint)');
    fs.writeFileSync(P('.claude/settings.json'), JSON.stringify(wired, null, 2) + '\n');
    const r = install('--unwire');
    expect(r.stdout).toContain('changed since --wire: only the hook');
    const now = JSON.parse(fs.readFileSync(P('.claude/settings.json'), 'utf8'));
    expect(now.permissions.allow).toEqual(['Bash(npm test)', 'Bash(npm run lint)']);
    expect(now.hooks.PostToolUse).toEqual([{ matcher: 'Write', hooks: [{ type: 'command', command: 'echo formatted' }] }]);
    fs.writeFileSync(P('.claude/settings.json'), USER_SETTINGS);
  });

  it('an invalid settings file stops --wire with the reason, changing nothing', () => {
    fs.writeFileSync(P('.claude/settings.json'), '{ "hooks": ');
    const r = install('--wire', '--no-deps');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Cannot wire: .*settings\.json is not valid JSON/);
    expect(fs.readFileSync(P('.claude/settings.json'), 'utf8')).toBe('{ "hooks": ');
    fs.writeFileSync(P('.claude/settings.json'), USER_SETTINGS);
  });
});

describe('relevance where BAZINGA ships it off', () => {
  const SHIPPED = '{\n  "developer": {\n    "lint-check": "mandatory"\n  },\n  "context_engineering": {\n    "enable_context_assembler": true,\n    "enable_fts5": false,\n    "redaction_mode": "pattern_only"\n  }\n}\n';

  it('install turns it on in one line (dry run first), keeps the previous file, and never overrides a user who sets it back', () => {
    fs.writeFileSync(P('bazinga/skills_config.json'), SHIPPED);
    const dry = install('--dry-run', '--no-deps');
    expect(dry.stdout).toContain('Would turn relevance on:\n--- bazinga/skills_config.json\n+++ bazinga/skills_config.json');
    expect(dry.stdout).toContain('-     "enable_fts5": false,\n+     "enable_fts5": true,');
    expect(fs.readFileSync(P('bazinga/skills_config.json'), 'utf8')).toBe(SHIPPED);

    const r = install('--no-deps');
    expect(r.stdout.split('\n').filter((l) => l.startsWith('Relevance:'))).toEqual([
      "Relevance: turned on (bazinga/skills_config.json: context_engineering.enable_fts5 false -> true, BAZINGA's shipped default; previous file kept at bazinga/skills_config.json.before-context-assembler; set it back to false to keep it off, it is not changed again)",
    ]);
    expect(fs.readFileSync(P('bazinga/skills_config.json'), 'utf8')).toBe(SHIPPED.replace('"enable_fts5": false', '"enable_fts5": true'));
    expect(fs.readFileSync(P('bazinga/skills_config.json.before-context-assembler'), 'utf8')).toBe(SHIPPED);

    fs.writeFileSync(P('bazinga/skills_config.json'), SHIPPED);
    const again = install('--no-deps');
    expect(again.stdout).toContain('Relevance: off (bazinga/skills_config.json: context_engineering.enable_fts5 is false, set back after it was turned on; left as you set it)');
    expect(fs.readFileSync(P('bazinga/skills_config.json'), 'utf8')).toBe(SHIPPED);
    const doctor = spawnSync(process.execPath, [DOCTOR, 'doctor', '--project-root', project.root, '--format', 'json'], { encoding: 'utf8' });
    const row = (JSON.parse(doctor.stdout).checks as { check: string; status: string; detail: string; fix: string }[]).find((c) => c.check === 'relevance');
    expect(row).toMatchObject({ status: 'warn', fix: 'set context_engineering.enable_fts5 to true in bazinga/skills_config.json' });
  });

  it("the plugin's first session does the same in a BAZINGA project", () => {
    fs.rmSync(P('bazinga/.context-assembler-relevance.json'));
    fs.writeFileSync(P('bazinga/skills_config.json'), SHIPPED);
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'hooks', 'bootstrap.mjs')], { encoding: 'utf8', env: { ...process.env, CLAUDE_PROJECT_DIR: project.root } });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('context-assembler: Relevance: turned on');
    expect(JSON.parse(fs.readFileSync(P('bazinga/skills_config.json'), 'utf8')).context_engineering.enable_fts5).toBe(true);
  });
});

describe('assemble --params-file', () => {
  const ASSEMBLE = path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'assemble.ts');
  const run = (args: string[]) => runScript(ASSEMBLE, ['--project-root', project.root, '--dry-run', '--format', 'json', '--now', '2025-12-02T12:00:00Z', ...args]);
  const write = (name: string, value: unknown) => {
    const file = P(`bazinga/prompts/${name}`);
    fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  };

  it('takes session, agent, group, model and the task (title, a blank line, requirements) from the file; unknown keys are ignored', () => {
    const r = run(['--params-file', P(writeParams('qa_expert', 'AUTH'))]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.request).toMatchObject({ session: S1, agent: 'qa_expert', group: 'AUTH', model: 'sonnet', task: 'Login flow with refresh tokens\n\nUsers stay logged in; refresh tokens rotate', error: null });
    expect(r.json.query.source).toBe('explicit');
  });

  it('a flag given wins over the file; feedback of a retry is the error text; without --iteration the group\'s revision_count is the iteration', () => {
    const db = spawnSync(process.execPath, ['-e', `const D=require('better-sqlite3');const d=new D(process.argv[1]);d.prepare("UPDATE task_groups SET revision_count=2 WHERE id='AUTH'").run();d.close()`, project.dbPath], { cwd: REPO_ROOT });
    expect(db.status).toBe(0);
    const file = write('retry.json', { agent_type: 'developer', session_id: S1, group_id: 'AUTH', qa_feedback: 'TypeError: token is undefined', tl_feedback: 'rotate on every refresh', future: { nested: true } });
    const r = run(['--params-file', file, '--model', 'opus']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.request).toMatchObject({ agent: 'developer', model: 'opus', iteration: 2, error: 'TypeError: token is undefined\n\nrotate on every refresh' });
    expect(run(['--params-file', file, '--iteration', '0']).json.request.iteration).toBe(0);
    // Feedback means a retry: at least iteration 1, also where the group's count was not raised.
    spawnSync(process.execPath, ['-e', `const D=require('better-sqlite3');const d=new D(process.argv[1]);d.prepare("UPDATE task_groups SET revision_count=0 WHERE id='AUTH'").run();d.close()`, project.dbPath], { cwd: REPO_ROOT });
    expect(run(['--params-file', file]).json.request.iteration).toBe(1);
    const first = write('first.json', { agent_type: 'developer', session_id: S1, group_id: 'AUTH' });
    expect(run(['--params-file', first]).json.request.iteration).toBe(0);
  });

  it.each([
    ['a missing required key', { agent_type: 'qa_expert' }, "'session_id' is required (or pass --session)"],
    ['a value of the wrong type', { agent_type: 'qa_expert', session_id: S1, group_id: 7 }, "'group_id' must be a string, got 7"],
    ['not JSON', '{"agent_type":', 'not valid JSON'],
    ['not an object', '[1, 2]', 'must hold a JSON object'],
  ])('%s: exit 2 with one error line naming the file and the key', (_label, value, message) => {
    const file = write('bad.json', value);
    const r = run(['--params-file', file]);
    expect(r.code).toBe(2);
    expect(r.error).toMatchObject({ success: false, code: 'VALIDATION' });
    expect(r.error.error).toContain(`--params-file ${file}: ${message}`);
  });

  it('a path that is not a regular file is an error at once', () => {
    const r = run(['--params-file', P('bazinga/prompts')]);
    expect(r.code).toBe(2);
    expect(r.error.error).toContain('not a regular file');
  });
});

// Last: it changes the database's record and the group's prompts, which the tests above keep blocks by.
describe('the prompt hook on record', () => {
  it('an assembly that falls back leaves the prompt as built and is on record as a fallback, with why', () => {
    writeParams('qa_expert', 'CART');
    const config = P('bazinga/skills_config.json');
    const original = fs.existsSync(config) ? { bytes: fs.readFileSync(config), stat: fs.statSync(config) } : undefined;
    try {
      // A config the assembler refuses (a CONFIG error): the assembly falls back.
      const command = BUILD(paramsOf('qa_expert', 'CART'));
      const build = spawnSync('/bin/sh', ['-c', command], { cwd: project.root, encoding: 'utf8' });
      fs.writeFileSync(config, '{"context_engineering": {"zone_thresholds": "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"}}');
      const built = fs.readFileSync(P(promptOf('qa_expert', 'CART')));
      // Whichever hook serves the project now (its wiring, or the plugin's where it is unwired).
      const wired = fs.existsSync(P('.claude/settings.json')) && fs.readFileSync(P('.claude/settings.json'), 'utf8').includes('prompt-hook');
      const hooks = runHooks(command, { stdout: build.stdout, stderr: build.stderr }, { plugin: !wired });
      expect(hooks).toHaveLength(1);
      expect(fs.readFileSync(P(promptOf('qa_expert', 'CART'))).equals(built)).toBe(true);
      expect(hooks[0]?.stderr).toMatch(/prompt left as the builder wrote it \(assembly fell back \(/);
      expect(hooks[0]?.stderr).not.toContain('ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8');
    } finally {
      // Put back as it was, its time too (the hook keeps blocks by the config's size and time).
      if (original === undefined) fs.rmSync(config, { force: true });
      else {
        fs.writeFileSync(config, original.bytes);
        fs.utimesSync(config, original.stat.atime, original.stat.mtime);
      }
    }
    const db = new Database(project.dbPath, { readonly: true });
    try {
      const last = db.prepare("SELECT agent_type, group_id, source, outcome, reason FROM ca_assemblies ORDER BY id DESC LIMIT 1").get();
      expect(last).toMatchObject({ agent_type: 'qa_expert', group_id: 'CART', source: 'prompt-hook', outcome: 'fallback', reason: expect.stringContaining('zone_thresholds') });
      expect((last as { reason: string }).reason).not.toContain('ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8');
    } finally {
      db.close();
    }
  });

});
