/** The search index's limits: how much of an artifact it reads and how long one call may index (settings.ts reads them from the project's config). */
/** How much of each artifact file is indexed unless the caller says otherwise (16 KiB). */
export const DEFAULT_ARTIFACT_INDEX_BYTES = 16_384;
/** The most of an artifact file that may be indexed (1 MiB). */
export const MAX_ARTIFACT_INDEX_BYTES = 1_048_576;
/** How long one call may spend on a backlog of older rows unless the caller says otherwise. */
export const DEFAULT_INDEX_BUDGET_MS = 1_000;
/**
 * The most `relevance.index_budget_ms` may be: the whole index is built outside the spawns
 * (index-search), and a call must stay well inside the warm assembler's answer time (10 s).
 */
export const MAX_INDEX_BUDGET_MS = 5_000;
