/**
 * Token counting (spec/assembler.md §2.2, §8): cl100k counts that agree with js-tiktoken on
 * ordinary text, linear behaviour on long whitespace-free runs (checked by proportionality, not
 * timing), the per-model factor, and the lazily loaded encoder.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k_base from 'js-tiktoken/ranks/cl100k_base';
import { describe, expect, it, vi } from 'vitest';
import { MAX_RUN, countCl100k, makeTokenCounter } from '../skills/context-assembler/scripts/lib/tokens.ts';
import { REPO_ROOT } from './helpers.ts';

const reference = new Tiktoken(cl100k_base);
const tiktoken = (text: string) => reference.encode(text).length;

const PARAGRAPHS = [
  'The orchestrator spawns short-lived agents. Each spawn needs a small, well-chosen block of context: research and failure reports other agents left behind, the reasoning of the agents that worked before it, known error patterns with their fixes, and strategies that worked in this project before.',
  "Fix: `ENOENT: no such file or directory, open '/tmp/bazinga/artifacts/s1/report.md'` happened because the artifacts folder was created after the first write. Retry with mkdir -p, then re-run `npm test -- --run`.",
  '## Context for developer\n\n### Relevant Packages (2/5)\n\n**[HIGH]** bazinga/artifacts/s1/research.md (id 12)\n> JWT validation uses RS256; keys rotate daily.\n\n**[MEDIUM]** bazinga/artifacts/s1/fail.md (id 7)\n> Flaky test in auth.spec.ts.',
  'Ünïcödé and emoji 🚀🔥 mixed with 日本語のテキスト and Ελληνικά — counting must not break on multi-byte characters, nor on tabs\tand\r\nCRLF line endings.',
  'function rankPackages(input: RankInput): RankOutput {\n  if (input.zone === "Wrap-up") return { selected: [], total_available: 0 };\n  const ranked = input.candidates.map(score).sort(byScore);\n  return { selected: ranked.slice(0, input.limit) };\n}',
];

describe('countCl100k agrees with js-tiktoken on ordinary text', () => {
  it.each(PARAGRAPHS.map((text, i) => ({ name: `paragraph ${i + 1}`, text })))('$name', ({ text }) => {
    const ours = countCl100k(text);
    const theirs = tiktoken(text);
    expect(theirs).toBeGreaterThan(10);
    // Identical unless a run longer than MAX_RUN characters without whitespace was chunked.
    expect(Math.abs(ours - theirs)).toBeLessThanOrEqual(Math.ceil(theirs * 0.01));
  });

  it('exactly equal when no whitespace-free run exceeds MAX_RUN', () => {
    const all = PARAGRAPHS.join('\n\n');
    expect(all.split(/\s+/).every((w) => w.length <= MAX_RUN)).toBe(true);
    expect(countCl100k(all)).toBe(tiktoken(all));
  });

  it('ordinary text with one long URL (a run > MAX_RUN) stays within 1%', () => {
    const url = `https://example.com/${'path-segment/'.repeat(60)}index.html?query=${'abc'.repeat(20)}`;
    expect(url.length).toBeGreaterThan(MAX_RUN * 3);
    const text = `${PARAGRAPHS.join('\n\n')}\n\nSee ${url} for details.\n\n${PARAGRAPHS.join('\n\n')}`;
    const ours = countCl100k(text);
    const theirs = tiktoken(text);
    expect(Math.abs(ours - theirs)).toBeLessThanOrEqual(Math.ceil(theirs * 0.01));
  });

  it.each([
    { text: '', expected: 0 }, // no encoder needed
    { text: 'hello', expected: 1 },
    { text: 'hello world', expected: 2 },
  ])('"$text" → $expected', ({ text, expected }) => {
    expect(countCl100k(text)).toBe(expected);
  });
});

describe('long whitespace-free runs', () => {
  // Deterministic pseudo-random base64-ish text: no whitespace at all.
  function run(length: number, seed: number, alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'): string {
    let x = seed;
    let out = '';
    for (let i = 0; i < length; i++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      out += alphabet[x % 64];
    }
    return out;
  }

  it('a 200 KB run is counted, and doubling it roughly doubles the count', () => {
    const x = run(200 * 1024, 42);
    const once = countCl100k(x);
    const twice = countCl100k(x + x);
    expect(once).toBeGreaterThan(0);
    // Random base64 is a few characters per token: the count is in the tens of thousands.
    expect(once).toBeGreaterThan(200 * 1024 / 8);
    expect(once).toBeLessThan(200 * 1024);
    expect(Math.abs(twice - 2 * once)).toBeLessThanOrEqual(0.05 * 2 * once);
  });

  // A single pre-tokenizer piece longer than MAX_RUN bytes (letters only, so the cl100k pattern
  // keeps it whole) is merged in MAX_RUN-byte pieces.
  const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

  it('a long piece is counted in MAX_RUN pieces: the same as encoding the pieces separately', () => {
    const x = run(MAX_RUN * 5 + 17, 7, LETTERS);
    let expected = 0;
    for (let i = 0; i < x.length; i += MAX_RUN) expected += tiktoken(x.slice(i, i + MAX_RUN));
    expect(countCl100k(x)).toBe(expected);
  });

  it('text around a long piece is counted normally', () => {
    const long = run(MAX_RUN * 2, 9, LETTERS);
    const text = `before the run ${long} after the run`;
    // The pattern attaches the space before a word to it: the long piece is " " + long.
    const piece = ` ${long}`;
    let inner = 0;
    for (let i = 0; i < piece.length; i += MAX_RUN) inner += tiktoken(piece.slice(i, i + MAX_RUN));
    expect(countCl100k(text)).toBe(tiktoken('before the run') + inner + tiktoken(' after the run'));
  });
});

describe('makeTokenCounter(factor) = ceil(raw × factor)', () => {
  it.each([
    { factor: 1.2, text: PARAGRAPHS[0] as string },
    { factor: 1.2, text: 'hello' },
    { factor: 1.2, text: 'hello world again and again' },
    { factor: 1, text: PARAGRAPHS[1] as string },
    { factor: 1.5, text: PARAGRAPHS[3] as string },
  ])('factor $factor', ({ factor, text }) => {
    const raw = countCl100k(text);
    expect(makeTokenCounter(factor).count(text)).toBe(Math.ceil(raw * factor));
  });

  it('hello → ceil(1 × 1.2) = 2; empty → 0', () => {
    const count = (t: string) => makeTokenCounter(1.2).count(t);
    expect(count('hello')).toBe(2);
    expect(count('')).toBe(0);
  });

  it('the counter never undercounts the raw cl100k count', () => {
    const count = (t: string) => makeTokenCounter(1.2).count(t);
    for (const p of PARAGRAPHS) expect(count(p)).toBeGreaterThan(countCl100k(p));
  });
});

describe('the encoder is loaded lazily', () => {
  it('fresh module: not loaded on import, loaded after the first count (in-process, fresh module graph)', async () => {
    vi.resetModules();
    const fresh = await import('../skills/context-assembler/scripts/lib/tokens.ts');
    expect(fresh.tokenizerLoaded()).toBe(false);
    const counter = fresh.makeTokenCounter(1.2);
    expect(fresh.tokenizerLoaded()).toBe(false); // making a counter does not load it either
    expect(fresh.countCl100k('')).toBe(0);
    expect(fresh.tokenizerLoaded()).toBe(false); // nothing to count, nothing loaded
    expect(counter.bound('hello world')).toEqual({ tokens: 14, exact: false }); // bytes × 1.2, nothing loaded
    expect(fresh.tokenizerLoaded()).toBe(false);
    expect(counter.count('hello world')).toBe(3);
    expect(fresh.tokenizerLoaded()).toBe(true);
  });

  it('in a child process: importing the module loads no table; counting loads the rank file, not js-tiktoken', () => {
    const tokens = path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'lib', 'tokens.ts');
    const script = `
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const m = await import(${JSON.stringify(tokens)});
      const loadedRanks = () => Object.keys(require.cache).some((k) => k.includes('js-tiktoken'));
      const out = { beforeFlag: m.tokenizerLoaded(), beforeCache: loadedRanks() };
      out.count = m.countCl100k('hello world');
      out.afterFlag = m.tokenizerLoaded();
      out.afterCache = loadedRanks();
      out.source = m.tokenizerSource();
      console.log(JSON.stringify(out));
    `;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ beforeFlag: false, beforeCache: false, count: 2, afterFlag: true, afterCache: false, source: 'rank file' });
  });
});
