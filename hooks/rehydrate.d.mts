/** Types of hooks/rehydrate.mjs (plain JavaScript, run by Claude Code without a build). */
export declare const HOOK_OUTPUT_LIMIT: number;
export declare function withinLimit(text: string, limit?: number): string;
