/**
 * Doctor's checks of the integration with today's BAZINGA: which spawn flow the project uses,
 * which hook serves it (the plugin's or the project's wiring, not both), whether the prompt builder
 * is there, and a dry run of the hook on the newest prompt the builder wrote: what it would replace,
 * and that every other byte would stay as it is.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listQuotableTexts, openReadOnly, readRegularFile, SPAWNED_AGENTS } from '../../../../bazinga-db/scripts/lib/index.ts';
import { EARLIER_WIRED_HOOK_COMMANDS, PROMPT_BUILDER } from './hookCommand.ts';
import { agentOpening, keptBlockOf, projectHookCommands, projectWiresHook, PROMPT_MAX_BYTES } from './promptHook.ts';
import { BLOCK_BEGIN, builderPackageCount, describePlacement, NEXT_COMPONENTS, placeBlock, type QuotedText } from './promptSection.ts';

export interface IntegrationCheck {
  check: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  fix: string;
}

/** Where Claude Code enabled this plugin (user or project settings), if anywhere. */
export function pluginEnabledIn(project: string, env: NodeJS.ProcessEnv): string | undefined {
  const home = env.CLAUDE_CONFIG_DIR || path.join(env.HOME || os.homedir(), '.claude');
  const files = [path.join(home, 'settings.json'), path.join(project, '.claude', 'settings.json'), path.join(project, '.claude', 'settings.local.json')];
  for (const file of files) {
    try {
      const enabled = (JSON.parse(fs.readFileSync(file, 'utf8')) as { enabledPlugins?: Record<string, unknown> }).enabledPlugins ?? {};
      const key = Object.keys(enabled).find((k) => k.startsWith('context-assembler@') && enabled[k] === true);
      if (key) return `${key} enabled in ${file}`;
    } catch {
      // absent or not JSON
    }
  }
  return env.CLAUDE_PLUGIN_ROOT ? `running as the plugin (${env.CLAUDE_PLUGIN_ROOT})` : undefined;
}

/** Whether the project's settings still register an earlier version's hook (Node on every Bash call, and it cannot read today's builder). */
function earlierWiring(project: string): boolean {
  return projectHookCommands(project).some((c) => EARLIER_WIRED_HOOK_COMMANDS.includes(c as string));
}

/** The newest prompt of a spawn this product serves under bazinga/prompts/<session>/ (by modification time), if any. */
function newestPrompt(project: string): string | undefined {
  const base = path.join(project, 'bazinga', 'prompts');
  let best: { file: string; at: number } | undefined;
  let sessions: fs.Dirent[];
  try {
    sessions = fs.readdirSync(base, { withFileTypes: true }).filter((d) => d.isDirectory());
  } catch {
    return undefined;
  }
  for (const s of sessions) {
    for (const f of fs.readdirSync(path.join(base, s.name), { withFileTypes: true })) {
      if (!f.isFile() || !f.name.endsWith('.md') || agentOf(f.name.slice(0, -3)) === undefined) continue;
      const file = path.join(base, s.name, f.name);
      const at = fs.statSync(file).mtimeMs;
      if (!best || at > best.at) best = { file, at };
    }
  }
  return best?.file;
}

/** The checks; `relevanceOn` is the project's enable_fts5 as the assembler reads it (undefined: config not read). */
export function integrationChecks(project: string, dbPath: string, relevanceOn: boolean | undefined, env: NodeJS.ProcessEnv): IntegrationCheck[] {
  const out: IntegrationCheck[] = [];
  const add = (check: string, status: IntegrationCheck['status'], detail: string, fix = '') => out.push({ check, status, detail, fix });
  if (relevanceOn === false) {
    add('relevance', 'warn', 'off: context_engineering.enable_fts5 is false in bazinga/skills_config.json (every query ranks without the task text)', 'set context_engineering.enable_fts5 to true in bazinga/skills_config.json');
  } else if (relevanceOn === true) add('relevance', 'ok', 'on (context_engineering.enable_fts5)');

  const builder = fs.existsSync(path.join(project, PROMPT_BUILDER));
  if (!builder) {
    add('flow', 'ok', `the phase templates call Skill(command: "context-assembler") (no ${PROMPT_BUILDER}): no hook needed`);
    return out;
  }
  add('flow', 'ok', `today's BAZINGA: ${PROMPT_BUILDER} builds each spawn's prompt`);
  const wired = projectWiresHook(project);
  const earlier = earlierWiring(project);
  const plugin = pluginEnabledIn(project, env);
  const rewire = `npm run install-skills -- "${project}" --wire (replaces it), or --unwire where the plugin serves`;
  if (wired && plugin) add('prompt hook', 'warn', `registered twice: the wiring in .claude/settings.json and the plugin (${plugin}); the plugin's steps aside, one is enough`, `npm run install-skills -- "${project}" --unwire (the plugin serves the spawns by itself)`);
  else if (wired) add('prompt hook', 'ok', "the project's wiring (.claude/settings.json)");
  else if (plugin) add('prompt hook', earlier ? 'warn' : 'ok', `the plugin (${plugin})${earlier ? "; an earlier version's wiring in .claude/ settings still runs Node on every Bash call" : ''}`, earlier ? rewire : '');
  else if (earlier) add('prompt hook', 'fail', "an earlier version's wiring: it cannot read today's builder, so no prompt gets the block", rewire);
  else add('prompt hook', 'fail', 'not registered: the prompts the builder writes never get the block', `install the plugin, or npm run install-skills -- "${project}" --wire`);

  const prompt = newestPrompt(project);
  if (prompt === undefined) {
    add('prompt dry run', 'ok', 'no built prompt yet (bazinga/prompts/<session>/*.md): nothing to try');
    return out;
  }
  const read = readRegularFile(prompt, PROMPT_MAX_BYTES);
  if (!read.ok) {
    add('prompt dry run', 'warn', `${prompt} could not be read`);
    return out;
  }
  const bytes = read.bytes;
  let quoted: QuotedText[] = [];
  const session = path.basename(path.dirname(prompt));
  try {
    const db = openReadOnly(dbPath, 1000);
    try {
      quoted = listQuotableTexts(db, session, groupOf(path.basename(prompt, '.md')) ?? 'global');
    } finally {
      db.close();
    }
  } catch {
    // no database: the dry run works on the openings alone
  }
  const keptBlock = keptBlockOf(prompt);
  const agent = agentOf(path.basename(prompt, '.md')) as string;
  const placement = placeBlock(bytes, { earlierBlocks: keptBlock === undefined ? [] : [keptBlock], quoted, agentOpening: agentOpening(project, agent) });
  const rel = path.relative(project, prompt);
  if (placement.kind === 'unknown') {
    add('prompt dry run', 'warn', `${rel}: would change ${describePlacement(bytes, placement)}`, bytes.subarray(0, BLOCK_BEGIN.length).toString() === BLOCK_BEGIN ? 'rebuild the prompt (the builder writes it anew) or remove the block by hand' : '');
    return out;
  }
  if (placement.kind === 'renew') {
    const next = bytes.subarray(placement.end).toString('utf8').split('\n')[0] ?? '';
    add('prompt dry run', 'ok', `${rel}: served: it opens with this product's block (bytes 0-${placement.end}), the builder's components follow from ${JSON.stringify(next)}; a rebuild is served the same way`);
    return out;
  }
  const from = placement.kind === 'insert' ? 0 : placement.end;
  const listed = builderPackageCount(bytes, placement);
  const kept = bytes.subarray(from).toString('utf8');
  const components = NEXT_COMPONENTS.map((c) => c.replace(/^\n/, '')).filter((c) => kept.startsWith(c) || kept.includes(`\n\n${c}`)).map((c) => c.split('\n').find((l) => l.startsWith('## ')) ?? c);
  add(
    'prompt dry run',
    'ok',
    `${rel}: would replace ${describePlacement(bytes, placement)}${listed > 0 ? ` (it lists ${listed} package${listed === 1 ? '' : 's'}: a block without packages leaves it)` : ''}; the other ${bytes.length - from} bytes stay as they are, from ${JSON.stringify(firstLineAt(bytes, from))} on${components.length > 0 ? ` (the builder's ${components.join(', ')})` : ''}`,
  );
  return out;
}

const firstLineAt = (bytes: Buffer, at: number) => bytes.subarray(at, at + 200).toString('utf8').replace(/^\n+/, '').split('\n')[0] ?? '';

/** Agent types this product assembles for, longest first (they hold underscores): a prompt is named `<agent>_<group>.md`. */
const AGENTS = [...SPAWNED_AGENTS].sort((a, b) => b.length - a.length);

function agentOf(name: string): string | undefined {
  return AGENTS.find((agent) => name.startsWith(`${agent}_`));
}

/** The group of a prompt named `<agent>_<group>.md`. */
function groupOf(name: string): string | undefined {
  const agent = agentOf(name);
  return agent === undefined ? undefined : name.slice(agent.length + 1);
}
