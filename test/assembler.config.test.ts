/**
 * Configuration (spec/assembler.md §2.2) and request parameters (§2.1, §3.8): defaults for a
 * missing file or key, clear errors naming the file and the dotted key, deep merge of partial
 * overrides, the shipped file; flag parsing errors with their exact codes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, parseConfig } from '../skills/context-assembler/scripts/lib/config.ts';
import { COMMON_FLAGS, formatFromFlags, parseFlags, requestFromFlags } from '../skills/context-assembler/scripts/lib/params.ts';
import { BazingaError } from '../skills/bazinga-db/scripts/lib/index.ts';
import { REPO_ROOT } from './helpers.ts';

const FILE = '/proj/bazinga/skills_config.json';
const ce = (section: unknown) => JSON.stringify({ context_engineering: section });

function configError(text: string): BazingaError {
  try {
    parseConfig(text, FILE);
  } catch (err) {
    expect(err).toBeInstanceOf(BazingaError);
    expect((err as BazingaError).code).toBe('CONFIG');
    return err as BazingaError;
  }
  throw new Error('expected a CONFIG error');
}

describe('parseConfig: defaults', () => {
  it('missing file → defaults', () => {
    expect(parseConfig(undefined, FILE)).toEqual(DEFAULT_CONFIG);
  });

  it.each([
    { name: 'no context_engineering key', text: JSON.stringify({ other_skill: { x: 1 } }) },
    { name: 'empty object', text: '{}' },
    { name: 'empty section', text: ce({}) },
  ])('$name → defaults', ({ text }) => {
    expect(parseConfig(text, FILE)).toEqual(DEFAULT_CONFIG);
  });

  it('the shipped bazinga/skills_config.json parses and equals DEFAULT_CONFIG', () => {
    const file = path.join(REPO_ROOT, 'bazinga', 'skills_config.json');
    const warnings: string[] = [];
    expect(parseConfig(fs.readFileSync(file, 'utf8'), file, (m) => warnings.push(m))).toEqual(DEFAULT_CONFIG);
    expect(warnings).toEqual([]);
  });

  it('the defaults hold the spec values', () => {
    expect(DEFAULT_CONFIG.retrieval_limits).toEqual({
      developer: 3,
      senior_software_engineer: 5,
      qa_expert: 5,
      tech_lead: 5,
      investigator: 5,
      requirements_engineer: 5,
      unknown: 3,
    });
    expect(DEFAULT_CONFIG.redaction_mode).toBe('both');
    expect(DEFAULT_CONFIG.token_safety_margin).toBe(0.15);
    // The spec's heuristic weights; with a query the task text and scope decide first (relevance 100, match 30 from 0.1 of the best match,
    // the paths the task names 25); a consumer list naming the agent adds 1.
    expect(DEFAULT_CONFIG.ranking.weights).toEqual({ priority: 4, same_group: 2, type_affinity: 1.5, recency: 1, relevance: 100, scope: 3, paths: 25, match: 30, designated: 1 });
    expect(DEFAULT_CONFIG.ranking.match_threshold).toBe(0.1);
    expect(DEFAULT_CONFIG.purposes.tier1_max_items).toBe(4);
    expect(DEFAULT_CONFIG.ranking.recency_half_life_hours).toBe(72);
  });
});

describe('parseConfig: partial overrides merge with the defaults', () => {
  it('one nested key changes, its siblings keep their defaults', () => {
    const c = parseConfig(ce({ retrieval_limits: { developer: 7 } }), FILE);
    expect(c.retrieval_limits).toEqual({ ...DEFAULT_CONFIG.retrieval_limits, developer: 7 });
    expect(c.ranking).toEqual(DEFAULT_CONFIG.ranking);
  });

  it('a new model window is added to the table (a 1M model)', () => {
    const c = parseConfig(ce({ model_context_windows: { 'opus-1m': 1_000_000 } }), FILE);
    expect(c.model_context_windows).toEqual({ ...DEFAULT_CONFIG.model_context_windows, 'opus-1m': 1_000_000 });
  });

  it('deep keys merge at every level', () => {
    const c = parseConfig(ce({ ranking: { weights: { recency: 2 }, type_affinity: { failures: { tech_lead: 0.9 } } } }), FILE);
    expect(c.ranking.weights).toEqual({ ...DEFAULT_CONFIG.ranking.weights, recency: 2 });
    expect(c.ranking.type_affinity.failures).toEqual({ ...DEFAULT_CONFIG.ranking.type_affinity.failures, tech_lead: 0.9 });
    expect(c.ranking.type_affinity.research).toEqual(DEFAULT_CONFIG.ranking.type_affinity.research);
    expect(c.ranking.recency_half_life_hours).toBe(72);
  });

  it('arrays replace (the allowlist, producers)', () => {
    const c = parseConfig(ce({ redaction_allowlist: ['EXAMPLE\\d+'], reasoning: { relevant_producers: { qa_expert: ['tech_lead'] } } }), FILE);
    expect(c.redaction_allowlist).toEqual(['EXAMPLE\\d+']);
    expect(c.reasoning.relevant_producers.qa_expert).toEqual(['tech_lead']);
    expect(c.reasoning.relevant_producers.developer).toEqual(DEFAULT_CONFIG.reasoning.relevant_producers.developer);
  });

  it('values of exactly 1 are accepted where the range is 0..1 (affinity, min confidence)', () => {
    const c = parseConfig(ce({ ranking: { type_affinity: { decisions: { developer: 1 } } }, error_patterns: { min_confidence: 1 } }), FILE);
    expect(c.ranking.type_affinity.decisions?.developer).toBe(1);
    expect(c.error_patterns.min_confidence).toBe(1);
  });

  it('scalars replace', () => {
    const c = parseConfig(ce({ enable_context_assembler: false, redaction_mode: 'pattern_only', token_safety_margin: 0 }), FILE);
    expect([c.enable_context_assembler, c.redaction_mode, c.token_safety_margin]).toEqual([false, 'pattern_only', 0]);
  });

  it('parsing does not change DEFAULT_CONFIG', () => {
    const before = JSON.stringify(DEFAULT_CONFIG);
    parseConfig(ce({ retrieval_limits: { developer: 9 }, ranking: { weights: { priority: 1 } } }), FILE);
    expect(JSON.stringify(DEFAULT_CONFIG)).toBe(before);
  });

  it('an unknown key is a warning naming the file and the key, not an error', () => {
    const warnings: string[] = [];
    const c = parseConfig(ce({ retrieval_limit: 3, ranking: { wieghts: {} } }), FILE, (m) => warnings.push(m));
    // Ignored: every known value is the default.
    expect(c.retrieval_limits).toEqual(DEFAULT_CONFIG.retrieval_limits);
    expect(c.ranking.weights).toEqual(DEFAULT_CONFIG.ranking.weights);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(FILE);
    expect(warnings[0]).toContain('context_engineering.retrieval_limit');
    expect(warnings[1]).toContain('context_engineering.ranking.wieghts');
  });

  it('a split for a purpose that does not exist is an unknown key (warned, ignored)', () => {
    const warnings: string[] = [];
    const c = parseConfig(ce({ purposes: { splits: { coding: [60, 25, 15] } } }), FILE, (m) => warnings.push(m));
    // Ignored: every purpose keeps its default split.
    expect(c.purposes.by_agent).toEqual(DEFAULT_CONFIG.purposes.by_agent);
    for (const [purpose, split] of Object.entries(DEFAULT_CONFIG.purposes.splits)) expect(c.purposes.splits[purpose as keyof typeof c.purposes.splits]).toEqual(split);
    expect(warnings).toEqual([`${FILE}: unknown key context_engineering.purposes.splits.coding (ignored)`]);
  });
});

describe('parseConfig: errors name the file and the dotted key', () => {
  it('malformed JSON → ConfigError naming the file', () => {
    const err = configError('{ "context_engineering": { "enable_fts5": tru }');
    expect(err.extra.file).toBe(FILE);
    expect(err.message).toMatch(new RegExp(`^config file not valid JSON at line 1, column \\d+: ${FILE.replace(/[./]/g, "\\$&")}$`));
  });

  it.each([
    { name: 'top level is an array', text: '[1, 2]', key: '' },
    { name: 'section is not an object', text: ce('yes'), key: '' },
  ])('$name → ConfigError naming the file', ({ text, key }) => {
    const err = configError(text);
    expect(err.extra.file).toBe(FILE);
    expect(err.extra.key).toBe(key);
    expect(err.message).toContain(FILE);
  });

  it.each([
    { name: 'retrieval limit as a string', section: { retrieval_limits: { developer: '3' } }, key: 'retrieval_limits.developer', says: /non-negative integer.*"3"/ },
    { name: 'retrieval limit fractional', section: { retrieval_limits: { qa_expert: 2.5 } }, key: 'retrieval_limits.qa_expert', says: /non-negative integer/ },
    { name: 'retrieval limit negative', section: { retrieval_limits: { tech_lead: -1 } }, key: 'retrieval_limits.tech_lead', says: /non-negative integer/ },
    { name: 'margin above 1', section: { token_safety_margin: 1.5 }, key: 'token_safety_margin', says: /from 0 up to/ },
    { name: 'margin of exactly 1', section: { token_safety_margin: 1 }, key: 'token_safety_margin', says: /from 0 up to/ },
    { name: 'margin negative', section: { token_safety_margin: -0.1 }, key: 'token_safety_margin', says: /from 0 up to/ },
    { name: 'redaction mode unknown', section: { redaction_mode: 'x' }, key: 'redaction_mode', says: /"pattern_only", "entropy", "both"/ },
    { name: 'allowlist bad regex', section: { redaction_allowlist: ['ok', '(unclosed'] }, key: 'redaction_allowlist[1]', says: /invalid regular expression/ },
    { name: 'allowlist not an array', section: { redaction_allowlist: 'AKIA.*' }, key: 'redaction_allowlist', says: /array of regular expressions/ },
    { name: 'zone thresholds not rising', section: { zone_thresholds: { soft_warning: 80 } }, key: 'zone_thresholds', says: /must rise/ },
    { name: 'zone thresholds equal', section: { zone_thresholds: { wrap_up: 95 } }, key: 'zone_thresholds', says: /must rise/ },
    { name: 'zone threshold not a number', section: { zone_thresholds: { emergency: '95' } }, key: 'zone_thresholds.emergency', says: /a number/ },
    { name: 'enable flag as a string', section: { enable_context_assembler: 'false' }, key: 'enable_context_assembler', says: /true or false/ },
    { name: 'model window zero', section: { model_context_windows: { opus: 0 } }, key: 'model_context_windows.opus', says: /positive/ },
    { name: 'token factor string', section: { token_factor: { default: '1.2' } }, key: 'token_factor.default', says: /positive/ },
    { name: 'budget share of 1', section: { context_budget_share: { developer: 1 } }, key: 'context_budget_share.developer', says: /from 0 up to/ },
    { name: 'nested weight wrong type', section: { ranking: { weights: { recency: null } } }, key: 'ranking.weights.recency', says: /a number ≥ 0, got null/ },
    { name: 'negative recency weight (newest-first reads need it ≥ 0)', section: { ranking: { weights: { recency: -1 } } }, key: 'ranking.weights.recency', says: /a number ≥ 0, got number -1/ },
    { name: 'half-life zero', section: { ranking: { recency_half_life_hours: 0 } }, key: 'ranking.recency_half_life_hours', says: /positive/ },
    { name: 'affinity above 1', section: { ranking: { type_affinity: { failures: { developer: 2 } } } }, key: 'ranking.type_affinity.failures.developer', says: /a number from 0 to 1, got number 2/ },
    { name: 'producers not strings', section: { reasoning: { relevant_producers: { qa_expert: [1] } } }, key: 'reasoning.relevant_producers.qa_expert', says: /array of strings/ },
    { name: 'level budget fractional', section: { reasoning: { level_budgets: { minimal: 400.5 } } }, key: 'reasoning.level_budgets.minimal', says: /non-negative integer/ },
    { name: 'min confidence of 1.2', section: { error_patterns: { min_confidence: 1.2 } }, key: 'error_patterns.min_confidence', says: /a number from 0 to 1/ },
    { name: 'section object replaced by array', section: { ranking: [] }, key: 'ranking', says: /an object, got an array/ },
    { name: 'unknown purpose for an agent', section: { purposes: { by_agent: { developer: 'coding' } } }, key: 'purposes.by_agent.developer', says: /one of "design", "implementation", "review", "handoff", "subagent", got "coding"/ },
    { name: 'split not adding up to 100', section: { purposes: { splits: { review: [50, 30, 15] } } }, key: 'purposes.splits.review', says: /must add up to 100, got 95/ },
    { name: 'split of two numbers', section: { purposes: { splits: { design: [50, 50] } } }, key: 'purposes.splits.design', says: /three numbers ≥ 0/ },
    { name: 'split with a negative share', section: { purposes: { splits: { handoff: [110, -10, 0] } } }, key: 'purposes.splits.handoff', says: /three numbers ≥ 0/ },
  ])('$name → key $key', ({ section, key, says }) => {
    const err = configError(ce(section));
    expect(err.extra.file).toBe(FILE);
    expect(err.extra.key).toBe(key);
    expect(err.message).toContain(FILE);
    expect(err.message).toContain(`context_engineering.${key}`);
    expect(err.message).toMatch(says);
  });
});

// ------------------------------------------------------------------------------ parameters

const NOW = () => new Date('2025-12-02T12:00:00.000Z');
const request = (argv: string[]) => requestFromFlags(parseFlags(argv, COMMON_FLAGS), NOW);
const base = ['--session', 's1', '--agent', 'developer'];

function paramError(fn: () => unknown): BazingaError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BazingaError);
    return err as BazingaError;
  }
  throw new Error('expected a BazingaError');
}

describe('requestFromFlags: valid requests and defaults', () => {
  it('minimal request → defaults', () => {
    expect(request(base)).toEqual({
      session: 's1',
      group: 'global',
      agent: 'developer',
      model: 'sonnet',
      current_tokens: 0,
      iteration: 0,
      limit: null,
      include_reasoning: null,
      reasoning_level: 'medium',
      now: '2025-12-02T12:00:00.000Z',
      task: null,
      error: null,
      scope: null,
      lang: null,
      framework: null,
      purpose: null,
    });
  });

  it.each([
    { name: '--flag=value form', argv: ['--session=s1', '--agent=qa_expert', '--iteration=2'], expect: { agent: 'qa_expert', iteration: 2 } },
    { name: 'agent case-insensitive', argv: ['--session', 's1', '--agent', ' Tech_Lead '], expect: { agent: 'tech_lead' } },
    { name: 'empty group = global', argv: [...base, '--group', ''], expect: { group: 'global' } },
    { name: 'a group', argv: [...base, '--group', 'group_A-1'], expect: { group: 'group_A-1' } },
    { name: 'limit bounds', argv: [...base, '--limit', '50'], expect: { limit: 50 } },
    { name: 'limit 1', argv: [...base, '--limit', '1'], expect: { limit: 1 } },
    { name: 'include reasoning false', argv: [...base, '--include-reasoning', 'false'], expect: { include_reasoning: false } },
    { name: 'reasoning level full', argv: [...base, '--reasoning-level', 'full'], expect: { reasoning_level: 'full' } },
    { name: '--now normalised', argv: [...base, '--now', '2025-12-01T10:00:00+02:00'], expect: { now: '2025-12-01T08:00:00.000Z' } },
    { name: 'task and error text', argv: [...base, '--task', 'add cache', '--error', "ENOENT: x"], expect: { task: 'add cache', error: 'ENOENT: x' } },
  ])('$name', ({ argv, expect: want }) => {
    expect(request(argv)).toMatchObject(want);
  });
});

describe('parameter errors with exact codes', () => {
  it.each([
    { name: 'unknown flag', argv: [...base, '--colour', 'red'], code: 'USAGE', says: /Unknown flag '--colour'.*--agent/ },
    { name: 'missing value at the end', argv: [...base, '--iteration'], code: 'USAGE', says: /'--iteration' requires a value/ },
    { name: 'boolean flag given a value', argv: [...base, '--dry-run=yes'], code: 'USAGE', says: /takes no value/ },
    { name: 'unexpected positional', argv: [...base, 'extra'], code: 'USAGE', says: /Unexpected argument 'extra'/ },
    { name: 'missing session', argv: ['--agent', 'developer'], code: 'USAGE', says: /--session is required/ },
    { name: 'blank session', argv: ['--session', '  ', '--agent', 'developer'], code: 'USAGE', says: /--session is required/ },
    { name: 'missing agent', argv: ['--session', 's1'], code: 'USAGE', says: /--agent is required: one of developer, senior_software_engineer, qa_expert, tech_lead, investigator, requirements_engineer/ },
    { name: 'bad agent lists the valid ones', argv: ['--session', 's1', '--agent', 'pm'], code: 'VALIDATION', says: /--agent must be one of developer, senior_software_engineer, qa_expert, tech_lead, investigator, requirements_engineer, got 'pm'/ },
    { name: 'iteration -1', argv: [...base, '--iteration', '-1'], code: 'VALIDATION', says: /--iteration must be >= 0, got -1/ },
    { name: 'iteration x', argv: [...base, '--iteration', 'x'], code: 'VALIDATION', says: /--iteration must be an integer, got 'x'/ },
    { name: 'iteration 1.5', argv: [...base, '--iteration', '1.5'], code: 'VALIDATION', says: /--iteration/ },
    { name: 'iteration empty', argv: [...base, '--iteration='], code: 'VALIDATION', says: /--iteration/ },
    { name: 'current tokens negative', argv: [...base, '--current-tokens', '-5'], code: 'VALIDATION', says: /--current-tokens must be >= 0, got -5/ },
    { name: 'limit 0', argv: [...base, '--limit', '0'], code: 'VALIDATION', says: /--limit must be between 1 and 50 \(got 0\)/ },
    { name: 'limit 51', argv: [...base, '--limit', '51'], code: 'VALIDATION', says: /--limit must be between 1 and 50 \(got 51\)/ },
    { name: 'limit abc', argv: [...base, '--limit', 'abc'], code: 'VALIDATION', says: /--limit/ },
    { name: 'bad --now', argv: [...base, '--now', 'yesterday'], code: 'VALIDATION', says: /--now must be an ISO-8601 date-time.*got 'yesterday'/ },
    { name: '--now impossible date', argv: [...base, '--now', '2025-13-45T00:00:00Z'], code: 'VALIDATION', says: /--now/ },
    { name: '--now as epoch number', argv: [...base, '--now', '1733140800'], code: 'VALIDATION', says: /--now/ },
    { name: 'bad --reasoning-level', argv: [...base, '--reasoning-level', 'max'], code: 'VALIDATION', says: /--reasoning-level must be one of minimal, medium, full, got 'max'/ },
    { name: '--include-reasoning maybe', argv: [...base, '--include-reasoning', 'maybe'], code: 'VALIDATION', says: /--include-reasoning must be one of true, false, got 'maybe'/ },
    { name: 'bad group', argv: [...base, '--group', 'a b'], code: 'VALIDATION', says: /--group must be 1-64/ },
    { name: 'bad --purpose lists the valid ones', argv: [...base, '--purpose', 'coding'], code: 'VALIDATION', says: /--purpose must be one of design, implementation, review, handoff, subagent, got 'coding'/ },
    { name: 'blank model', argv: [...base, '--model', ' '], code: 'VALIDATION', says: /--model must be/ },
  ])('$name → $code', ({ argv, code, says }) => {
    const err = paramError(() => request(argv));
    expect(err.code).toBe(code);
    expect(err.message).toMatch(says);
  });

  it('bad --format → VALIDATION naming the allowed values', () => {
    const err = paramError(() => formatFromFlags(parseFlags(['--format', 'yaml'], COMMON_FLAGS), 'markdown'));
    expect(err.code).toBe('VALIDATION');
    expect(err.message).toBe("--format must be one of markdown, json, got 'yaml'");
  });

  it('-h is --help', () => {
    expect(parseFlags(['-h'], COMMON_FLAGS).bools.has('--help')).toBe(true);
  });
});
