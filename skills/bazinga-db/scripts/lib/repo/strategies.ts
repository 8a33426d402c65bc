/** Repository: `strategies`. */
import { stmt, type DB } from '../statements.ts';
import type { ProjectScope } from './sessions.ts';

export interface StrategyRow {
  strategy_id: string;
  project_id: string;
  topic: string;
  insight: string;
  helpfulness: number;
  lang: string | null;
  framework: string | null;
  last_seen: string;
  created_at: string;
}

function findStrategy(db: DB, strategyId: string): StrategyRow | undefined {
  return stmt(db, 'SELECT * FROM strategies WHERE strategy_id = ?').get(strategyId) as StrategyRow | undefined;
}

/** Inserts a new strategy (helpfulness 1) or bumps an existing one; returns which happened. */
export function upsertStrategy(
  db: DB,
  s: { strategyId: string; projectId: string; topic: string; insight: string; lang: string | null; framework: string | null },
): 'created' | 'updated' {
  const existed = findStrategy(db, s.strategyId) !== undefined;
  stmt(
    db,
    `INSERT INTO strategies (strategy_id, project_id, topic, insight, helpfulness, lang, framework, last_seen, created_at)
     VALUES (@strategyId, @projectId, @topic, @insight, 1, @lang, @framework, datetime('now'), datetime('now'))
     ON CONFLICT (strategy_id) DO UPDATE SET helpfulness = strategies.helpfulness + 1, last_seen = datetime('now')`,
  ).run(s);
  return existed ? 'updated' : 'created';
}

export interface StrategyQuery {
  /** One project's strategies, or every project's (repo/sessions.ts ProjectScope). */
  scope: ProjectScope;
  lang: string | null;
  framework: string | null;
  topic: string | null;
  limit: number;
}

/** Most helpful first, then most recently seen, then the oldest row; lang/framework match or are NULL. */
export function listStrategies(db: DB, q: StrategyQuery): StrategyRow[] {
  return stmt(
    db,
    `SELECT strategy_id, project_id, topic, insight, helpfulness, lang, framework, last_seen, created_at FROM strategies
     WHERE ${q.scope.wholeDatabase ? '1' : 'project_id = @projectId'}
       AND (@lang IS NULL OR lang IS NULL OR lang = @lang)
       AND (@framework IS NULL OR framework IS NULL OR framework = @framework)
       AND (@topic IS NULL OR topic = @topic)
     ORDER BY helpfulness DESC, last_seen DESC, rowid ASC LIMIT @limit`,
  ).all({ projectId: q.scope.projectId, lang: q.lang, framework: q.framework, topic: q.topic, limit: q.limit }) as StrategyRow[];
}

/** helpfulness = MAX(0, helpfulness + increment); returns the new value, or undefined if absent. */
export function addStrategyHelpfulness(db: DB, strategyId: string, increment: number): number | undefined {
  const changed = stmt(
    db,
    `UPDATE strategies SET helpfulness = MAX(0, helpfulness + ?), last_seen = datetime('now') WHERE strategy_id = ?`,
  ).run(increment, strategyId).changes;
  return changed > 0 ? findStrategy(db, strategyId)?.helpfulness : undefined;
}
