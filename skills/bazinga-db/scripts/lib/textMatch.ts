/**
 * A full-text match expression of the index, as a type of its own: repo/textQuery.ts makes them,
 * the searches (repo/searchIndex.ts, repo/contextPackages.ts) take them, and a caller can only
 * pass them on, never read or build one.
 */
declare const TEXT_MATCH: unique symbol;
/** A full-text match expression of the index: made by repo/textQuery.ts, handed back to the searches. */
export type TextMatch = string & { readonly [TEXT_MATCH]: true };
