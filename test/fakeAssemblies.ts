/**
 * Assembly records as a busy session leaves them (14 items shown, 50 left out listed, every
 * fourth through the prompt hook), for the report's size test and its benchmark: `n` rows of
 * session `session`, alternating groups AUTH and CART, developer → QA → tech lead.
 */
export function fakeAssemblies(n: number, session: string, version: string): Record<string, unknown>[] {
  const detail = JSON.stringify({
    sections: { packages: 900, reasoning: 300, error_patterns: 120, strategies: 60, memories: 0 },
    shown: Array.from({ length: 14 }, (_, i) => ({ kind: i < 8 ? 'package' : 'reasoning', id: 1000 + i, tier: 1 + (i % 3), tokens: 80 + i })),
    left_out: Array.from({ length: 50 }, (_, i) => ({ kind: 'package', id: 5000 + i, reason: i % 2 ? 'budget' : 'limit', tier: 3 })),
    left_out_counts: { budget: 120, limit: 130 },
    query: { source: 'implicit', terms: ['refresh', 'token', 'rotation', 'expired'], scope: ['src/auth'], scope_source: 'group' },
    delivered: [1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007],
    model: 'sonnet',
  });
  return Array.from({ length: n }, (_, i) => ({
    created_at: '2025-12-02T12:00:00.000Z', session_id: session, group_id: i % 2 ? 'AUTH' : 'CART', agent_type: ['developer', 'qa_expert', 'tech_lead'][i % 3] as string, iteration: Math.floor(i / 6),
    source: 'assemble', outcome: 'recorded', reason: null, purpose: 'implementation', zone: 'Normal', usage_pct: 12.5, budget: 20000, used_tokens: 1380, overrun: 0,
    prompt_tokens: i % 4 === 0 ? 21000 : null, duration_ms: 41.2, version, detail,
  }));
}
