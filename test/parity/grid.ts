/**
 * The parity grid: one BAZINGA session written as its agents write it, with the spawns at which
 * the builder's own context section is the floor the product's block must meet. Plain
 * data, shared by `npm run eval:parity` (every write through the real `bazinga_db.py`, the real
 * prompt builder) and test/parity.floor.test.ts (this product's bazinga-db, the stand-in builder).
 *
 * Scenarios, in the order the session runs them:
 *   - setup: groups, and what earlier sessions left: error patterns and strategies saved under the
 *     project ids agents pass (`acme-web`, and `acme-api`, another project in the same database),
 *     confirmed until the builder shows them (confidence above 0.7); the session itself records none;
 *   - first-qa-retry: a developer's first spawn, QA after the developer's completion, a developer
 *     retry after QA failed (params with `qa_feedback`), first with the revision count as it was,
 *     then raised;
 *   - respawn: the same developer spawn (agent, group, revision, params) after one new package;
 *   - review: QA re-run after the fix (params byte-identical to its first run), the tech lead;
 *     packages whose consumer lists name other agents;
 *   - escalation: an investigator and a senior engineer on a group that failed twice;
 *   - crowded: a group of 12 packages and 6 long reasoning entries, where the builder's context
 *     budget binds (haiku: 315 tokens for a developer), and one spawn under a file-read limit small
 *     enough that the builder drops its whole context section.
 */

export type Agent = 'developer' | 'senior_software_engineer' | 'qa_expert' | 'tech_lead' | 'investigator' | 'requirements_engineer' | 'project_manager';
export type Priority = 'critical' | 'high' | 'medium' | 'low';
export type PackageType = 'research' | 'failures' | 'decisions' | 'handoff' | 'investigation';
export type Phase = 'understanding' | 'approach' | 'decisions' | 'risks' | 'blockers' | 'pivot' | 'completion';

/** One write, as BAZINGA's agents and orchestrator make it through the bazinga-db skill. */
export type Write =
  | { do: 'group'; group: string; name: string; specializations?: string[] }
  /** save-context-package; `group` 'global' for a session-wide package. `file` is under the session's artifacts folder. */
  | { do: 'package'; group: string; type: PackageType; producer: Agent; consumers: Agent[]; priority: Priority; file: string; summary: string; body: string }
  | { do: 'reasoning'; group: string; agent: Agent; phase: Phase; content: string }
  /** save-error-pattern under a project id, `saves` times; then update-error-confidence … success `confirmations` times. */
  | { do: 'error-pattern'; project: string; errorType: string; message: string; solution: string; saves: number; confirmations: number; lang?: string }
  | { do: 'strategy'; project: string; topic: string; insight: string; lang?: string; framework?: string }
  /** update-task-group (the orchestrator raises revision_count before a retry it sends back). */
  | { do: 'update-group'; group: string; revisionCount?: number; status?: string; qaAttempts?: number; lastReviewStatus?: 'APPROVED' | 'CHANGES_REQUESTED' };

export interface Spawn {
  do: 'spawn';
  /** Short id in the table (A1, …). */
  id: string;
  agent: Agent;
  group: string;
  /** What the spawn is, in a few words. */
  what: string;
  model?: 'haiku' | 'sonnet' | 'opus';
  qaFeedback?: string;
  tlFeedback?: string;
  /** 'drop-context': a BAZINGA_PROMPT_FILE_LIMIT just small enough that the builder drops its context section (measured per spawn). */
  fileLimit?: 'drop-context';
}

export type Step = Write | Spawn;

export interface Scenario {
  name: string;
  steps: Step[];
}

export const SESSION = 'bazinga_20260115_093000';
export const REQUIREMENTS = 'Login with rotating refresh tokens, an offline cart, and the catalogue import';
export const TASKS: Readonly<Record<string, { title: string; requirements: string }>> = {
  AUTH: { title: 'Login flow with refresh tokens', requirements: 'Users stay logged in for 14 days; refresh tokens rotate on every use and reuse revokes the family.' },
  CART: { title: 'Offline cart', requirements: 'The cart survives going offline and merges per line item on reconnect.' },
  BULK: { title: 'Catalogue import', requirements: 'Import the supplier CSV (200k rows) nightly; bad rows are reported, never silently dropped.' },
};

const TYPESCRIPT = 'bazinga/templates/specializations/01-languages/typescript.md';
const QA_FEEDBACK_AUTH = "TypeError: Cannot read properties of undefined (reading 'refreshToken') at /app/src/auth/refresh.ts line 42 - 3 of 17 auth tests fail when the Redis session expired before the refresh";

/** A summary past BAZINGA's 200-character storing rule (stored as 197 characters and `...`). */
const long = (head: string) => `${head} ${'Details: the import keeps a per-row ledger so a failed batch can be replayed without duplicates, and each rejected row is written with its line number and the rule it broke. '.repeat(2)}Conclusion: ${head.toLowerCase()}`;

const crowdedPackages: Write[] = [
  ['failures', 'qa_expert', ['developer'], 'critical', 'qa-failures-encoding.md', 'QA FAIL: 41 rows with Windows-1252 quotes are dropped without a report; the importer reads the file as UTF-8'],
  ['research', 'requirements_engineer', ['developer'], 'high', 'supplier-format.md', 'Supplier CSV format: semicolon separated, decimal comma, quoted fields may contain line breaks'],
  ['decisions', 'tech_lead', ['developer', 'senior_software_engineer'], 'medium', 'batching-decision.md', 'Batch size 5000 rows per transaction; a failed batch is retried row by row'],
  ['research', 'investigator', ['tech_lead'], 'high', 'memory-profile.md', 'Memory profile of the current importer: 1.8 GB peak at 200k rows, streaming parser needed'],
  ['handoff', 'developer', ['qa_expert'], 'medium', 'handoff-streaming.md', 'Streaming parser in place; run npm test -- import; fixtures under test/fixtures/supplier'],
  ['failures', 'qa_expert', ['developer', 'tech_lead'], 'critical', 'qa-failures-duplicates.md', 'QA FAIL: replaying a failed batch inserts 312 duplicate products; the ledger is written after the commit'],
  ['research', 'requirements_engineer', ['developer'], 'low', 'legacy-importer-notes.md', 'Notes on the legacy PHP importer and its undocumented column order'],
  ['decisions', 'project_manager', ['developer', 'qa_expert'], 'medium', 'report-format.md', 'Rejected rows go to a CSV report mailed to the supplier contact'],
  ['investigation', 'investigator', ['senior_software_engineer'], 'high', 'encoding-root-cause.md', 'Root cause of dropped rows: the BOM check consumes the first byte of Windows-1252 files'],
  ['research', 'requirements_engineer', ['qa_expert'], 'low', 'volume-estimates.md', 'Volume estimates: 200k rows nightly, 1.2M at the quarterly full refresh'],
  ['decisions', 'tech_lead', ['developer'], 'medium', 'idempotency-decision.md', 'Every product row is upserted on (supplier_id, sku); the ledger keys batches by file hash'],
  ['research', 'developer', ['tech_lead'], 'low', 'benchmark-notes.md', 'Benchmark: streaming parser imports 200k rows in 94 s on the staging database'],
].map(([type, producer, consumers, priority, file, head]) => ({
  do: 'package' as const,
  group: 'BULK',
  type: type as PackageType,
  producer: producer as Agent,
  consumers: consumers as Agent[],
  priority: priority as Priority,
  file: `BULK/${file as string}`,
  summary: long(head as string),
  body: `# ${head as string}\n\n${long(head as string)}\n`,
}));

const longReasoning = (text: string) => `${text}\n\n## Evidence\n${'The nightly run on staging logged the same sequence three times in a row, with the batch ids and row counts recorded. '.repeat(2)}\n\nConclusion: ${text.split('.')[0]}.`;

export const GRID: readonly Scenario[] = [
  {
    name: 'setup',
    steps: [
      { do: 'group', group: 'AUTH', name: TASKS.AUTH!.title, specializations: [TYPESCRIPT] },
      { do: 'group', group: 'CART', name: TASKS.CART!.title },
      { do: 'group', group: 'BULK', name: TASKS.BULK!.title },
      // Earlier sessions' fail-then-succeed flows, saved under the project id the agents pass.
      { do: 'error-pattern', project: 'acme-web', errorType: 'TypeError', message: "Cannot read properties of undefined (reading 'refreshToken') at /app/src/auth/refresh.ts line 42", solution: 'Load the session before reading refreshToken; an expired Redis session returns 401 SESSION_EXPIRED', saves: 2, confirmations: 4, lang: 'typescript' },
      { do: 'error-pattern', project: 'acme-web', errorType: 'Error', message: "Cannot find module '@/lib/session' from /app/src/auth/index.ts line 7", solution: 'Map @/ in vitest.config.ts resolve.alias as tsconfig paths do', saves: 1, confirmations: 4, lang: 'typescript' },
      // The same fault saved under another project id: two rows, one fault.
      { do: 'error-pattern', project: 'acme-api', errorType: 'Error', message: "Cannot find module '@/lib/session' from /app/src/auth/index.ts line 7", solution: 'Map @/ in vitest.config.ts resolve.alias as tsconfig paths do', saves: 1, confirmations: 4, lang: 'typescript' },
      { do: 'error-pattern', project: 'acme-api', errorType: 'ModuleNotFoundError', message: "No module named 'jwt' in /srv/api/auth.py line 3", solution: 'pip install PyJWT and pin it in requirements.txt', saves: 1, confirmations: 3, lang: 'python' },
      { do: 'error-pattern', project: 'acme-web', errorType: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:5432', solution: 'Start Postgres (docker compose up db) before the integration tests', saves: 1, confirmations: 3 },
      { do: 'strategy', project: 'acme-web', topic: 'implementation', insight: 'Rotate refresh tokens on every use and revoke the whole family when an old one comes back', lang: 'typescript', framework: 'express' },
      { do: 'strategy', project: 'acme-web', topic: 'methodology', insight: 'Write the failing integration test before touching the auth middleware' },
      { do: 'strategy', project: 'acme-api', topic: 'architecture', insight: 'Keep JWT verification in one middleware', lang: 'python' },
    ],
  },
  {
    name: 'first-qa-retry',
    steps: [
      { do: 'package', group: 'global', type: 'research', producer: 'project_manager', consumers: ['developer', 'senior_software_engineer'], priority: 'medium', file: 'architecture.md', summary: 'Architecture: sessions live in Redis (30 min TTL); access tokens are RS256 JWTs (15 min); refresh tokens are opaque and stored hashed', body: '# Architecture\n\nSessions live in Redis.\n' },
      { do: 'package', group: 'AUTH', type: 'research', producer: 'requirements_engineer', consumers: ['developer'], priority: 'high', file: 'AUTH/oauth-rotation.md', summary: 'OAuth 2.1 refresh rotation: issue a new refresh token on every use; reuse of an old one revokes the family (RFC 6819 5.2.2.3)', body: '# Refresh rotation\n\nIssue a new token on every use.\n' },
      { do: 'spawn', id: 'A1', agent: 'developer', group: 'AUTH', what: 'developer, first spawn' },
      { do: 'reasoning', group: 'AUTH', agent: 'developer', phase: 'understanding', content: 'Refresh tokens must rotate on every use; reuse of an old token revokes the family. Sessions are in Redis with a 30 minute TTL.' },
      { do: 'reasoning', group: 'AUTH', agent: 'developer', phase: 'approach', content: 'Add rotateRefreshToken() in auth/refresh.ts:\n1. look up the token hash\n2. issue the new pair\n3. mark the old one used\n\n## Risks\ntwo tabs refreshing at once' },
      { do: 'reasoning', group: 'AUTH', agent: 'developer', phase: 'completion', content: 'Implemented rotation and reuse detection; 14 tests pass locally (`npm test -- auth`).' },
      { do: 'package', group: 'AUTH', type: 'handoff', producer: 'developer', consumers: ['qa_expert'], priority: 'high', file: 'AUTH/handoff-developer.md', summary: 'Rotation in auth/refresh.ts, reuse detection in refresh.reuse.test.ts; run npm test -- auth', body: '# Handoff\n\nRun `npm test -- auth`.\n' },
      { do: 'spawn', id: 'A2', agent: 'qa_expert', group: 'AUTH', what: "QA after the developer's completion" },
      { do: 'reasoning', group: 'AUTH', agent: 'qa_expert', phase: 'blockers', content: "3 of 17 auth tests fail: TypeError reading 'refreshToken' of undefined at refresh.ts:42 when the session expired." },
      { do: 'package', group: 'AUTH', type: 'failures', producer: 'qa_expert', consumers: ['developer'], priority: 'critical', file: 'AUTH/qa-failures.md', summary: "QA FAIL: 3/17 tests fail; TypeError reading 'refreshToken' of undefined in auth/refresh.ts line 42 when the Redis session expired before the refresh", body: '# QA failures\n\n3 of 17 fail.\n' },
      { do: 'update-group', group: 'AUTH', qaAttempts: 1 },
      { do: 'spawn', id: 'A3', agent: 'developer', group: 'AUTH', what: 'developer retry after QA failed, revision count not raised', qaFeedback: QA_FEEDBACK_AUTH },
      { do: 'update-group', group: 'AUTH', revisionCount: 1 },
      { do: 'spawn', id: 'A4', agent: 'developer', group: 'AUTH', what: 'developer retry, revision count raised to 1', qaFeedback: QA_FEEDBACK_AUTH },
    ],
  },
  {
    name: 'respawn',
    steps: [
      { do: 'package', group: 'AUTH', type: 'research', producer: 'investigator', consumers: ['developer'], priority: 'medium', file: 'AUTH/redis-ttl.md', summary: 'Redis TTL is 30 min while refresh tokens live 14 days: an expired session is the normal case, not an error path', body: '# TTLs\n\nExpired sessions are normal.\n' },
      { do: 'spawn', id: 'B1', agent: 'developer', group: 'AUTH', what: 'the same developer spawn after one new package', qaFeedback: QA_FEEDBACK_AUTH },
    ],
  },
  {
    name: 'review',
    steps: [
      { do: 'reasoning', group: 'AUTH', agent: 'developer', phase: 'decisions', content: 'Return 401 with code SESSION_EXPIRED when the session is gone; the client re-authenticates.' },
      { do: 'reasoning', group: 'AUTH', agent: 'developer', phase: 'completion', content: 'Fixed: the session is loaded before refreshToken is read; 17/17 auth tests pass.' },
      { do: 'spawn', id: 'C1', agent: 'qa_expert', group: 'AUTH', what: "QA re-run after the fix (the params of its first run)" },
      { do: 'reasoning', group: 'AUTH', agent: 'qa_expert', phase: 'completion', content: 'All 17 auth tests pass; reuse detection verified with two tabs refreshing at once.' },
      { do: 'update-group', group: 'AUTH', qaAttempts: 2 },
      { do: 'spawn', id: 'C2', agent: 'tech_lead', group: 'AUTH', what: 'tech lead review' },
    ],
  },
  {
    name: 'escalation',
    steps: [
      { do: 'package', group: 'CART', type: 'research', producer: 'requirements_engineer', consumers: ['developer'], priority: 'high', file: 'CART/offline-storage.md', summary: 'IndexedDB through idb-keyval; carts sync on reconnect, last write wins per line item', body: '# Offline storage\n' },
      { do: 'package', group: 'CART', type: 'decisions', producer: 'project_manager', consumers: ['developer', 'tech_lead'], priority: 'medium', file: 'CART/merge-decision.md', summary: 'Cart conflicts resolve per line item; quantities never go negative', body: '# Merge\n' },
      { do: 'spawn', id: 'D1', agent: 'developer', group: 'CART', what: 'developer, first spawn on another group' },
      { do: 'reasoning', group: 'CART', agent: 'developer', phase: 'approach', content: 'Queue cart mutations in IndexedDB and replay them on the online event.' },
      { do: 'reasoning', group: 'CART', agent: 'developer', phase: 'blockers', content: "Replay races with the service worker's background sync; duplicate line items appear after reconnect." },
      { do: 'package', group: 'CART', type: 'failures', producer: 'qa_expert', consumers: ['developer'], priority: 'critical', file: 'CART/qa-failures.md', summary: 'QA FAIL: duplicate line items after reconnect (2 of 9 offline tests); replay and background sync both apply the queue', body: '# QA failures\n' },
      { do: 'reasoning', group: 'CART', agent: 'qa_expert', phase: 'blockers', content: 'Duplicate items reproduce in 2 of 5 runs on reconnect; suspect a double replay.' },
      { do: 'update-group', group: 'CART', revisionCount: 2, qaAttempts: 2 },
      { do: 'spawn', id: 'D2', agent: 'investigator', group: 'CART', what: 'investigator after two failed rounds' },
      { do: 'package', group: 'CART', type: 'investigation', producer: 'investigator', consumers: ['senior_software_engineer'], priority: 'high', file: 'CART/root-cause.md', summary: 'Root cause: both the online handler and the service worker sync event replay the queue; mutations carry no idempotency key', body: '# Root cause\n' },
      { do: 'reasoning', group: 'CART', agent: 'investigator', phase: 'completion', content: 'Hypothesis confirmed by logging both replay paths on reconnect.' },
      { do: 'update-group', group: 'CART', revisionCount: 3 },
      { do: 'spawn', id: 'D3', agent: 'senior_software_engineer', group: 'CART', what: 'senior engineer escalation', qaFeedback: 'Duplicate line items after reconnect (2 of 9 offline tests)' },
    ],
  },
  {
    name: 'crowded',
    steps: [
      ...crowdedPackages,
      { do: 'reasoning', group: 'BULK', agent: 'developer', phase: 'understanding', content: longReasoning('The importer must stream the file; loading 200k rows at once peaks at 1.8 GB.') },
      { do: 'reasoning', group: 'BULK', agent: 'developer', phase: 'approach', content: longReasoning('Parse with a streaming CSV reader and commit every 5000 rows in one transaction.') },
      { do: 'reasoning', group: 'BULK', agent: 'qa_expert', phase: 'blockers', content: longReasoning('Replaying a failed batch inserts duplicates because the ledger is written after the commit.') },
      { do: 'reasoning', group: 'BULK', agent: 'senior_software_engineer', phase: 'decisions', content: longReasoning('Write the ledger row in the same transaction as the batch so a replay skips it.') },
      { do: 'reasoning', group: 'BULK', agent: 'developer', phase: 'completion', content: longReasoning('Ledger moved into the batch transaction; replay test passes 20 of 20 runs.') },
      { do: 'reasoning', group: 'BULK', agent: 'qa_expert', phase: 'completion', content: longReasoning('Encoding fix verified on the three supplier sample files; no dropped rows.') },
      { do: 'spawn', id: 'E1', agent: 'developer', group: 'BULK', model: 'haiku', what: 'crowded group, haiku developer (context budget 315 tokens)' },
      { do: 'spawn', id: 'E2', agent: 'qa_expert', group: 'BULK', what: 'crowded group, QA (540 tokens)' },
      { do: 'spawn', id: 'E3', agent: 'tech_lead', group: 'BULK', model: 'opus', what: 'crowded group, opus tech lead (960 tokens)' },
      { do: 'spawn', id: 'E4', agent: 'developer', group: 'BULK', what: 'crowded group under a file-read limit that drops the context section', fileLimit: 'drop-context' },
    ],
  },
];

/** The spawns the offline floor test drives (a few of each kind; each costs a hook process). */
export const OFFLINE_SPAWNS: readonly string[] = ['A1', 'A2', 'A3', 'B1', 'C2', 'D3', 'E1'];
