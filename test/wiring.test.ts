/**
 * Today's BAZINGA spawn flow, end to end in real processes, on a project tree laid out like a real
 * BAZINGA install (made here): `.claude/skills/prompt-builder/scripts/prompt_builder.py` (a
 * stand-in that behaves as ../shared/bazinga-today.md describes: reads the params file and the
 * database, writes the prompt with its own "## Context from Prior Work" section, prints one JSON
 * object), the original's bazinga-db skill, the user's own `.claude/settings.json`, the v19
 * fixture database. install-skills detects the flow and changes nothing without --wire; --dry-run
 * shows the exact edit; --wire registers the hook (idempotent); the hook, run the way Claude Code
 * runs a PostToolUse hook, puts the block in the built prompt once; a failed build is left alone;
 * --unwire restores the settings byte for byte. Also `assemble --params-file` itself.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOCK_BEGIN, BLOCK_END, runPromptHook, withBlock } from '../skills/context-assembler/scripts/lib/promptHook.ts';
import { copyFixture, REPO_ROOT, S1, runScript, type Project } from './helpers.ts';

const BUILDER = `import json, sqlite3, sys
args = sys.argv[1:]
params_path = args[args.index('--params-file') + 1]
try:
    p = json.load(open(params_path))
    out = p['output_file']
    db = sqlite3.connect('bazinga/bazinga.db')
    rows = db.execute('SELECT priority, file_path, summary FROM context_packages WHERE session_id = ? ORDER BY id', (p['session_id'],)).fetchall()
except Exception as e:
    print(json.dumps({"success": False, "prompt_file": None, "tokens_estimate": 0, "lines": 0, "markers_ok": False, "missing_markers": [], "error": str(e)}))
    sys.exit(1)
parts = ['# %s for %s' % (p['agent_type'], p['group_id']), '', p.get('task_title', ''), '']
if rows:
    parts += ['## Context from Prior Work', '', '### Relevant Context']
    for pr, fp, s in rows:
        parts += ['**[%s]** %s' % (pr.upper(), fp), (s or '')[:200]]
    parts += ['']
parts += ['## Skills Checklist', '', '- run the tests', '', '## Your Task', '', p.get('task_requirements', ''), '']
text = '\\n'.join(parts)
open(out, 'w').write(text)
print(json.dumps({"success": True, "prompt_file": out, "tokens_estimate": len(text) // 4, "lines": text.count('\\n'), "markers_ok": True, "missing_markers": [], "error": None}))
`;

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
let project: Project;
const P = (rel: string) => path.join(project.root, rel);
const PARAMS = `bazinga/prompts/${S1}/params_qa_expert_AUTH.json`;
const PROMPT = `bazinga/prompts/${S1}/qa_expert_AUTH.md`;
const BUILD_COMMAND = `python3 .claude/skills/prompt-builder/scripts/prompt_builder.py --params-file "${PARAMS}"`;

function install(...args: string[]) {
  const r = spawnSync(process.execPath, [INSTALL, project.root, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The orchestrator's Bash call of the prompt builder, then every PostToolUse hook on Bash of .claude/settings.json, as Claude Code runs them. */
function buildAndHook(command = BUILD_COMMAND) {
  const build = spawnSync('sh', ['-c', command], { cwd: project.root, encoding: 'utf8' });
  const settings = JSON.parse(fs.readFileSync(P('.claude/settings.json'), 'utf8'));
  const event = {
    session_id: 'cc-session',
    hook_event_name: 'PostToolUse',
    cwd: project.root,
    tool_name: 'Bash',
    tool_input: { command, description: 'Build the agent prompt' },
    tool_response: { stdout: build.stdout, stderr: build.stderr, interrupted: false, isImage: false },
  };
  const hooks: { code: number | null; stdout: string; stderr: string }[] = [];
  for (const entry of settings.hooks?.PostToolUse ?? []) {
    if (entry.matcher !== undefined && !new RegExp(`^(?:${entry.matcher})$`).test('Bash')) continue;
    for (const h of entry.hooks) {
      const r = spawnSync('sh', ['-c', h.command], {
        cwd: project.root,
        input: JSON.stringify(event),
        encoding: 'utf8',
        env: { ...process.env, CLAUDE_PROJECT_DIR: project.root },
      });
      hooks.push({ code: r.status, stdout: r.stdout, stderr: r.stderr });
    }
  }
  return { build, hooks };
}

beforeAll(() => {
  project = copyFixture('ca-wiring-');
  fs.mkdirSync(P('.claude/skills/prompt-builder/scripts'), { recursive: true });
  fs.writeFileSync(P('.claude/skills/prompt-builder/scripts/prompt_builder.py'), BUILDER);
  fs.writeFileSync(P('.claude/skills/prompt-builder/SKILL.md'), '---\nname: prompt-builder\ndescription: builds agent prompts\n---\n');
  fs.mkdirSync(P('.claude/skills/bazinga-db/scripts'), { recursive: true });
  fs.writeFileSync(P('.claude/skills/bazinga-db/scripts/bazinga_db.py'), '# the original tool\n');
  fs.writeFileSync(P('.claude/settings.json'), USER_SETTINGS);
  fs.mkdirSync(P(`bazinga/prompts/${S1}`), { recursive: true });
  fs.writeFileSync(
    P(PARAMS),
    JSON.stringify({
      agent_type: 'qa_expert', session_id: S1, group_id: 'AUTH', task_title: 'Login flow with refresh tokens', task_requirements: 'Users stay logged in; refresh tokens rotate',
      branch: 'feature/auth', mode: 'parallel', testing_mode: 'full', model: 'sonnet', output_file: PROMPT,
    }),
  );
});
afterAll(() => project.cleanup());

describe('install-skills and the prompt-builder flow', () => {
  it('detects the flow; without --wire nothing outside the skills changes, and it says how to wire', () => {
    const r = install('--no-deps');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Flow: today's BAZINGA (.claude/skills/prompt-builder/scripts/prompt_builder.py builds each prompt): its prompts do not reach this product yet. Run again with --wire");
    expect(fs.readFileSync(P('.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
    expect(fs.readFileSync(P('.claude/skills/bazinga-db/scripts/bazinga_db.py'), 'utf8')).toBe('# the original tool\n');
    // The installed skills resolve their dependencies from .claude/skills/node_modules (--no-deps: linked here).
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), P('.claude/skills/node_modules'), 'dir');
  });

  it('--wire --dry-run shows the exact edit and changes nothing', () => {
    const r = install('--wire', '--dry-run', '--no-deps');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Wiring: would edit .claude/settings.json:');
    expect(r.stdout.split('\n').some((l) => l.startsWith('+ ') && l.includes('"command": "node \\"$CLAUDE_PROJECT_DIR/.claude/skills/context-assembler/bin/context-assembler.cjs\\" prompt-hook"'))).toBe(true);
    expect(r.stdout).toContain('--wire would make the edit above.');
    expect(fs.readFileSync(P('.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
    expect(fs.existsSync(P('.claude/skills/.context-assembler-wiring.json'))).toBe(false);
  });

  it('before wiring, the built prompt is the builder\'s alone', () => {
    const { build, hooks } = buildAndHook();
    expect(build.status, build.stderr).toBe(0);
    expect(hooks).toHaveLength(0); // the user's own Write hook does not match Bash
    const prompt = fs.readFileSync(P(PROMPT), 'utf8');
    expect(prompt).toContain('## Context from Prior Work');
    expect(prompt).not.toContain(BLOCK_BEGIN);
  });

  it('--wire registers the hook beside the user\'s settings; a second --wire changes nothing', () => {
    const r = install('--wire', '--no-deps');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Wired: .claude/settings.json has a PostToolUse hook on Bash');
    const settings = JSON.parse(fs.readFileSync(P('.claude/settings.json'), 'utf8'));
    expect(settings.permissions).toEqual({ allow: ['Bash(npm test)'] });
    expect(settings.hooks.PostToolUse).toHaveLength(2);
    expect(settings.hooks.PostToolUse[0].matcher).toBe('Write');
    const again = fs.readFileSync(P('.claude/settings.json'));
    const second = install('--wire', '--no-deps');
    expect(second.stdout).toContain('Wiring: already wired; nothing changed.');
    expect(fs.readFileSync(P('.claude/settings.json')).equals(again)).toBe(true);
  });

  it("each built prompt carries the block once, in place of the builder's context section; a rebuilt prompt is not doubled and gets the same block", () => {
    const blocks: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { build, hooks } = buildAndHook();
      expect(build.status, build.stderr).toBe(0);
      const ours = hooks.find((h) => h.stderr.includes('context-assembler') || h.code === 0) as { code: number | null; stderr: string };
      expect(ours.code).toBe(0);
      const prompt = fs.readFileSync(P(PROMPT), 'utf8');
      expect(prompt.split(BLOCK_BEGIN)).toHaveLength(2);
      expect(prompt.split(BLOCK_END)).toHaveLength(2);
      expect(prompt).not.toContain('## Context from Prior Work');
      expect(prompt).toMatch(new RegExp(`${BLOCK_BEGIN}\\n## Context for qa_expert\\n`));
      // The builder's other sections stay, in their order.
      expect(prompt.indexOf(BLOCK_END)).toBeLessThan(prompt.indexOf('## Skills Checklist'));
      expect(prompt).toContain('## Your Task\n\nUsers stay logged in; refresh tokens rotate');
      blocks.push(prompt.slice(prompt.indexOf(BLOCK_BEGIN), prompt.indexOf(BLOCK_END)));
    }
    // The rebuild of the same spawn (same params) gets the block made for it, packages and all:
    // a new assembly would find them consumed at this iteration.
    expect(blocks[0]).toMatch(/### Relevant Packages \([1-9]/);
    expect(blocks[1]).toBe(blocks[0]);
  });

  it('one command building two prompts: each gets its own block or none, never the other spawn\'s', () => {
    const dev = `bazinga/prompts/${S1}/params_developer_AUTH.json`;
    fs.writeFileSync(P(dev), JSON.stringify({ agent_type: 'developer', session_id: S1, group_id: 'AUTH', task_title: 't', task_requirements: 'r', output_file: `bazinga/prompts/${S1}/developer_AUTH.md` }));
    const both = `${BUILD_COMMAND} && python3 .claude/skills/prompt-builder/scripts/prompt_builder.py --params-file "${dev}"`;
    const { hooks } = buildAndHook(both);
    expect(hooks.every((h) => h.code === 0)).toBe(true);
    const devPrompt = fs.readFileSync(P(`bazinga/prompts/${S1}/developer_AUTH.md`), 'utf8');
    expect(devPrompt).not.toContain('## Context for qa_expert');
    expect(hooks.some((h) => h.stderr.includes('is not the output_file of'))).toBe(true);
  });

  it("a project manager's spawn (not an agent this product assembles for) is left alone, silently", () => {
    const pm = `bazinga/prompts/${S1}/params_project_manager_global.json`;
    const out = `bazinga/prompts/${S1}/project_manager_global.md`;
    fs.writeFileSync(P(pm), JSON.stringify({ agent_type: 'project_manager', session_id: S1, group_id: 'global', task_title: 'plan', output_file: out, pm_state: '{}' }));
    const { build, hooks } = buildAndHook(`python3 .claude/skills/prompt-builder/scripts/prompt_builder.py --params-file "${pm}"`);
    expect(build.status).toBe(0);
    expect(hooks.every((h) => h.code === 0 && h.stderr === '' && h.stdout === '')).toBe(true);
    expect(fs.readFileSync(P(out), 'utf8')).not.toContain(BLOCK_BEGIN);
  });

  it('the section ends at the builder\'s next section, not at a heading quoted in a reasoning entry or in code', () => {
    const prompt = [
      '# qa', '', '## Context from Prior Work', '', '### Prior Agent Reasoning', '**[developer] approach:**', '## Approach', 'use jose',
      '```md', '## Not a heading', '```', '### Known Error Patterns', 'x', '', '## Skills Checklist', '', '- a', '',
    ].join('\n');
    const { text, done } = withBlock(prompt, '## Context for qa_expert\n\nours\n');
    expect(done).toBe('replaced');
    expect(text).toBe(['# qa', '', BLOCK_BEGIN, '## Context for qa_expert', '', 'ours', BLOCK_END, '', '## Skills Checklist', '', '- a', ''].join('\n'));
  });

  it('a second hook run on the same built prompt renews the block between the markers instead of adding one', () => {
    const built = '# qa\n\n## Context from Prior Work\n\nbuilder\n\n## Skills Checklist\n\n- a\n';
    const prompt = withBlock(built, '## Context for qa_expert\n\nfirst\n').text;
    const { text, done } = withBlock(prompt, '## Context for qa_expert\n\nnewer\n');
    expect(done).toBe('renewed');
    expect(text.split(BLOCK_BEGIN)).toHaveLength(2);
    expect(text).toContain(`${BLOCK_BEGIN}\n## Context for qa_expert\n\nnewer\n${BLOCK_END}\n`);
    expect(text.slice(text.indexOf(BLOCK_END))).toBe(prompt.slice(prompt.indexOf(BLOCK_END)));
  });

  it('a params path that is a FIFO is not read: the prompt is left as it is, at once', () => {
    const fifo = P(`bazinga/prompts/${S1}/params_fifo.json`);
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const before = fs.readFileSync(P(PROMPT));
    const warned: string[] = [];
    const outcome = runPromptHook({
      stdin: JSON.stringify({
        tool_name: 'Bash',
        cwd: project.root,
        tool_input: { command: `python3 .claude/skills/prompt-builder/scripts/prompt_builder.py --params-file "${fifo}"` },
        tool_response: { stdout: JSON.stringify({ success: true, prompt_file: PROMPT }) },
      }),
      env: { CLAUDE_PROJECT_DIR: project.root },
      cwd: project.root,
      stderr: (t) => warned.push(t),
      now: () => new Date('2025-12-02T12:00:00Z'),
    });
    expect(outcome).toMatchObject({ done: 'left', why: `${fifo} is a FIFO, not a regular file` });
    expect(warned).toEqual([`⚠ context-assembler: prompt left as the builder wrote it (${fifo} is a FIFO, not a regular file)\n`]);
    expect(fs.readFileSync(P(PROMPT)).equals(before)).toBe(true);
    fs.rmSync(fifo);
  });

  it('a failed build, and any other Bash command, leave the prompt as it is', () => {
    const before = fs.readFileSync(P(PROMPT));
    const failed = buildAndHook(`python3 .claude/skills/prompt-builder/scripts/prompt_builder.py --params-file "bazinga/prompts/${S1}/missing.json"`);
    expect(failed.build.status).toBe(1);
    expect(failed.hooks.every((h) => h.code === 0)).toBe(true);
    expect(failed.hooks.some((h) => h.stderr.includes('prompt left as the builder wrote it (the prompt builder did not report success)'))).toBe(true);
    const other = buildAndHook('ls bazinga');
    expect(other.hooks.every((h) => h.code === 0 && h.stderr === '' && h.stdout === '')).toBe(true);
    expect(fs.readFileSync(P(PROMPT)).equals(before)).toBe(true);
  });

  it('--unwire --dry-run shows the edit; --unwire restores the settings byte for byte; a second --unwire has nothing to do', () => {
    const dry = install('--unwire', '--dry-run');
    expect(dry.stdout).toContain('Would write .claude/settings.json (as it was before --wire):');
    expect(fs.readFileSync(P('.claude/settings.json'), 'utf8')).not.toBe(USER_SETTINGS);
    const r = install('--unwire');
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(P('.claude/settings.json'), 'utf8')).toBe(USER_SETTINGS);
    expect(fs.existsSync(P('.claude/skills/.context-assembler-wiring.json'))).toBe(false);
    expect(install('--unwire').stdout).toBe('Not wired: nothing to change.\n');
  });

  it('wired into a project without settings, --unwire removes the file it created', () => {
    const settings = P('.claude/settings.json');
    fs.rmSync(settings);
    expect(install('--wire', '--no-deps').code).toBe(0);
    expect(JSON.parse(fs.readFileSync(settings, 'utf8')).hooks.PostToolUse).toHaveLength(1);
    expect(install('--unwire').code).toBe(0);
    expect(fs.existsSync(settings)).toBe(false);
    fs.writeFileSync(settings, USER_SETTINGS);
  });

  it('settings changed since --wire: --unwire takes out only its entry and keeps the rest as it is now', () => {
    expect(install('--wire', '--no-deps').code).toBe(0);
    const wired = JSON.parse(fs.readFileSync(P('.claude/settings.json'), 'utf8'));
    wired.permissions.allow.push('Bash(npm run lint)');
    fs.writeFileSync(P('.claude/settings.json'), JSON.stringify(wired, null, 2) + '\n');
    const r = install('--unwire');
    expect(r.stdout).toContain('changed since --wire: only the hook');
    const now = JSON.parse(fs.readFileSync(P('.claude/settings.json'), 'utf8'));
    expect(now.permissions.allow).toEqual(['Bash(npm test)', 'Bash(npm run lint)']);
    expect(now.hooks.PostToolUse).toEqual([{ matcher: 'Write', hooks: [{ type: 'command', command: 'echo formatted' }] }]);
  });

  it('a settings file that is a link to a private file: written where it points, the link and the mode kept, restored byte for byte', () => {
    const real = P('dotfiles-settings.json');
    fs.writeFileSync(real, USER_SETTINGS, { mode: 0o600 });
    fs.chmodSync(real, 0o600);
    fs.rmSync(P('.claude/settings.json'));
    fs.symlinkSync(real, P('.claude/settings.json'));
    expect(install('--wire', '--no-deps').code).toBe(0);
    expect(fs.lstatSync(P('.claude/settings.json')).isSymbolicLink()).toBe(true);
    expect(JSON.parse(fs.readFileSync(real, 'utf8')).hooks.PostToolUse).toHaveLength(2);
    expect(fs.statSync(real).mode & 0o777).toBe(0o600);
    expect(install('--unwire').code).toBe(0);
    expect(fs.lstatSync(P('.claude/settings.json')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(real, 'utf8')).toBe(USER_SETTINGS);
    expect(fs.statSync(real).mode & 0o777).toBe(0o600);
    fs.rmSync(P('.claude/settings.json'));
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

describe('assemble --params-file', () => {
  const ASSEMBLE = path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'assemble.ts');
  const run = (args: string[]) => runScript(ASSEMBLE, ['--project-root', project.root, '--dry-run', '--format', 'json', '--now', '2025-12-02T12:00:00Z', ...args]);
  const write = (name: string, value: unknown) => {
    const file = P(`bazinga/prompts/${name}`);
    fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  };

  it('takes session, agent, group, model and the task (title, a blank line, requirements) from the file; unknown keys are ignored', () => {
    const r = run(['--params-file', P(PARAMS)]);
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
