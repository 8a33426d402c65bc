/**
 * Plugin packaging: the Claude Code plugin manifest and marketplace entry, the skills' SKILL.md
 * frontmatter and bodies (checked by `checkSkill`, itself proven to reject bad input), the
 * SessionStart hook, the `.claude/skills/*` links and the package.json `bin` launchers (each run
 * as a real process with `--help`).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT } from './helpers.ts';

const readJson = (rel: string): any => JSON.parse(fs.readFileSync(path.join(REPO_ROOT, rel), 'utf8'));

/** semver.org's regular expression for a version (no leading `v`). */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

// ---------------------------------------------------------------------------------------------
// The SKILL.md checker
// ---------------------------------------------------------------------------------------------

const KNOWN_KEYS = new Set([
  'name',
  'description',
  'license',
  'allowed-tools',
  'metadata',
  'compatibility',
  'argument-hint',
  'disable-model-invocation',
  'user-invocable',
  'model',
  'context',
  'agent',
  'hooks',
  'paths',
]);
const NAME_RE = /^[a-z0-9-]{1,64}$/;

export interface SkillInput {
  /** The skill's folder name (the last path segment). */
  folder: string;
  /** The full text of SKILL.md. */
  text: string;
  /** Whether a path relative to the skill folder names an existing file (links, ${CLAUDE_SKILL_DIR}/…). */
  skillFileExists: (rel: string) => boolean;
  /** Whether a path relative to the plugin root names an existing file (${CLAUDE_PLUGIN_ROOT}/…). */
  pluginFileExists: (rel: string) => boolean;
}

/** Splits `---\n<yaml>\n---\n<body>`; undefined when the text does not open with a frontmatter block. */
function splitFrontmatter(text: string): { yaml: string; body: string } | undefined {
  const m = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  return m ? { yaml: m[1] ?? '', body: text.slice(m[0].length) } : undefined;
}

/** The contents of the fenced code blocks of a markdown body. */
function codeBlocks(body: string): string[] {
  return [...body.matchAll(/^[ \t]*(```|~~~)[^\n]*\n([\s\S]*?)^[ \t]*\1[ \t]*$/gm)].map((m) => m[2] ?? '');
}

/** The markdown body without fenced code blocks and inline code spans (where `[x](y)` is no link). */
function prose(body: string): string {
  return body.replace(/^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?^[ \t]*\1[ \t]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Every problem of a SKILL.md; empty when it is valid. */
export function checkSkill(input: SkillInput): string[] {
  const problems: string[] = [];
  const parts = splitFrontmatter(input.text);
  if (!parts) return ['missing frontmatter: SKILL.md must open with a --- … --- YAML block'];
  let fm: unknown;
  try {
    fm = parseYaml(parts.yaml);
  } catch (err) {
    return [`frontmatter is not valid YAML: ${(err as Error).message.split('\n')[0]}`];
  }
  if (fm === null || typeof fm !== 'object' || Array.isArray(fm)) return ['frontmatter is not a YAML mapping'];
  const meta = fm as Record<string, unknown>;

  for (const key of Object.keys(meta)) if (!KNOWN_KEYS.has(key)) problems.push(`unknown frontmatter key '${key}'`);

  const name = meta.name;
  if (typeof name !== 'string') problems.push('name: missing or not a string');
  else {
    if (!NAME_RE.test(name)) problems.push(`name '${name}' does not match ${NAME_RE}`);
    if (name !== input.folder) problems.push(`name '${name}' does not equal the folder name '${input.folder}'`);
  }

  const description = meta.description;
  if (typeof description !== 'string') problems.push('description: missing or not a string');
  else {
    const length = [...description].length;
    if (length < 1 || length > 1024) problems.push(`description has ${length} characters (allowed 1-1024)`);
  }

  const body = parts.body;
  // Scripts are called through the skill's (or the plugin's) root variable, never a cwd-relative path.
  const skillRefs = [...body.matchAll(/\$\{CLAUDE_SKILL_DIR\}\/([\w./-]+)/g)].map((m) => m[1] as string);
  const pluginRefs = [...body.matchAll(/\$\{CLAUDE_PLUGIN_ROOT\}\/([\w./-]+)/g)].map((m) => m[1] as string);
  if (skillRefs.length + pluginRefs.length === 0) {
    problems.push('the body never calls a script through ${CLAUDE_SKILL_DIR} or ${CLAUDE_PLUGIN_ROOT}');
  }
  for (const ref of skillRefs) if (!input.skillFileExists(ref)) problems.push(`\${CLAUDE_SKILL_DIR}/${ref} does not exist`);
  for (const ref of pluginRefs) if (!input.pluginFileExists(ref)) problems.push(`\${CLAUDE_PLUGIN_ROOT}/${ref} does not exist`);
  for (const block of codeBlocks(body)) {
    for (const m of block.matchAll(/(?<![\w}/.$-])(?:\.\/)?(?:\.claude\/)?skills\/[\w./-]+/g)) {
      problems.push(`code block invokes a cwd-relative path '${m[0]}' (use \${CLAUDE_SKILL_DIR})`);
    }
  }

  for (const m of prose(body).matchAll(/!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1] as string;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#') || target.startsWith('/')) continue;
    const file = decodeURIComponent(target.split('#')[0] as string);
    if (file && !input.skillFileExists(file)) problems.push(`link target '${target}' does not resolve to a file`);
  }
  return problems;
}

const isFile = (p: string) => {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

function skillInput(skillDir: string): SkillInput {
  return {
    folder: path.basename(skillDir),
    text: fs.readFileSync(path.join(skillDir, 'SKILL.md'), 'utf8'),
    skillFileExists: (rel) => isFile(path.resolve(skillDir, rel)),
    pluginFileExists: (rel) => isFile(path.resolve(REPO_ROOT, rel)),
  };
}

// ---------------------------------------------------------------------------------------------

describe('plugin manifest and marketplace', () => {
  const plugin = readJson('.claude-plugin/plugin.json');
  const marketplace = readJson('.claude-plugin/marketplace.json');
  const pkg = readJson('package.json');

  it('plugin.json names the plugin and carries version, description, author, license, links, keywords', () => {
    expect(plugin.name).toBe('context-assembler');
    expect(plugin.version).toMatch(SEMVER);
    expect(typeof plugin.description).toBe('string');
    expect(plugin.description.trim().length).toBeGreaterThan(0);
    expect(typeof plugin.author?.name).toBe('string');
    expect(plugin.author.name.trim().length).toBeGreaterThan(0);
    expect(typeof plugin.license).toBe('string');
    expect(plugin.license.trim().length).toBeGreaterThan(0);
    const link = plugin.homepage ?? plugin.repository;
    expect(link, 'homepage or repository').toBeDefined();
    expect(typeof link === 'string' ? link : link.url).toMatch(/^https?:\/\//);
    expect(Array.isArray(plugin.keywords)).toBe(true);
    expect(plugin.keywords.length).toBeGreaterThan(0);
    for (const k of plugin.keywords) expect(typeof k).toBe('string');
  });

  it('marketplace.json lists context-assembler with the repo root as source and the same version everywhere', () => {
    expect(typeof marketplace.name).toBe('string');
    expect(typeof marketplace.owner?.name).toBe('string');
    expect(Array.isArray(marketplace.plugins)).toBe(true);
    const entries = marketplace.plugins.filter((p: any) => p.name === 'context-assembler');
    expect(entries).toHaveLength(1);
    const entry = entries[0];
    expect(typeof entry.source).toBe('string');
    // A relative source is resolved against the marketplace root: the folder holding .claude-plugin/.
    const source = path.resolve(REPO_ROOT, entry.source);
    expect(fs.realpathSync(source)).toBe(fs.realpathSync(REPO_ROOT));
    expect(isFile(path.join(source, '.claude-plugin', 'plugin.json'))).toBe(true);
    expect(entry.version).toBe(plugin.version);
    expect(entry.version).toBe(pkg.version);
    expect(plugin.version).toBe(pkg.version);
  });
});

describe('skills/*/SKILL.md', () => {
  const skillDirs = fs
    .readdirSync(path.join(REPO_ROOT, 'skills'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => path.join(REPO_ROOT, 'skills', d.name));

  it('the bundle has exactly the two skills, each with a SKILL.md', () => {
    expect(skillDirs.map((d) => path.basename(d)).sort()).toEqual(['bazinga-db', 'context-assembler']);
    for (const d of skillDirs) expect(isFile(path.join(d, 'SKILL.md'))).toBe(true);
  });

  it.each(skillDirs.map((d) => [path.basename(d), d]))('%s: frontmatter, script calls and links are valid', (_name, dir) => {
    expect(checkSkill(skillInput(dir))).toEqual([]);
  });

  it.each(skillDirs.map((d) => [path.basename(d), d]))('%s: the body calls its launcher through ${CLAUDE_SKILL_DIR}', (name, dir) => {
    const text = fs.readFileSync(path.join(dir, 'SKILL.md'), 'utf8');
    expect(text).toContain(`\${CLAUDE_SKILL_DIR}/bin/${name}.cjs`);
  });
});

describe('checkSkill rejects bad skills', () => {
  const DESC = 'Does one useful thing. Use when that thing is needed.';
  const BODY = '\n# x\n\n```bash\nnode "${CLAUDE_SKILL_DIR}/bin/x.mjs" --help\n```\n\nSee [ref](ref.md).\n';
  const existing = new Set(['bin/x.mjs', 'ref.md']);
  const skill = (folder: string, frontmatter: string, body = BODY): SkillInput => ({
    folder,
    text: `---\n${frontmatter}\n---\n${body}`,
    skillFileExists: (rel) => existing.has(path.posix.normalize(rel)),
    pluginFileExists: (rel) => rel === 'hooks/bootstrap.mjs',
  });

  it('accepts the valid baseline (so each case below fails for its own reason only)', () => {
    expect(checkSkill(skill('my-skill', `name: my-skill\ndescription: ${DESC}`))).toEqual([]);
    expect(
      checkSkill(
        skill(
          'my-skill',
          `name: my-skill\ndescription: ${DESC}\nlicense: MIT\nallowed-tools: Bash\nmetadata:\n  a: b\nuser-invocable: true`,
          '\nRun `node "${CLAUDE_PLUGIN_ROOT}/hooks/bootstrap.mjs"`.\n',
        ),
      ),
    ).toEqual([]);
  });

  const cases: { label: string; input: SkillInput; expect: RegExp }[] = [
    { label: 'bad name (underscore)', input: skill('my_skill', `name: my_skill\ndescription: ${DESC}`), expect: /does not match/ },
    { label: 'uppercase name', input: skill('My-Skill', `name: My-Skill\ndescription: ${DESC}`), expect: /does not match/ },
    { label: '65-character name', input: skill('a'.repeat(65), `name: ${'a'.repeat(65)}\ndescription: ${DESC}`), expect: /does not match/ },
    { label: 'name not a string', input: skill('my-skill', `name: [a]\ndescription: ${DESC}`), expect: /name: missing or not a string/ },
    { label: 'missing name', input: skill('my-skill', `description: ${DESC}`), expect: /name: missing/ },
    { label: 'folder mismatch', input: skill('other-skill', `name: my-skill\ndescription: ${DESC}`), expect: /does not equal the folder name/ },
    { label: 'empty description', input: skill('my-skill', `name: my-skill\ndescription: ""`), expect: /0 characters/ },
    { label: '1025-character description', input: skill('my-skill', `name: my-skill\ndescription: ${'d'.repeat(1025)}`), expect: /1025 characters/ },
    { label: 'missing description', input: skill('my-skill', 'name: my-skill'), expect: /description: missing/ },
    { label: 'unknown key', input: skill('my-skill', `name: my-skill\ndescription: ${DESC}\nversion: 1.0.0`), expect: /unknown frontmatter key 'version'/ },
    {
      label: 'missing frontmatter',
      input: { ...skill('my-skill', ''), text: `# my-skill\n\nname: my-skill\n${BODY}` },
      expect: /missing frontmatter/,
    },
    {
      label: 'unterminated frontmatter',
      input: { ...skill('my-skill', ''), text: `---\nname: my-skill\ndescription: ${DESC}\n${BODY}` },
      expect: /missing frontmatter/,
    },
    { label: 'invalid YAML', input: skill('my-skill', `name: my-skill\ndescription: [unclosed`), expect: /not valid YAML/ },
    { label: 'frontmatter not a mapping', input: skill('my-skill', '- name'), expect: /not a YAML mapping/ },
    {
      label: 'bare skills/ invocation in a code block',
      input: skill('my-skill', `name: my-skill\ndescription: ${DESC}`, `${BODY}\n\`\`\`bash\nnode skills/my-skill/bin/x.mjs\n\`\`\`\n`),
      expect: /cwd-relative path 'skills\/my-skill\/bin\/x.mjs'/,
    },
    {
      label: 'bare .claude/skills/ invocation in a code block',
      input: skill('my-skill', `name: my-skill\ndescription: ${DESC}`, `${BODY}\n\`\`\`\npython3 .claude/skills/my-skill/x.py\n\`\`\`\n`),
      expect: /cwd-relative path '.claude\/skills\/my-skill\/x.py'/,
    },
    {
      label: 'no ${CLAUDE_SKILL_DIR} call at all',
      input: skill('my-skill', `name: my-skill\ndescription: ${DESC}`, '\n# x\n\nRun the script.\n'),
      expect: /never calls a script/,
    },
    {
      label: '${CLAUDE_SKILL_DIR} path that does not exist',
      input: skill('my-skill', `name: my-skill\ndescription: ${DESC}`, '\n`node "${CLAUDE_SKILL_DIR}/bin/missing.mjs"`\n'),
      expect: /bin\/missing.mjs does not exist/,
    },
    {
      label: 'broken relative link',
      input: skill('my-skill', `name: my-skill\ndescription: ${DESC}`, `${BODY}\nAlso [gone](../../references/gone.md#top).\n`),
      expect: /'..\/..\/references\/gone.md#top' does not resolve/,
    },
  ];

  it.each(cases)('rejects: $label', ({ input, expect: pattern }) => {
    const problems = checkSkill(input);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.some((p) => pattern.test(p)), problems.join('\n')).toBe(true);
  });

  it('ignores external links, anchors, and link-like text inside code', () => {
    const body = `${BODY}\n[site](https://example.com) [top](#x) \`[a](nope.md)\`\n\n\`\`\`\n[b](nope.md)\n\`\`\`\n`;
    expect(checkSkill(skill('my-skill', `name: my-skill\ndescription: ${DESC}`, body))).toEqual([]);
  });
});

describe('hooks/hooks.json', () => {
  it('has a SessionStart command hook running ${CLAUDE_PLUGIN_ROOT}/hooks/bootstrap.mjs with a timeout', () => {
    const hooks = readJson('hooks/hooks.json');
    const groups = hooks.hooks?.SessionStart;
    expect(Array.isArray(groups)).toBe(true);
    const commands = (groups as any[]).flatMap((g) => (Array.isArray(g.hooks) ? g.hooks : []));
    const bootstrap = commands.filter(
      (h: any) => h.type === 'command' && typeof h.command === 'string' && h.command.includes('${CLAUDE_PLUGIN_ROOT}/hooks/bootstrap.mjs'),
    );
    expect(bootstrap).toHaveLength(1);
    const hook = bootstrap[0];
    expect(typeof hook.timeout).toBe('number');
    expect(hook.timeout).toBeGreaterThan(0);
    // The command runs the script with node, and the script it names exists in the bundle.
    expect(hook.command).toMatch(/^node\s/);
    const script = /\$\{CLAUDE_PLUGIN_ROOT\}\/([\w./-]+)/.exec(hook.command)?.[1] as string;
    expect(isFile(path.join(REPO_ROOT, script))).toBe(true);
  });
});

describe('.claude/skills links', () => {
  it.each(['context-assembler', 'bazinga-db'])('.claude/skills/%s is a relative symlink to skills/%s', (name) => {
    const link = path.join(REPO_ROOT, '.claude', 'skills', name);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(path.isAbsolute(fs.readlinkSync(link))).toBe(false);
    expect(fs.realpathSync(link)).toBe(fs.realpathSync(path.join(REPO_ROOT, 'skills', name)));
    expect(isFile(path.join(link, 'SKILL.md'))).toBe(true);
  });
});

describe('package.json bin', () => {
  const bin: Record<string, string> = readJson('package.json').bin;
  const entries = Object.entries(bin);

  it('has context-assembler and bazinga-db', () => {
    expect(bin['context-assembler']).toBe('skills/context-assembler/bin/context-assembler.cjs');
    expect(bin['bazinga-db']).toBe('skills/bazinga-db/bin/bazinga-db.cjs');
  });

  it.each(entries)('%s → %s exists, is executable and starts with a node shebang', (_name, target) => {
    const file = path.join(REPO_ROOT, target);
    expect(isFile(file)).toBe(true);
    expect(fs.statSync(file).mode & 0o111).not.toBe(0);
    expect(fs.readFileSync(file, 'utf8').split('\n')[0]).toMatch(/^#!\/usr\/bin\/env node\b|^#!\S*\/node\b/);
  });

  it.each(entries)('node %s --help exits 0 and prints usage', (_name, target) => {
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, target), '--help'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 30_000, // hang guard only
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/usage:/i);
  });
});
