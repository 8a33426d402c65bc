/**
 * The pure parts of relevance: query terms made safe for MATCH (run against a real FTS5 table),
 * camelCase parts in the index, paths in text, path-segment scope, BM25 normalisation, the
 * implicit task, and the exactness check of the fast candidate read.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SEARCH_TOKENIZER, buildMatch, camelParts, indexableText, pathsInText, pruneTerms, queryTerms } from '../skills/bazinga-db/scripts/lib/searchText.ts';
import { DEFAULT_CONFIG } from '../skills/context-assembler/scripts/lib/config.ts';
import type { RankedPackage } from '../skills/context-assembler/scripts/lib/contract.ts';
import { provesExact, type BucketTail } from '../skills/context-assembler/scripts/lib/core/rank.ts';
import {
  holdsWord,
  implicitTask,
  markedTerms,
  normaliseBm25,
  parseScope,
  parseStringList,
  scopeSignal,
  underScope,
  wordsOf,
} from '../skills/context-assembler/scripts/lib/core/relevance.ts';

/** A real FTS5 table with the index's tokenizer and the given documents (indexed as the index does). */
function ftsWith(docs: readonly string[]) {
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(body, tokenize = '${SEARCH_TOKENIZER}')`);
  const insert = db.prepare('INSERT INTO t (rowid, body) VALUES (?, ?)');
  docs.forEach((d, i) => insert.run(i + 1, indexableText(d)));
  return {
    /** Matching documents, best BM25 first. */
    ids: (match: string) => (db.prepare('SELECT rowid AS id FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid').all(match) as { id: number }[]).map((r) => r.id),
    close: () => db.close(),
  };
}

const DOCS = [
  'Rotate the refreshToken on every use; reuse must return 401', // 1
  'the tokenizer splits design tokens for the theme', // 2
  'edit src/auth/jwt.ts and verify the signature', // 3
  'rebuild better-sqlite3 after the Node upgrade (ABI 115)', // 4
  'redis answered ECONNREFUSED 127.0.0.1:6379 in CI', // 5
  'alias @/utils/format resolves through tsconfig paths', // 6
  'src/authz/policy.ts decides roles', // 7
  '한국어 검색 오류 and データベース接続 and a naïve café', // 8
];

describe('query terms are safe for MATCH and find identifiers whole and in parts', () => {
  const fts = ftsWith(DOCS);
  // best: the document that must rank first (null: nothing may match); never: documents that must not match.
  it.each([
    { name: 'camelCase whole', text: 'refreshToken', best: 1, never: [3, 4, 5, 6, 7] },
    { name: 'camelCase from its parts', text: 'refresh token rotation', best: 1, never: [3, 4, 5, 6, 7] },
    { name: 'hyphenated package', text: 'better-sqlite3 fails to load', best: 4, never: [1, 2, 3, 5, 6, 7] },
    { name: 'an alias path', text: 'cannot resolve @/utils', best: 6, never: [1, 2, 3, 4, 5, 7] },
    { name: 'a source path', text: 'src/auth/jwt.ts', best: 3, never: [1, 2, 4, 5, 6] },
    { name: 'an error code', text: 'connect ECONNREFUSED', best: 5, never: [1, 2, 3, 4, 6, 7] },
    { name: 'a bare NOT', text: 'NOT', best: null, never: [] },
    { name: 'NOT inside text', text: 'do NOT reuse the token', best: 1, never: [3, 4, 5, 6, 7] },
    { name: 'a colon', text: 'ENOENT: x', best: null, never: [] },
    { name: 'quotes and parentheses', text: 'said "reuse" (twice) \'401\'', best: 1, never: [2, 3, 4, 5, 6, 7] },
    { name: 'FTS5 operators as text', text: 'AND OR NEAR( * ^ - + : { }', best: null, never: [] },
    { name: 'an empty string', text: '', best: null, never: [] },
    { name: 'Hangul', text: '검색 오류', best: 8, never: [1, 2, 3, 4, 5, 6, 7] },
    { name: 'kana with voicing marks', text: 'データベース接続', best: 8, never: [1, 2, 3, 4, 5, 6, 7] },
    { name: 'Latin diacritics folded', text: 'naive cafe', best: 8, never: [1, 2, 3, 4, 5, 6, 7] },
    { name: 'redaction markers are not words', text: 'token=[REDACTED:secret] GITHUB_TOKEN_REDACTED', best: 1, never: [3, 4, 5, 6, 7, 8] },
  ])('$name', ({ text, best, never }) => {
    const match = buildMatch(queryTerms(text, 32));
    const ids = match === null ? [] : fts.ids(match);
    if (best === null) expect(ids).toEqual([]);
    else expect(ids[0]).toBe(best);
    for (const id of never) expect(ids).not.toContain(id);
  });

  it('10 KB of text is capped at max terms and still a valid query', () => {
    const text = Array.from({ length: 1500 }, (_, i) => `word${i} "q" NOT (x) ${i % 7 === 0 ? 'refreshToken' : ''}`).join(' ');
    expect(text.length).toBeGreaterThan(10_000);
    const terms = queryTerms(text, 24);
    expect(terms).toHaveLength(24);
    expect(() => fts.ids(buildMatch(terms) as string)).not.toThrow();
  });

  it('the costliest terms are dropped until the postings budget holds; a phrase costs all its tokens', () => {
    const terms = queryTerms('better-sqlite3 rebuild token', 32);
    const df = new Map([['better', 50], ['sqlite3', 10], ['rebuild', 5], ['token', 900]]);
    const cut = pruneTerms(terms, df, 70);
    expect(cut.dropped.map((t) => t.text)).toEqual(['better-sqlite3', 'token']);
    expect(cut.kept.map((t) => t.text)).toEqual(['better', 'sqlite3', 'rebuild']);
    expect(pruneTerms(terms, df, 10_000).dropped).toEqual([]);
    // However common every term is, the rarest is still asked for.
    expect(pruneTerms(terms, df, 1).kept.map((t) => t.text)).toEqual(['rebuild']);
  });

  it('stopwords and one-letter pieces are not asked for; phrases come before their pieces', () => {
    expect(queryTerms('the fix for a src/auth bug in x', 32).map((t) => t.text)).toEqual(['src/auth', 'src', 'auth', 'bug']);
    expect(queryTerms('useCartStore', 32).map((t) => t.tokens)).toEqual([['usecartstore'], ['use', 'cart', 'store'], ['cart'], ['store']]);
  });
});

describe('indexable text and paths', () => {
  it.each([
    { word: 'refreshToken', parts: ['refresh', 'Token'] },
    { word: 'HTTPServer', parts: ['HTTP', 'Server'] },
    { word: 'useCartStore2', parts: ['use', 'Cart', 'Store2'] },
    { word: 'plain', parts: [] },
    { word: 'ECONNREFUSED', parts: [] },
  ])('camelParts($word)', ({ word, parts }) => expect(camelParts(word)).toEqual(parts));

  it('camelCase parts are appended once; text without any is unchanged', () => {
    expect(indexableText('call refreshToken then refreshToken')).toBe('call refreshToken then refreshToken\nrefresh token');
    expect(indexableText('no camel here')).toBe('no camel here');
  });

  it('paths in text', () => {
    expect(pathsInText('see src/auth/jwt.ts and ./src/api/ but a/b? yes a/b, @/utils/format')).toEqual(['src/auth/jwt.ts', './src/api/', 'a/b', '@/utils/format']);
    expect(pathsInText('no paths')).toEqual([]);
  });
});

describe('scope: whole path segments', () => {
  it.each([
    { path: 'src/auth/jwt.ts', scope: 'src/auth', expected: true },
    { path: './src/auth/', scope: 'src/auth', expected: true },
    { path: 'src/auth', scope: 'src/auth/', expected: true },
    { path: 'packages/api/src/auth/x.ts', scope: 'src/auth', expected: true },
    { path: 'src/authz/x.ts', scope: 'src/auth', expected: false },
    { path: 'src/auth-old/x.ts', scope: 'src/auth', expected: false },
    { path: 'lib/src/x/auth', scope: 'src/auth', expected: false },
    { path: 'src\\auth\\jwt.ts', scope: 'src/auth', expected: true },
  ])('$path under $scope: $expected', ({ path, scope, expected }) => {
    expect(underScope(path, parseScope(scope)[0] as string[])).toBe(expected);
  });

  it('parseScope splits on commas and drops empty entries', () => {
    expect(parseScope(' src/auth , ,./src/api/ ')).toEqual([['src', 'auth'], ['src', 'api']]);
  });

  it('a signal from the own path, a component path, or a path the text names', () => {
    const scopes = parseScope('src/auth');
    expect(scopeSignal({ paths: ['bazinga/artifacts/S/x.md', 'src/auth/'], texts: [] }, scopes)).toBe(1);
    expect(scopeSignal({ paths: ['bazinga/artifacts/S/x.md'], texts: ['edited src/auth/jwt.ts'] }, scopes)).toBe(1);
    expect(scopeSignal({ paths: ['bazinga/artifacts/S/x.md'], texts: ['edited src/authz/jwt.ts'] }, scopes)).toBe(0);
    expect(scopeSignal({ paths: ['src/auth/x'], texts: [] }, [])).toBe(0);
  });
});

describe('normalisation and the implicit task', () => {
  it('the best hit is 1, the others a fraction of it', () => {
    const m = normaliseBm25([{ key: 'a', bm25: -4 }, { key: 'b', bm25: -1 }, { key: 'c', bm25: -0 }]);
    expect([...m]).toEqual([['a', 1], ['b', 0.25], ['c', 0]]);
    expect(normaliseBm25([])).toEqual(new Map());
  });

  it('the implicit task joins group name, component path, (on a retry) the latest failures, specialization names and requirements', () => {
    const base = {
      groupName: 'JWT authentication',
      componentPath: 'src/auth/',
      specializations: ['bazinga/templates/specializations/typescript.md', 'react-native'],
      requirements: 'Add JWT auth',
      latestFailures: 'refresh reuse undetected',
    };
    expect(implicitTask({ ...base, iteration: 0 })).toBe('JWT authentication\nsrc/auth/\ntypescript react-native\nAdd JWT auth');
    expect(implicitTask({ ...base, iteration: 2 })).toBe('JWT authentication\nsrc/auth/\nrefresh reuse undetected\ntypescript react-native\nAdd JWT auth');
    expect(implicitTask({ groupName: null, componentPath: null, specializations: [], requirements: ' ', latestFailures: null, iteration: 1 })).toBe('');
  });

  it('stored string lists (specializations, references) are read leniently', () => {
    expect(parseStringList('["a/b.md", 3]')).toEqual(['a/b.md']);
    expect(parseStringList('not json')).toEqual([]);
    expect(parseStringList(null)).toEqual([]);
  });

  it('markedTerms reads highlight() output', () => {
    expect(markedTerms('a \u0001Refresh\u0002 b \u0001token\u0002 \u0001refresh\u0002')).toEqual(['refresh', 'token']);
  });
});

describe('provesExact: an unread package cannot displace the last selected one', () => {
  const sel = (score: number, created: string, id: number, priority = 'high'): RankedPackage => ({
    id,
    priority,
    package_type: 'research',
    file_path: 'x',
    summary: 's',
    group_id: 'G',
    created_at: created,
    score,
  });
  const tail = (heuristic: number, created: string, id: number, extra: Partial<BucketTail> = {}): BucketTail => ({
    priority: 'high',
    heuristic,
    createdMs: Date.parse(created.replace(' ', 'T') + 'Z'),
    id,
    scopePossible: false,
    ...extra,
  });
  const last = [sel(20, '2025-12-01 10:00:00', 9)];
  const w = DEFAULT_CONFIG.ranking.weights;
  it.each([
    { name: 'no bucket read to its bound', tails: [], bound: 0.9, expected: true },
    { name: 'bound below the last score', tails: [tail(15, '2025-12-01 09:00:00', 3)], bound: 0, expected: true },
    { name: 'relevance could lift it past', tails: [tail(15, '2025-12-01 09:00:00', 3)], bound: 6 / w.relevance, expected: false },
    { name: 'scope could lift it past', tails: [tail(19, '2025-12-01 09:00:00', 3, { scopePossible: true })], bound: 0, expected: false },
    { name: 'equal score, tail older than the last', tails: [tail(20, '2025-12-01 09:00:00', 3)], bound: 0, expected: true },
    { name: 'equal score, tail newer than the last', tails: [tail(20, '2025-12-01 11:00:00', 3)], bound: 0, expected: false },
    { name: 'the tail is the last selected', tails: [tail(20, '2025-12-01 10:00:00', 9)], bound: 0, expected: true },
  ])('$name → $expected', ({ tails, bound, expected }) => {
    expect(provesExact(last, 1, tails, bound, 'Normal', DEFAULT_CONFIG)).toBe(expected);
  });

  it('fewer selected than the limit with a bucket read to its bound is not proven', () => {
    expect(provesExact(last, 2, [tail(1, '2025-12-01 09:00:00', 3)], 0, 'Normal', DEFAULT_CONFIG)).toBe(false);
  });

  it('Conservative: a lower rung never displaces a higher one; low buckets never count', () => {
    const crit = [sel(10, '2025-12-01 10:00:00', 9, 'critical')];
    expect(provesExact(crit, 1, [tail(30, '2025-12-01 11:00:00', 3, { priority: 'high' })], 1, 'Conservative', DEFAULT_CONFIG)).toBe(true);
    expect(provesExact(crit, 1, [tail(30, '2025-12-01 11:00:00', 3, { priority: 'low' })], 1, 'Conservative', DEFAULT_CONFIG)).toBe(true);
    const high = [sel(10, '2025-12-01 10:00:00', 9, 'high')];
    expect(provesExact(high, 1, [tail(5, '2025-12-01 11:00:00', 3, { priority: 'critical' })], 0, 'Conservative', DEFAULT_CONFIG)).toBe(false);
  });
});

describe('holdsWord: a word found by searching, as wordsOf would split it', () => {
  // Letters and digits of several scripts (astral ones included), separators, and case changes.
  const piece = fc.constantFrom('auth', 'Auth', 'token', 'tok', 'en', '𝐀𝐁', 'İ', 'ß', 'ǅ', '日本', '42', '_', '-', ' ', '/', '.', '\u0301', '\ud835', 'é');
  const text = fc.array(piece, { maxLength: 14 }).map((parts) => parts.join(''));

  it('agrees with wordsOf(text).has(word) for every word of the text and for others', () => {
    fc.assert(
      fc.property(text, fc.array(fc.constantFrom('auth', 'token', 'tok', 'authtoken', '42auth', '日本', '𝐚𝐛', 'i̇', 'ss', 'ǆ'), { maxLength: 4 }), (t, others) => {
        const words = wordsOf(t);
        for (const w of new Set([...words, ...others])) {
          // wordsOf's words are runs of 3 or more letters and digits; the others are asked as they are.
          if (!/^[\p{L}\p{N}]{3,}$/u.test(w)) continue;
          expect(holdsWord(t.toLowerCase(), w), `${JSON.stringify(t)} / ${w}`).toBe(words.has(w));
        }
      }),
      { numRuns: 2000, seed: 27 },
    );
  });

  it('cases by hand: inside a longer word it is not held, beside punctuation or an astral letter it is told apart', () => {
    expect(holdsWord('refresh token rotation', 'token')).toBe(true);
    expect(holdsWord('refreshtoken rotation', 'token')).toBe(false);
    expect(holdsWord('tokens', 'token')).toBe(false);
    expect(holdsWord('(token)', 'token')).toBe(true);
    expect(holdsWord('𝐀token', 'token')).toBe(false);
    expect(holdsWord('token𝐀 token', 'token')).toBe(true);
  });
});
