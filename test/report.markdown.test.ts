/**
 * The markdown report is inert: whatever the database holds, the document has exactly the structure
 * it has with plain text (its headings, table rows and cells, list items and paragraphs), no link,
 * image, autolink or HTML of the data's, and still shows each text. A corpus of markdown and HTML
 * payloads goes into every field the report reads (sessions, task_groups, context_packages,
 * error_patterns, ca_assemblies and every part of its detail: shown and left-out items, their
 * kinds, ids and reasons, the counts' keys, the query, BAZINGA's own section), written with real
 * SQLite (CHECKs set aside for the columns BAZINGA's schema limits to a list: a hand-edited or
 * foreign row can hold anything); session i gives field k payload (i + k) mod n, so every field
 * holds every payload once. Each session is reported twice, from that database and from one with
 * plain words in the same places, and the two documents are compared by a small structural reader.
 * The HTML report is compared the same way (its sequence of tags). Display only: the JSON report
 * carries the stored texts unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markdownText } from '../skills/context-assembler/scripts/lib/report/markdownText.ts';
import type { Project } from './helpers.ts';
import { copyIndexedFixture } from './inProcess.ts';
import { hostile, PAYLOADS, plain, seed, seedAll, sessionIdOf, type Field, type Texts } from './reportPayloads.ts';
import { report } from './reportSeed.ts';

/** ASCII punctuation: what a backslash escapes in CommonMark. */
const isPunctuation = (c: string | undefined) => c !== undefined && /^[!-/:-@[-`{-~]$/.test(c);
const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/**
 * What a markdown line is, by CommonMark and GitHub's tables: its block (a heading and its level,
 * a table row and its cells, a list item, a paragraph line, a blank line), and the characters that
 * could start inline markup, in order, escaped ones left out: `|` (a cell), `[` `]` (links, images,
 * footnotes), `` ` `` (code), `*` `~` (emphasis), `_` (emphasis, unless between two letters or
 * digits), `<` before a letter, `/`, `!` or `?` (HTML, autolinks), `&` (entities), `$` (math), `#`,
 * `@` (mail autolinks), `://` and `www.` (bare autolinks), and a backslash that escapes nothing (at the
 * end of a line: a break).
 */
function lineShape(line: string): string {
  const block = /^(#{1,6})(?:[ \t]|$)/.exec(line)?.[1] ?? (line.startsWith('|') ? 'row' : line.startsWith('- ') ? 'item' : line === '' ? 'blank' : 'text');
  let marks = '';
  let cells = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === '\\' && isPunctuation(line[i + 1])) {
      i++;
      continue;
    }
    if (c === '|') cells++;
    if ('|[]`*~&$#@\\'.includes(c)) marks += c;
    else if (c === '<' && /[A-Za-z/!?]/.test(line[i + 1] ?? '')) marks += c;
    else if (c === '_' && !(isWordChar(line[i - 1]) && isWordChar(line[i + 1]))) marks += c;
    else if (c === ':' && line.startsWith('//', i + 1)) marks += '://';
    else if (c === '.' && /www$/i.test(line.slice(Math.max(0, i - 3), i))) marks += 'www.';
  }
  return `${block}${block === 'row' ? ` ${cells - 1} cells` : ''}: ${marks}`;
}

const shapeOf = (markdown: string) => markdown.split('\n').map(lineShape);

/** The tags of an HTML page, in order (names only: attributes are values, escaped). */
const tagsOf = (html: string) => [...html.matchAll(/<\/?[A-Za-z][A-Za-z0-9-]*/g)].map((m) => m[0]);

/** Markdown's text with its escapes undone: what a reader sees. */
const unescaped = (markdown: string) => markdown.replace(/\\([!-/:-@[-`{-~])/g, '$1');

describe('markdownText: any text, one inert span', () => {
  // Every character markdown gives a meaning somewhere, letters, digits, spaces and line breaks.
  const unit = fc.constantFrom(...'\\|`*_~[]()!<>&#$@:/.-+=^{}"\' \t\r\n\u2028\u2029'.split(''), 'a', 'Z', '0', 'é', 'www', 'http', 'img', 'script', '&lt;', '&#60;');
  it('in a table cell, a heading and a list item: the same block and cells, no mark of its own, and the text shown whole on one line', () => {
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 60 }), (text) => {
        const escaped = markdownText(text);
        expect(escaped).not.toMatch(/[\r\n\u2028\u2029]/);
        expect(lineShape(`| a | ${escaped} |`)).toBe('row 2 cells: |||');
        expect(lineShape(`## Session ${escaped}`)).toBe('##: ##');
        expect(lineShape(`- why: ${escaped}`)).toBe('item: ');
        expect(unescaped(escaped)).toBe(text.replace(/\r\n|[\r\n\u2028\u2029]/g, ' '));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the markdown report is inert', () => {
  let hostileProject: Project;
  let plainProject: Project;
  beforeAll(() => {
    hostileProject = copyIndexedFixture('ca-report-md-hostile-');
    plainProject = copyIndexedFixture('ca-report-md-plain-');
    seedAll(hostileProject, hostile);
    seedAll(plainProject, plain);
  });
  afterAll(() => {
    hostileProject.cleanup();
    plainProject.cleanup();
  });

  it('every payload in every field: the same headings, rows, cells, items and inline marks as with plain text; the HTML the same tags', () => {
    for (let i = 0; i < PAYLOADS.length; i++) {
      const withPayloads = report(hostileProject, ['--session', sessionIdOf(i, hostile(i))]);
      const withWords = report(plainProject, ['--session', sessionIdOf(i, plain(i))]);
      expect(withPayloads.code, withPayloads.err).toBe(0);
      expect(withWords.code, withWords.err).toBe(0);
      const a = shapeOf(withPayloads.out);
      const b = shapeOf(withWords.out);
      expect(a.length, `session ${i}: line count`).toBe(b.length);
      a.forEach((shape, n) => expect(shape, `session ${i}, line ${n + 1}: ${withPayloads.out.split('\n')[n]}`).toBe(b[n]));
      const pages = [hostileProject, plainProject].map((p, k) => {
        const out = path.join(p.root, `page-${i}.html`);
        const id = k === 0 ? sessionIdOf(i, hostile(i)) : sessionIdOf(i, plain(i));
        const r = report(p, ['--session', id, '--format', 'html', '--out', out]);
        expect(r.code, r.err).toBe(0);
        return fs.readFileSync(out, 'utf8');
      });
      expect(tagsOf(pages[0] as string), `session ${i}: HTML tags`).toEqual(tagsOf(pages[1] as string));
    }
  });

  it('each text is still shown, whole, on its line; the JSON report keeps the stored texts unchanged', () => {
    for (let i = 0; i < PAYLOADS.length; i++) {
      const t = hostile(i);
      const md = report(hostileProject, ['--session', sessionIdOf(i, t)]);
      const json = JSON.parse(report(hostileProject, ['--session', sessionIdOf(i, t), '--format', 'json']).out);
      const shown = unescaped(md.out);
      const oneLine = (x: string) => x.replace(/\r\n|[\r\n\u2028\u2029]/g, ' ');
      for (const field of ['package_summary', 'agent_type', 'reason', 'start_time', 'left_id', 'query_term', 'wide_reason'] as const) {
        expect(shown, `session ${i}: ${field}`).toContain(oneLine(t(field)));
      }
      const s = json.sessions[0];
      expect(s.start_time).toBe(t('start_time'));
      expect(s.never_delivered[0].summary).toBe(t('package_summary'));
      expect(s.spawns[0].agent).toBe(t('agent_type'));
      expect(s.spawns[0].left_out[0].id).toBe(t('left_id'));
    }
  });

  it('the example of the finding: a remote image and a raw <img> in a never-delivered summary, a heading in an agent type', () => {
    const q = copyIndexedFixture('ca-report-md-example-');
    try {
      const db = new Database(q.dbPath);
      // Rows as BAZINGA's schema accepts them (every CHECK holds), the texts of the finding in them.
      const texts: Partial<Record<Field, string>> = {
        package_summary: '![x](https://evil.example/p.png) <img src=x onerror=alert(1)>',
        agent_type: 'developer\n# Injected',
        start_time: '2025-12-02\n## Also injected',
        left_id: '<details open>\n# Left out',
        status: 'active', group_status: 'in_progress', group_review: 'CHANGES_REQUESTED', group_revisions: '1', group_qa: '1',
        package_type: 'research', package_priority: 'low', iteration: '1', source: 'assemble', outcome: 'recorded', usage_pct: '1.5', budget: '1000',
      };
      const t: Texts = (field) => texts[field] ?? `w${field}`;
      seed(db, 0, t);
      db.close();
      const r = report(q, ['--session', sessionIdOf(0, t)]);
      expect(r.code, r.err).toBe(0);
      const lines = r.out.split('\n');
      expect(lines.filter((l) => /^#+ (Injected|Also injected|Left out)/.test(l))).toEqual([]);
      const never = lines.slice(lines.findIndex((l) => l.startsWith('### Packages never delivered')));
      const row = never.find((l) => l.startsWith('| ') && l.includes('evil.example')) as string;
      expect(lineShape(row)).toBe(`row 6 cells: ${'|'.repeat(7)}`);
      expect(unescaped(row)).toContain('![x](https://evil.example/p.png) <img src=x onerror=alert(1)>');
      expect(r.out).not.toMatch(/(^|[^\\])!\[|(^|[^\\])<img/);
    } finally {
      q.cleanup();
    }
  });
});
