/**
 * What the task's words earn a package, on real SQLite files: inflections of a query word are
 * asked for with it (only those at least as common as the word itself), and the paths a package's
 * artifact names count when the task names them (ranking.weights.paths). A search index an earlier
 * release built is rebuilt with those paths.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, writeTransaction, type DB } from '../skills/bazinga-db/scripts/lib/db.ts';
import { countRequestPackages, insertConsumer, insertPackage, listConsumedPackages } from '../skills/bazinga-db/scripts/lib/repo/contextPackages.ts';
import { syncSearchIndex } from '../skills/bazinga-db/scripts/lib/repo/searchIndex.ts';
import { planTextQuery } from '../skills/bazinga-db/scripts/lib/repo/textQuery.ts';
import { insertSession } from '../skills/bazinga-db/scripts/lib/repo/sessions.ts';
import { TASK_STOPWORDS, inflectionsOf, queryTerms } from '../skills/bazinga-db/scripts/lib/searchText.ts';
import { DEFAULT_CONFIG, type Config } from '../skills/context-assembler/scripts/lib/config.ts';
import type { AssemblyRequest, RankedPackage } from '../skills/context-assembler/scripts/lib/contract.ts';
import { AVAILABLE_CAP } from '../skills/context-assembler/scripts/lib/pipeline.ts';
import { planSearch, selectPackages } from '../skills/context-assembler/scripts/lib/search.ts';
import { makeProject, writeArtifact, type Project } from './helpers.ts';

const SESSION = 'bazinga_task_words';
const LIMITS = { maxTerms: 32, maxPostings: 1000 };

let project: Project | undefined;
let db: DB | undefined;

afterEach(() => {
  db?.close();
  db = undefined;
  project?.cleanup();
  project = undefined;
});

interface Pkg {
  summary: string;
  /** Artifact text (its file is written under the session's artifacts). */
  artifact?: string;
}

/** A project whose session holds the packages, in order (ids 1, 2, …), all written at the same second and indexed. */
function storeOf(packages: readonly Pkg[]): DB {
  project = makeProject('ca-task-words-');
  const opened = openDatabase({ dbPath: project.dbPath });
  db = opened;
  const p = project;
  writeTransaction(opened, () => {
    insertSession(opened, { sessionId: SESSION, mode: 'simple', requirements: 'task words', initialBranch: 'main', metadata: null });
    packages.forEach((pkg, i) => {
      const file = writeArtifact(p, SESSION, `research_${i + 1}.md`, pkg.artifact ?? `# note ${i + 1}\n`);
      const id = insertPackage(opened, {
        sessionId: SESSION,
        groupId: null,
        scope: 'global',
        packageType: 'research',
        filePath: file,
        producerAgent: 'developer',
        priority: 'medium',
        summary: pkg.summary,
        sizeBytes: null,
        createdAt: '2026-01-01 12:00:00',
      });
      insertConsumer(opened, id, 'developer');
    });
    syncSearchIndex(opened, { projectRoot: p.root, artifactBytes: 16384 });
  });
  return opened;
}

/** The ranked packages (with their score components) for a session-wide developer spawn with this task. */
function ranked(store: DB, task: string, tune: (c: Config) => void = () => {}): RankedPackage[] {
  const config: Config = structuredClone(DEFAULT_CONFIG);
  tune(config);
  const request: AssemblyRequest = {
    session: SESSION,
    group: 'global',
    agent: 'developer',
    model: 'sonnet',
    current_tokens: 0,
    iteration: 0,
    limit: 10,
    include_reasoning: false,
    reasoning_level: 'medium',
    now: '2026-01-01T12:00:00.000Z',
    task,
    error: null,
    scope: null,
    lang: null,
    framework: null,
  };
  const query = { sessionId: SESSION, groupId: 'global', agentType: 'developer', iteration: 0 };
  const consumed = listConsumedPackages(store, query);
  const plan = planSearch(store, request, config, (t) => t, true);
  return selectPackages({
    db: store,
    query,
    plan,
    zone: 'Normal',
    limit: 10,
    nowMs: Date.parse(request.now),
    config,
    explain: true,
    totalAvailable: countRequestPackages(store, query, AVAILABLE_CAP).count - consumed.length,
    consumed,
  }).ranked.selected;
}

const order = (selected: readonly RankedPackage[]) => selected.map((p) => p.id);
const component = (selected: readonly RankedPackage[], id: number, name: 'relevance' | 'paths') => selected.find((p) => p.id === id)?.components?.[name];

describe('inflectionsOf: the forms a word may take, looked up in the index', () => {
  it.each([
    ['adapter', ['adapters', 'adapteres', 'adaptering', 'adaptered'], ['adapt']],
    ['adapters', ['adapter'], []],
    ['cases', ['case', 'casing', 'cased'], ['cas']],
    ['classes', ['class'], ['clas']],
    ['matches', ['match', 'matching', 'matched'], []],
    ['queries', ['query'], ['quer']],
    ['testing', ['test', 'tests', 'tested'], ['tes']],
    ['tested', ['test', 'tests', 'testing'], []],
    ['noting', ['note', 'notes', 'noted'], ['not', 'nots']],
    ['status', ['statuses'], ['statu']],
  ])('%s', (word, has, hasNot) => {
    const forms = inflectionsOf(word);
    for (const f of has) expect(forms, f).toContain(f);
    for (const f of hasNot) expect(forms, f).not.toContain(f);
    expect(forms).not.toContain(word);
  });

  it.each(['api', 'ui', 'naïve', 'token2', 'ts'])('%s has none (short, or not plain letters)', (word) => {
    expect(inflectionsOf(word)).toEqual([]);
  });

  it('token and tokenizer stay apart', () => {
    expect(inflectionsOf('token')).not.toContain('tokenizer');
    expect(inflectionsOf('tokenizer')).not.toContain('token');
  });
});

describe('a task query leaves out its verbs of change and error words; a memory search keeps them', () => {
  it.each([
    ['add the unknown error handler', ['handler'], ['add', 'unknown', 'error', 'handler']],
    ['exception', [], ['exception']],
  ])('%s', (text, task, memory) => {
    expect(queryTerms(text, 32, TASK_STOPWORDS).map((t) => t.text)).toEqual(task);
    expect(queryTerms(text, 32).map((t) => t.text)).toEqual(memory);
  });
});

describe('a query word is asked for with its inflections the index holds', () => {
  it('adds the inflections at least as common as the word, never a rarer one', () => {
    const store = storeOf([
      { summary: 'webhook adapters retry with backoff' },
      { summary: 'the email and sms adapters share a base class' },
      { summary: 'adapter pattern for the payment gateway' },
      { summary: 'adapting the legacy client' },
    ]);
    // adapter (1 package) gains adapters (2); adapting is another word (adapt).
    const one = planTextQuery(store, 'adapter', LIMITS);
    expect(String(one.packages)).toBe('"adapter" OR "adapters"');
    // adapters (2) does not gain adapter (1): a match on the rarer form would count for more than one on the word written.
    expect(String(planTextQuery(store, 'adapters', LIMITS).packages)).toBe('"adapters"');
    // Both written: each stays its own term.
    expect(String(planTextQuery(store, 'adapter adapters', LIMITS).packages)).toBe('"adapter" OR "adapters"');
    expect(order(ranked(store, 'adapter')).slice(0, 3).sort()).toEqual([1, 2, 3]);
  });

  it('counts the inflections in what the term costs (postings), and as one term in the per-term matches', () => {
    const store = storeOf([{ summary: 'retries retries' }, { summary: 'retry once' }, { summary: 'retries later' }]);
    const plan = planTextQuery(store, 'retry', LIMITS);
    expect(plan.packagePostings).toBe(3);
    expect(plan.perTerm.map(String)).toEqual(['"retry" OR "retries"']);
  });
});

describe('the paths a package names count when the task names them (ranking.weights.paths)', () => {
  const packages: Pkg[] = [
    // Talks about the routes in words only.
    { summary: 'analytics routes: which analytics routes answer the dashboard' },
    // Names the file the task is about, in its artifact.
    { summary: 'analytics handlers stay plain functions', artifact: '# Decision\n\naffected_files: src/routes/analytics.routes.ts\n' },
    { summary: 'unrelated cart notes', artifact: '# Finding\n\nscope: src/cart/cart.service.ts\n' },
  ];
  const task = 'analytics routes';

  it('the package naming the task\'s path ranks above the one only using its words; at weight 0 it does not', () => {
    const store = storeOf(packages);
    const withPaths = ranked(store, task);
    expect(component(withPaths, 2, 'paths')).toBe(1);
    expect(component(withPaths, 1, 'paths')).toBe(0);
    expect(order(withPaths)[0]).toBe(2);
    const without = ranked(store, task, (c) => {
      c.ranking.weights.paths = 0;
    });
    expect(order(without)[0]).toBe(1);
  });

  it('a term every package\'s paths hold counts little beside the one path the task and a package share', () => {
    const store = storeOf([
      { summary: 'a', artifact: 'scope: src/routes/analytics.routes.ts\n' },
      { summary: 'b', artifact: 'scope: src/services/analytics.service.ts\n' },
      { summary: 'c', artifact: 'scope: src/models/order.ts\n' },
    ]);
    const selected = ranked(store, 'src routes');
    const paths = (id: number) => component(selected, id, 'paths') as number;
    expect(paths(1)).toBe(1);
    // src is in every package's paths: ln(1 + 3/3) against ln(1 + 3/1) + ln(1 + 3/3).
    expect(paths(2)).toBeCloseTo(Math.log(2) / (Math.log(4) + Math.log(2)), 5);
    expect(paths(3)).toBe(paths(2));
  });
});

describe('an index an earlier release built is built again, once', () => {
  it('a database marked ca_schema 14 loses its package index on open; the next sync indexes the named paths; a later open keeps it', () => {
    const store = storeOf([{ summary: 'notes', artifact: 'scope: src/routes/analytics.routes.ts\n' }]);
    const p = project as Project;
    const pathHits = (conn: DB) =>
      (conn.prepare("SELECT rowid FROM ca_fts_packages WHERE ca_fts_packages MATCH '{path} : analytics'").all() as { rowid: number }[]).length;
    expect(pathHits(store)).toBe(1);
    // As a v14 indexer left it: only the artifact file's path in the path column.
    writeTransaction(store, () => {
      store.exec("INSERT INTO ca_fts_packages (ca_fts_packages) VALUES ('delete-all')");
      store.prepare('INSERT INTO ca_fts_packages (rowid, summary, artifact, path) VALUES (1, ?, ?, ?)').run('notes', 'scope: src/routes/analytics.routes.ts', `bazinga/artifacts/${SESSION}/research_1.md`);
      store.exec("UPDATE ca_meta SET value = '14' WHERE key = 'ca_schema'");
    });
    expect(pathHits(store)).toBe(0);
    store.close();
    db = openDatabase({ dbPath: p.dbPath });
    const reopened = db;
    const watermarks = (conn: DB) => conn.prepare("SELECT COUNT(*) AS n FROM ca_meta WHERE key IN ('search.packages.hi', 'search.packages.lo')").get();
    expect(watermarks(reopened)).toEqual({ n: 0 });
    writeTransaction(reopened, () => syncSearchIndex(reopened, { projectRoot: p.root, artifactBytes: 16384 }));
    expect(pathHits(reopened)).toBe(1);
    // The version is recorded only when every step of an open succeeded: a file left at 14 by a
    // failing step is not indexed again on every open.
    reopened.exec("UPDATE ca_meta SET value = '14' WHERE key = 'ca_schema'");
    reopened.close();
    db = openDatabase({ dbPath: p.dbPath });
    expect(watermarks(db)).toEqual({ n: 2 });
    expect(pathHits(db)).toBe(1);
  });
});
