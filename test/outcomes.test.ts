/**
 * Outcome feedback (core/outcomes.ts, bazinga-db repo/outcomes.ts): the verdicts that followed the
 * spawns an item was shown to move it in its kind's ranking. The pure counts and term first; then,
 * on real SQLite files, for each kind of item: two look-alikes the text cannot tell apart, one of
 * them shown to a spawn whose iteration was approved (an assembly record, as the assembler writes
 * it; the verdict on task_groups, as BAZINGA sets it), and every config key of outcome_feedback
 * shown to change the result. Last, `--explain` on the v19 fixture.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertAssembly } from '../skills/bazinga-db/scripts/lib/repo/assemblies.ts';
import { outcomeTable } from '../skills/context-assembler/scripts/lib/core/outcomes.ts';
import { prepareStrategies } from '../skills/context-assembler/scripts/lib/core/learning.ts';
import { runScript } from '../skills/context-assembler/scripts/lib/shell.ts';
import { errorPatternOf } from '../skills/bazinga-db/scripts/lib/hashing.ts';

/** The fault key of what save-error-pattern saves for this input (a pattern's id in records and verdicts). */
const faultOf = (type: string, message: string) => errorPatternOf(type, message).fault.fault_hash;
import { REPO_ROOT, S1, copyFixture, makeProject, writeArtifact, type Project } from './helpers.ts';
import { bazingaDbIn, capturingIo } from './inProcess.ts';

const NOW = '2026-02-01T12:00:00Z';
const ASSEMBLE_SPEC = { name: 'assemble.ts', step: 'consume', defaultFormat: 'json', readsStdin: false, summary: '' } as const;

describe('counts and term (pure)', () => {
  const day = (days: number) => new Date(Date.parse('2026-02-01T12:00:00Z') - days * 86_400_000).toISOString().slice(0, 10);
  const nowMs = Date.parse('2026-02-01T12:00:00Z');

  it('helped and hurt are decayed counts (from the day of the spawn); the term is (helped − hurt)/(helped + hurt + prior)', () => {
    const t = outcomeTable(
      [
        { kind: 'strategy', id: 'a', day: day(0), helped: 1, hurt: 1 },
        { kind: 'strategy', id: 'a', day: day(30), helped: 1, hurt: 0 },
      ],
      nowMs,
      30,
      2,
    );
    expect(t.get('strategy:a')).toEqual({ helped: 1.5, hurt: 1, shown: 3, term: 0.1111 });
    expect(t.get('strategy:b')).toBeUndefined();
  });

  it('one bad verdict gives −1/(1 + prior): with the default prior, −1/3; a term stays inside (−1, 1)', () => {
    expect(outcomeTable([{ kind: 'memory', id: '1', day: day(0), helped: 0, hurt: 1 }], nowMs, 30, 2).get('memory:1')?.term).toBe(-0.3333);
    expect(outcomeTable([{ kind: 'memory', id: '1', day: day(0), helped: 0, hurt: 1 }], nowMs, 30, 1).get('memory:1')?.term).toBe(-0.5);
    expect(outcomeTable([{ kind: 'memory', id: '1', day: day(0), helped: 200, hurt: 0 }], nowMs, 30, 2).get('memory:1')?.term).toBeLessThan(1);
  });
});

// ------------------------------------------------------------------------- on real files

const SESSION = 'bazinga_20260201_090000';
const EARLIER = 'bazinga_20260101_090000';
const PROJECT = 'shop';
const TASK = 'retry queue for payment webhooks';

let p: Project;
const ok = (args: string[]) => {
  const r = bazingaDbIn(p, args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};
const sql = (text: string, ...params: unknown[]) => {
  const db = new Database(p.dbPath);
  try {
    db.prepare(text).run(...params);
  } finally {
    db.close();
  }
};

/** A record of a spawn of `group` at `iteration` that was shown `shown`, at `at`. */
function shownTo(group: string, iteration: number, shown: { kind: string; id: number | string }[], at = NOW, session = SESSION): void {
  const db = new Database(p.dbPath);
  try {
    insertAssembly(db, {
      created_at: at,
      session_id: session,
      group_id: group,
      agent_type: 'developer',
      iteration,
      source: 'assemble',
      outcome: 'recorded',
      reason: null,
      purpose: 'implementation',
      zone: 'Normal',
      usage_pct: 0,
      budget: 1000,
      used_tokens: 100,
      overrun: 0,
      prompt_tokens: null,
      duration_ms: 1,
      version: '0.1.0',
      detail: JSON.stringify({ shown: shown.map((s) => ({ ...s, tier: 3, tokens: 10 })) }),
    });
  } finally {
    db.close();
  }
}

// The verdict as BAZINGA sets it; then settled as the next recording spawn (or capture-outcomes) settles it.
const settle = () => expect(ok(['capture-outcomes', SESSION]).records_settled).toBeGreaterThan(0);
const approve = (group: string, session = SESSION) => {
  sql("UPDATE task_groups SET last_review_status = 'APPROVED', status = 'completed' WHERE id = ? AND session_id = ?", group, session);
  settle();
};
const sendBack = (group: string, revisions: number) => {
  sql("UPDATE task_groups SET last_review_status = 'CHANGES_REQUESTED', revision_count = ? WHERE id = ? AND session_id = ?", revisions, group, SESSION);
  settle();
};

function config(outcome: Record<string, unknown>, extra: Record<string, unknown> = {}): void {
  fs.mkdirSync(path.join(p.root, 'bazinga'), { recursive: true });
  fs.writeFileSync(
    path.join(p.root, 'bazinga', 'skills_config.json'),
    JSON.stringify({ context_engineering: { outcome_feedback: outcome, strategies: { max: 1 }, error_patterns: { max: 1, min_confidence: 0 }, memory: { block_max: 1 }, ...extra } }),
  );
}

function assemble(flags: string[]): any {
  const run = capturingIo(['--project-root', p.root, '--session', SESSION, '--group', 'G2', '--agent', 'developer', '--now', NOW, '--format', 'json', '--dry-run', '--explain', '--task', TASK, ...flags], {
    cwd: REPO_ROOT,
  });
  const code = runScript(ASSEMBLE_SPEC, run.io);
  expect(code, run.err()).toBe(0);
  return JSON.parse(run.out());
}

/** Two look-alikes of a kind: their ids, and how a block lists what it shows of that kind. */
interface Kind {
  name: string;
  make: () => [number | string, number | string];
  shown: (doc: any) => (number | string)[];
  flags?: string[];
}

const KINDS: Kind[] = [
  {
    name: 'strategy',
    make: () => {
      const a = ok(['save-strategy', PROJECT, 'implementation', 'Use a retry queue for payment webhooks, with backoff']).strategy_id;
      const b = ok(['save-strategy', PROJECT, 'implementation', 'Use a retry queue for payment webhooks with backoff']).strategy_id;
      return [a, b];
    },
    shown: (doc) => doc.strategies.map((s: any) => s.strategy_id),
  },
  {
    // A pattern's id in the record and its verdicts is its fault key.
    name: 'error_pattern',
    make: () => {
      ok(['save-error-pattern', PROJECT, 'WebhookError', 'payment webhook retry queue overflowed', 'Drain the retry queue']);
      ok(['save-error-pattern', PROJECT, 'WebhookError', 'payment webhook retry queue stalled', 'Restart the retry queue']);
      return [faultOf('WebhookError', 'payment webhook retry queue overflowed'), faultOf('WebhookError', 'payment webhook retry queue stalled')];
    },
    shown: (doc) => doc.error_patterns.map((e: any) => e.fault_hash),
  },
  {
    name: 'memory',
    make: () => {
      ok(['create-session', EARLIER, 'simple', 'Earlier', '--metadata', JSON.stringify({ project_id: PROJECT })]);
      // Alike in their words, not alike enough to be merged as one (memory.dedup_similarity).
      const save = (title: string, lesson: string) =>
        ok(['save-memory', PROJECT, 'learning', title, '--content', JSON.stringify({ lesson }), '--session', EARLIER, '--importance', '5']).memory_id;
      return [
        save('Retry queue for payment webhooks', 'payment webhooks: exponential backoff in the retry queue'),
        save('Payment webhooks retry queue alerts', 'retry queue of payment webhooks: alert on dead letters'),
      ];
    },
    shown: (doc) => (doc.memories ?? []).map((m: any) => m.id),
  },
  {
    name: 'package',
    make: () => {
      const save = (name: string) =>
        ok(['save-context-package', SESSION, 'G2', 'research', writeArtifact(p, SESSION, name), 'developer', '["developer"]', 'high', 'Retry queue for payment webhooks']).package_id;
      const a = save('research_a.md');
      const b = save('research_b.md');
      sql("UPDATE context_packages SET created_at = '2026-02-01 10:00:00'");
      return [a, b];
    },
    // The one the limit ranks first: the other is shown after it (the builder would show both).
    shown: (doc) => doc.packages.map((x: any) => x.id).slice(0, 1),
    flags: ['--limit', '1'],
  },
  {
    name: 'reasoning',
    make: () => {
      const save = (text: string) => ok(['save-reasoning', SESSION, 'G2', 'developer', 'decisions', text]).log_id;
      const a = save('Retry queue for payment webhooks: backoff doubles');
      const b = save('Retry queue for payment webhooks: backoff doubles each try');
      sql("UPDATE orchestration_logs SET timestamp = '2026-02-01 10:00:00' WHERE log_type = 'reasoning'");
      return [a, b];
    },
    shown: (doc) => doc.reasoning.entries.map((e: any) => e.id),
    flags: ['--iteration', '1', '--include-reasoning', 'true'],
  },
];

beforeEach(() => {
  p = makeProject('ca-outcomes-');
  ok(['create-session', SESSION, 'parallel', 'Shop', '--metadata', JSON.stringify({ project_id: PROJECT })]);
  ok(['create-task-group', 'G1', SESSION, 'Payments']);
  ok(['create-task-group', 'G2', SESSION, 'Webhooks']);
});
afterEach(() => p.cleanup());

const reasoningConfig = { reasoning: { max_per_producer: 1, relevant_producers: { developer: ['developer'] } } };

describe.each(KINDS)('$name: the look-alike shown to an approved spawn ranks first', (kind) => {
  const run = (outcome: Record<string, unknown> = {}) => {
    config(outcome, kind.name === 'reasoning' ? reasoningConfig : {});
    return assemble(kind.flags ?? []);
  };

  it('without any record, one order; the other look-alike helped → it leads, with its counts in --explain; feedback off → the first order again', () => {
    const ids = kind.make();
    const before = kind.shown(run());
    expect(before).toHaveLength(1);
    const other = ids.find((id) => id !== before[0]) as number | string;
    shownTo('G1', 0, [{ kind: kind.name, id: other }]);
    approve('G1');
    const doc = run();
    expect(kind.shown(doc)).toEqual([other]);
    const item = JSON.stringify(doc).includes('"outcome":{"helped":1') ? doc : undefined;
    expect(item, 'the helped item carries its counts').toBeDefined();
    expect(kind.shown(run({ enabled: false }))).toEqual(before);
    expect(kind.shown(run({ weights: { [kind.name]: 0 } }))).toEqual(before);
  });

  it('a spawn sent back for changes hurts what it was shown: the other look-alike leads', () => {
    const ids = kind.make();
    const before = kind.shown(run());
    shownTo('G1', 0, [{ kind: kind.name, id: before[0] as number | string }]);
    sendBack('G1', 1);
    expect(kind.shown(run())).toEqual([ids.find((id) => id !== before[0])]);
  });
});

describe('config: half-life and prior set the counts; an open iteration counts for nothing', () => {
  it('a verdict 30 days old counts half with half_life_days 30, 0.7071 with 60; prior sets the term', () => {
    const [a] = KINDS[0]!.make();
    shownTo('G1', 0, [{ kind: 'strategy', id: a as string }], '2026-01-02T12:00:00Z');
    approve('G1');
    const counts = (outcome: Record<string, unknown>) => {
      config(outcome);
      return assemble([]).strategies.find((s: any) => s.strategy_id === a)?.outcome;
    };
    expect(counts({})).toEqual({ helped: 0.5, hurt: 0, shown: 1, term: 0.2 });
    expect(counts({ half_life_days: 60 })).toEqual({ helped: 0.7071, hurt: 0, shown: 1, term: 0.2612 });
    expect(counts({ prior: 0.5 })).toEqual({ helped: 0.5, hurt: 0, shown: 1, term: 0.5 });
  });

  it('a spawn whose iteration is still open has no verdict: nothing is counted (nor settled)', () => {
    const [a] = KINDS[0]!.make();
    shownTo('G1', 0, [{ kind: 'strategy', id: a as string }]);
    expect(ok(['capture-outcomes', SESSION]).records_settled).toBe(0);
    config({});
    expect(assemble([]).strategies.every((s: any) => s.outcome === undefined)).toBe(true);
  });

  it('one bad verdict cannot bury an item: a pattern the error matches stays first', () => {
    const a = ok(['save-error-pattern', PROJECT, 'WebhookError', 'payment webhook retry queue overflowed', 'Drain the retry queue']).pattern_hash;
    ok(['save-error-pattern', PROJECT, 'WebhookError', 'payment webhook retry queue stalled', 'Restart the retry queue']);
    shownTo('G1', 0, [{ kind: 'error_pattern', id: faultOf('WebhookError', 'payment webhook retry queue overflowed') }]);
    sendBack('G1', 1);
    config({});
    const doc = assemble(['--error', 'WebhookError: payment webhook retry queue overflowed']);
    expect(doc.error_patterns[0]).toMatchObject({ pattern_hash: a, matched_error: true, outcome: { hurt: 1, term: -0.3333 } });
  });
});

describe('the verdicts of a pattern are its fault\'s', () => {
  it('a verdict keeps counting when BAZINGA writes another row of the fault and that row stands for it', () => {
    // Two rows to the original (its message keeps numbers), one fault to this layer.
    const first = ok(['save-error-pattern', PROJECT, 'WebhookError', 'payment webhook retry queue overflowed after 3 retries', 'Drain the retry queue']).pattern_hash;
    const fault = faultOf('WebhookError', 'payment webhook retry queue overflowed after 3 retries');
    shownTo('G1', 0, [{ kind: 'error_pattern', id: fault }]);
    approve('G1');
    const second = ok(['save-error-pattern', PROJECT, 'WebhookError', 'payment webhook retry queue overflowed after 5 retries', 'Drain the retry queue, then raise its size']).pattern_hash;
    expect(second).not.toBe(first);
    expect(faultOf('WebhookError', 'payment webhook retry queue overflowed after 5 retries')).toBe(fault);
    // The newer row the more confident: it stands for the fault now.
    for (let i = 0; i < 3; i++) ok(['update-error-confidence', second, PROJECT, 'success']);
    config({});
    const doc = assemble(['--explain']);
    expect(doc.error_patterns).toHaveLength(1);
    expect(doc.error_patterns[0]).toMatchObject({ pattern_hash: second, fault_hash: fault, occurrences: 2, confidence: 0.8, outcome: { helped: 1 } });
  });
});

describe('what counts as a verdict, and what the record may hold', () => {
  it("a retry spawned under the last review's CHANGES_REQUESTED has no verdict until its own review", () => {
    const [a] = KINDS[0]!.make();
    sql("UPDATE task_groups SET last_review_status = 'CHANGES_REQUESTED', revision_count = 1 WHERE id = 'G1'");
    shownTo('G1', 1, [{ kind: 'strategy', id: a as string }]);
    expect(ok(['capture-outcomes', SESSION]).records_settled).toBe(0);
    approve('G1');
    config({});
    expect(assemble([]).strategies.find((x: any) => x.strategy_id === a)?.outcome).toEqual({ helped: 1, hurt: 0, shown: 1, term: 0.3333 });
  });

  it('a hand-edited detail (shown not a list, items not objects, ids of other types) is skipped item by item, never fatal', () => {
    const [a] = KINDS[0]!.make();
    for (const detail of ['{"shown":["x"]}', '{"shown":"x"}', '{"shown":[{"kind":1,"id":2},{"kind":"strategy","id":{"x":1}}]}', '{}', '[]']) {
      shownTo('G1', 0, []);
      sql('UPDATE ca_assemblies SET detail = ? WHERE id = (SELECT MAX(id) FROM ca_assemblies)', detail);
    }
    shownTo('G1', 0, [{ kind: 'strategy', id: a as string }]);
    approve('G1');
    config({});
    expect(assemble([]).strategies.find((x: any) => x.strategy_id === a)?.outcome).toMatchObject({ helped: 1, shown: 1 });
  });

  it('a project id that is not a string is the project "default" for the verdicts too', () => {
    ok(['create-session', 'bazinga_20260201_100000', 'simple', 'numeric', '--metadata', '{"project_id":42}']);
    ok(['create-task-group', 'N1', 'bazinga_20260201_100000', 'x']);
    const id = ok(['save-strategy', 'default', 'implementation', 'Retry queue for payment webhooks']).strategy_id;
    shownTo('N1', 0, [{ kind: 'strategy', id }], NOW, 'bazinga_20260201_100000');
    sql("UPDATE task_groups SET last_review_status = 'APPROVED' WHERE id = 'N1'");
    ok(['capture-outcomes', 'bazinga_20260201_100000']);
    const db = new Database(p.dbPath);
    expect(db.prepare('SELECT project_id, helped FROM ca_outcomes').all()).toEqual([{ project_id: 'default', helped: 1 }]);
    db.close();
  });

  it('without an explicit task a verdict only breaks ties in helpfulness: one bad verdict never buries a helpful strategy', () => {
    const out = prepareStrategies(
      [
        { strategy_id: 'good', topic: 'implementation', insight: 'x', helpfulness: 25 },
        { strategy_id: 'meh', topic: 'implementation', insight: 'y', helpfulness: 0 },
      ],
      { max: 1, insightChars: 100, redact: (t) => t, relevanceFirst: false, outcome: new Map([['good', -0.1]]) },
    );
    expect(out.map((x) => x.strategy_id)).toEqual(['good']);
    const tie = prepareStrategies(
      [
        { strategy_id: 'a', topic: 't', insight: 'x', helpfulness: 1 },
        { strategy_id: 'b', topic: 't', insight: 'y', helpfulness: 1 },
      ],
      { max: 1, insightChars: 100, redact: (t) => t, relevanceFirst: false, outcome: new Map([['b', 0.1]]) },
    );
    expect(tie.map((x) => x.strategy_id)).toEqual(['b']);
  });
});

describe('--explain on the v19 fixture shows an item\'s outcome counts', () => {
  it('after a recorded spawn of AUTH and a review that sent it back', () => {
    const fx = copyFixture('ca-outcomes-fx-');
    try {
      const run = (flags: string[]) => {
        const r = capturingIo(['--project-root', fx.root, '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--now', '2025-12-02T12:00:00Z', '--format', 'json', ...flags], { cwd: REPO_ROOT });
        expect(runScript(ASSEMBLE_SPEC, r.io), r.err()).toBe(0);
        return JSON.parse(r.out());
      };
      const first = run([]);
      const shownPatterns = first.error_patterns.map((e: any) => e.pattern_hash);
      expect(shownPatterns.length).toBeGreaterThan(0);
      const db = new Database(fx.dbPath);
      db.prepare("UPDATE task_groups SET revision_count = 1, last_review_status = 'CHANGES_REQUESTED' WHERE id = 'AUTH'").run();
      db.close();
      // The next recording spawn settles the verdict, then ranks with it.
      const explained = run(['--explain', '--iteration', '1']);
      for (const e of explained.error_patterns.filter((x: any) => shownPatterns.includes(x.pattern_hash))) {
        expect(e.outcome).toEqual({ helped: 0, hurt: 1, shown: 1, term: -0.3333 });
      }
      expect(explained.error_patterns.some((x: any) => x.outcome !== undefined)).toBe(true);
    } finally {
      fx.cleanup();
    }
  });
});
