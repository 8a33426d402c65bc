/**
 * The tokenizer off the hot path: what packing may decide without counting, and why it is safe.
 *
 *   - cl100k counts add up across the joins the block is made of (a part ending in a line break,
 *     the next starting with a non-blank character; a reasoning label ending in "**" and its
 *     content after a space), so a section's figure is the sum of its parts';
 *   - a cut reasoning content is bounded by the count of the whole content plus 4;
 *   - bazinga-db save-reasoning stores the counts of the entry as shown (its line, its content), and
 *     an assembly for a handoff then sizes those entries without loading the rank table (real
 *     processes), also when a budget is tight.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { exactCounter } from '../skills/context-assembler/scripts/lib/core/pack.ts';
import { entryBound } from '../skills/context-assembler/scripts/lib/core/reasoning.ts';
import { renderPackageEntry, renderPackageHeader, renderReasoningEntry } from '../skills/context-assembler/scripts/lib/core/render.ts';
import { truncateAtWord } from '../skills/context-assembler/scripts/lib/core/text.ts';
import { countCl100k, makeTokenCounter, type TokenCountCache } from '../skills/context-assembler/scripts/lib/tokens.ts';
import { oneLine, shownTail } from '../skills/bazinga-db/scripts/lib/shown.ts';
import { textHash } from '../skills/bazinga-db/scripts/lib/tokens.ts';
import { bazingaDbIn } from './inProcess.ts';
import { makeProject, REPO_ROOT, runScript, type Project } from './helpers.ts';
import { SECRET_CASES } from './secrets/corpus.ts';

/** Text as agents write it: words, identifiers, paths, numbers, punctuation runs, quotes, other scripts, emoji. */
const PIECES = [
  'the', 'token', 'refresh', "don't", "it's", 'JWT', 'src/auth/rotate.ts', 'camelCaseName', 'snake_case', '12345', '3.14',
  '(see', 'docs)', '...', '—', '«quoted»', '"x"', 'e.g.', 'a,b;c:d', '--flag=1', '#42', '$HOME', '日本語', 'Ελληνικά', '🚀🔥',
  'naïve', 'x\u0301', '\t', '  ', '\n', '!!', '?:', ':-)', '100%', 'v1.2.3', 'https://example.com/a?b=c', "'s", "'LL", '**bold**',
];
const arbText = fc
  .array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom(...SECRET_CASES.slice(0, 40).map((c) => c.text))), {
    minLength: 1,
    maxLength: 80,
  })
  .map((words) => words.join(' '));

describe('cl100k counts add up across the joins of the block', () => {
  it('a package section counts as its header and entries (each but the last with its blank line)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(arbText, arbText), { minLength: 1, maxLength: 6 }), fc.constantFrom('high', 'critical', 'low'), (entries, priority) => {
        const texts = entries.map(([summary, file], i) =>
          renderPackageEntry({ id: i + 1, priority, file_path: oneLine(file), summary: truncateAtWord(oneLine(summary), 400) }),
        );
        const header = renderPackageHeader('Normal', texts.length, 12, null);
        const parts = [header + '\n\n', ...texts.map((t, i) => (i < texts.length - 1 ? t + '\n\n' : t))];
        expect(countCl100k(parts.join(''))).toBe(parts.reduce((n, p) => n + countCl100k(p), 0));
      }),
      { numRuns: 300, seed: 42 },
    );
  });

  it('a reasoning line counts as its label and its content tail', () => {
    fc.assert(
      fc.property(fc.constantFrom('developer', 'qa_expert', 'tech lead'), fc.constantFrom('completion', 'decisions', 'unknown'), arbText, (agent, phase, text) => {
        const content = oneLine(text);
        fc.pre(content !== '');
        const line = renderReasoningEntry({ agent_type: agent, phase, content }) + '\n';
        const label = renderReasoningEntry({ agent_type: agent, phase, content: '' }).trimEnd();
        expect(label + shownTail(content)).toBe(line);
        expect(countCl100k(line)).toBe(countCl100k(label) + countCl100k(shownTail(content)));
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});

describe('a cut reasoning content is bounded by the whole content stored at write time', () => {
  const arbProse = fc.array(fc.constantFrom(...PIECES.slice(0, 26), 'rotation', 'revokes', 'family.', 'tabs,', 'at once;'), { minLength: 30, maxLength: 120 }).map((w) => w.join(' '));
  it.each([
    { name: 'random text', arb: arbText, cut: 0 },
    { name: 'prose', arb: arbProse, cut: 50 },
  ])('$name: entryBound ≥ the counted line, and is a count when the content is whole', ({ arb, cut }) => {
    let fromWhole = 0;
    fc.assert(
      fc.property(arb, fc.integer({ min: 4, max: 400 }), fc.constantFrom(1, 1.2, 1.5), (text, chars, factor) => {
        const whole = oneLine(text);
        fc.pre(whole !== '');
        // What save-reasoning leaves in ca_token_counts: the count of the whole content as shown.
        const stored = new Map([[textHash(shownTail(whole)), countCl100k(shownTail(whole))]]);
        const cache: TokenCountCache = { get: (h) => stored.get(h), put: () => {} };
        const counter = makeTokenCounter(factor, cache);
        const entry = { agent_type: 'developer', phase: 'completion', content: truncateAtWord(whole, chars) };
        const line = renderReasoningEntry(entry) + '\n';
        const bound = entryBound(entry, whole, counter);
        expect(bound.tokens).toBeGreaterThanOrEqual(Math.ceil(countCl100k(line) * factor));
        if (bound.exact) expect(bound.tokens).toBe(Math.ceil(countCl100k(line) * factor));
        if (entry.content !== whole && bound.tokens < Math.ceil(Buffer.byteLength(line) * factor)) fromWhole++;
      }),
      { numRuns: 600, seed: 99 },
    );
    // Not vacuous: cut prose was bounded by the stored whole count, not by its bytes.
    expect(fromWhole).toBeGreaterThanOrEqual(cut);
  });

  it('a counter that does not add up is asked for the whole line', () => {
    const perChar = exactCounter((t) => t.length);
    const entry = { agent_type: 'qa_expert', phase: 'decisions', content: 'Ship it' };
    expect(entryBound(entry, 'Ship it', perChar)).toEqual({ tokens: (renderReasoningEntry(entry) + '\n').length, exact: true });
  });
});

describe('a handoff assembly sizes reasoning saved by bazinga-db without the rank table (real processes)', () => {
  const ASSEMBLE = path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'assemble.ts');
  const projects: Project[] = [];
  afterAll(() => projects.forEach((p) => p.cleanup()));
  const long = (i: number) =>
    `Iteration ${i}: the refresh token rotation in src/auth/rotate.ts now revokes the whole family when a reused token shows up; ` +
    `the integration test covers the race between two tabs refreshing at once, and the clock is frozen so that expiry is deterministic. ` +
    `Left for QA: the logout path on a revoked family, and the 401 retry loop in the mobile client (see the handoff package).`;

  function projectWithReasoning(save: 'bazinga-db' | 'raw'): Project {
    const project = makeProject('ca-lazy-');
    projects.push(project);
    const db = (...args: string[]) => expect(bazingaDbIn(project, args).code).toBe(0);
    db('create-session', 'S', 'parallel', 'Build the shop');
    db('create-task-group', 'AUTH', 'S', 'JWT authentication', 'in_progress');
    for (let i = 1; i <= 5; i++) {
      const phase = ['completion', 'decisions', 'understanding', 'approach', 'risks'][i - 1] as string;
      if (save === 'bazinga-db') db('save-reasoning', 'S', 'AUTH', i % 2 ? 'developer' : 'senior_software_engineer', phase, long(i));
      else {
        // As another tool writes it: the row only, no count.
        const conn = new Database(project.dbPath);
        conn
          .prepare("INSERT INTO orchestration_logs (session_id, group_id, agent_type, iteration, log_type, reasoning_phase, content, timestamp) VALUES ('S', 'AUTH', ?, 1, 'reasoning', ?, ?, ?)")
          .run(i % 2 ? 'developer' : 'senior_software_engineer', phase, long(i), `2025-12-02 10:0${i}:00`);
        conn.close();
      }
    }
    return project;
  }

  const assemble = (project: Project, level = 'medium') =>
    runScript(ASSEMBLE, ['--project-root', project.root, '--session', 'S', '--group', 'AUTH', '--agent', 'qa_expert', '--iteration', '1', '--now', '2025-12-02T12:00:00Z', '--reasoning-level', level, '--format', 'json']);

  it.each(['medium', 'minimal'])('counted at write: entries sized on the stored counts, the rank table never loaded (%s level)', (level) => {
    const r = assemble(projectWithReasoning('bazinga-db'), level);
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json;
    expect(doc.reasoning.entries.length).toBeGreaterThanOrEqual(level === 'medium' ? 4 : 2);
    expect(doc.reasoning.used_tokens).toBeLessThanOrEqual(doc.reasoning.budget);
    expect(doc.counting.tokenizer_loaded).toBe(false);
    // Each figure is the line's count (stored when it was saved).
    for (const e of doc.reasoning.entries) expect(e.tokens).toBe(Math.ceil(countCl100k(renderReasoningEntry(e) + '\n') * 1.2));
  });

  it('written by another tool (no stored count): the same entries, counted', () => {
    const counted = assemble(projectWithReasoning('raw'));
    expect(counted.code, counted.stderr).toBe(0);
    expect(counted.json.counting.tokenizer_loaded).toBe(true);
    const lazy = assemble(projectWithReasoning('bazinga-db')).json;
    const text = (doc: { reasoning: { entries: { content: string }[] } }) => doc.reasoning.entries.map((e) => e.content);
    expect(text(counted.json)).toEqual(text(lazy));
  });
});
