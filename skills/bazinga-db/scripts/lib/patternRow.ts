/** A row of BAZINGA's error_patterns table as this layer reads it (a type of its own: pure code names it without the repository). */
export interface ErrorPatternRow {
  pattern_hash: string;
  project_id: string;
  signature_json: string;
  solution: string;
  confidence: number;
  occurrences: number;
  lang: string | null;
  last_seen: string;
  created_at: string;
  ttl_days: number;
}
