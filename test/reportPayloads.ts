/**
 * Hostile texts for the report (report.markdown.test.ts): a corpus of markdown and HTML payloads and
 * a seed that writes one session with a text in every field the report reads, with real SQLite.
 */
import Database from 'better-sqlite3';
import type { Project } from './helpers.ts';

/** Markdown and HTML that would change a document's structure or reach out, in every shape a field could carry. */
export const PAYLOADS = [
  '![x](https://evil.example/p.png)',
  '<img src=x onerror=alert(1)>',
  '[x](javascript:alert(1))',
  'developer\n# Injected',
  '\n## Injected heading',
  'a | b | c',
  'ends with a backslash \\',
  '\\| escaped pipe',
  '<script>alert(1)</script>',
  '<details open><summary>x</summary>',
  '</td></tr></table><table>',
  '<https://evil.example/autolink>',
  'https://evil.example/bare.png',
  'see www.evil.example/x',
  '&lt;img src=x&gt; &#60;b&#62; &amp;',
  '`code` ```fence```',
  '**bold** _em_ ~~strike~~ *i*',
  '[ref]: https://evil.example/def',
  'x[^1] [x][y] [x]',
  '\r\n- list item\r\n> quote',
  '\n---\n===',
  '\n    indented code',
  '<!-- comment -->',
  '$x^2$ $$y$$',
  'line\u2028# separator',
  '\n| --- | --- |\n| a | b |',
  '\n1. ordered\n+ plus',
  'data:text/html,<script>',
  '<a href="https://evil.example">x</a>',
  '\\_\\*\\[ pre-escaped',
  'title ##',
  '#',
  '',
  '<',
  '   ',
  '__init__',
  '_edge_',
  '<?php x ?>',
  '<x:y>',
  'trailing spaces  \nnext',
  '\\\n# after a backslash',
  '"quotes" \'single\' `tick',
  '\t# tab',
  'ftp://evil.example/f',
] as const;

/** The fields the seed fills, in the order of the rotation. */
export const FIELDS = [
  'session_id', 'start_time', 'status', 'project_id',
  'group_id', 'group_name', 'group_status', 'group_review', 'group_revisions', 'group_qa',
  'package_group', 'package_type', 'package_priority', 'package_file', 'package_summary',
  'pattern_hash', 'error_type', 'error_message', 'pattern_last_seen',
  'created_at', 'agent_type', 'iteration', 'source', 'outcome', 'reason', 'purpose', 'zone', 'usage_pct', 'budget', 'version',
  'shown_kind', 'shown_id', 'shown_reasoning_id', 'shown_strategy_id', 'left_kind', 'left_id', 'left_reason', 'count_key',
  'query_source', 'query_term', 'query_term_2', 'query_scope', 'query_scope_source', 'model', 'builder_kind', 'builder_id', 'builder_reason',
  'wide_agent', 'wide_created_at', 'wide_reason',
] as const;
export type Field = (typeof FIELDS)[number];

/** Session `i`'s text for each field. */
export type Texts = (field: Field) => string;
export const hostile = (i: number): Texts => (field) => PAYLOADS[(i + FIELDS.indexOf(field)) % PAYLOADS.length] as string;
export const plain = (i: number): Texts => (field) => `w${i}${field.replace(/_/g, '')}`;
/** A session id usable as --session (the flag's value is trimmed) holding the payload whole. */
export const sessionIdOf = (i: number, t: Texts) => `S${i}[${t('session_id')}]E`;

/** Writes session `i` with its texts `t`: every field the report reads, with real SQLite. */
export function seed(db: Database.Database, i: number, t: Texts): void {
  const id = sessionIdOf(i, t);
  // A project id must be a non-empty string to keep the session to its project: it gets a prefix.
  const project = `P${i}${t('project_id')}`;
  db.prepare("INSERT INTO sessions (session_id, start_time, mode, original_requirements, status, metadata) VALUES (?, ?, 'simple', 'x', ?, ?)").run(id, t('start_time'), t('status'), JSON.stringify({ project_id: project }));
  db.prepare('INSERT INTO task_groups (id, session_id, name, status, last_review_status, revision_count, qa_attempts) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
    t('group_id'), id, t('group_name'), t('group_status'), t('group_review'), t('group_revisions'), t('group_qa'));
  db.prepare("INSERT INTO context_packages (session_id, group_id, package_type, file_path, producer_agent, priority, summary) VALUES (?, ?, ?, ?, 'requirements_engineer', ?, ?)").run(
    id, t('package_group'), t('package_type'), t('package_file'), t('package_priority'), t('package_summary'));
  db.prepare("INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, lang, last_seen, created_at, ttl_days) VALUES (?, ?, ?, 's', 0.9, 2, NULL, ?, '2025-12-01 09:00:00', 90)").run(
    t('pattern_hash'), project, JSON.stringify({ error_type: t('error_type'), message_pattern: t('error_message') }), t('pattern_last_seen'));
  const detail = {
    sections: { packages: 3, reasoning: 2, error_patterns: 1, strategies: 1, memories: 0 },
    shown: [
      { kind: t('shown_kind'), id: t('shown_id'), tier: 1, tokens: 5 },
      { kind: 'reasoning', id: t('shown_reasoning_id'), tier: 2, tokens: 4 },
      { kind: 'strategy', id: t('shown_strategy_id'), tier: 3, tokens: 3 },
      { kind: 'package', id: 999999, tier: 1, tokens: 2 },
    ],
    left_out: [{ kind: t('left_kind'), id: t('left_id'), reason: t('left_reason'), tier: 2 }],
    left_out_counts: { [t('count_key')]: 2 },
    query: { source: t('query_source'), terms: [t('query_term'), t('query_term_2')], scope: [t('query_scope')], scope_source: t('query_scope_source') },
    delivered: [],
    model: t('model'),
    builder: { items: 3, left_out: [{ kind: t('builder_kind'), id: t('builder_id'), reason: t('builder_reason') }] },
  };
  const insert = db.prepare(`INSERT INTO ca_assemblies (created_at, session_id, group_id, agent_type, iteration, source, outcome, reason, purpose, zone, usage_pct, budget, used_tokens, overrun, prompt_tokens, duration_ms, version, detail)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 10, 0, NULL, 3.5, ?, ?)`);
  insert.run(t('created_at'), id, t('group_id'), t('agent_type'), t('iteration'), t('source'), t('outcome'), t('reason'), t('purpose'), t('zone'), t('usage_pct'), t('budget'), t('version'), JSON.stringify(detail));
  // A session-wide fallback: its line in the fallbacks list.
  insert.run(t('wide_created_at'), id, null, t('wide_agent'), 0, 'assemble', 'fallback', t('wide_reason'), null, null, null, null, '0.1.0', '{}');
}

export function seedAll(p: Project, texts: (i: number) => Texts): void {
  const db = new Database(p.dbPath);
  try {
    // The columns BAZINGA's schema limits to a list (status, package_type, source, …) hold anything here.
    db.pragma('ignore_check_constraints = ON');
    db.transaction(() => {
      for (let i = 0; i < PAYLOADS.length; i++) seed(db, i, texts(i));
    })();
  } finally {
    db.close();
  }
}

