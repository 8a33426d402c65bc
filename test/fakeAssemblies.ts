/**
 * Assembly records as a busy session leaves them, for the report's size test and its benchmark:
 * `n` rows of session `session`, alternating groups AUTH and CART, developer → QA → tech lead;
 * each shows 8 packages, 4 reasoning entries and 2 error patterns (40-character hashes), lists
 * the 50 left out that a record keeps, has a query of its own words; every fourth went through the
 * prompt hook, every tenth is a prompt left as the builder wrote it, with its reason.
 */
import { createHash } from 'node:crypto';

const hash = (s: string) => createHash('sha1').update(s).digest('hex');

export function fakeAssemblies(n: number, session: string, version: string): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => {
    const left = i % 10 === 9;
    const detail = {
      sections: left ? { packages: 0, reasoning: 0, error_patterns: 0, strategies: 0, memories: 0 } : { packages: 900 + i, reasoning: 300, error_patterns: 120, strategies: 60, memories: 0 },
      shown: left
        ? []
        : [
            ...Array.from({ length: 8 }, (_, k) => ({ kind: 'package', id: 10_000 + i * 8 + k, tier: 1 + (k % 3), tokens: 80 + k })),
            ...Array.from({ length: 4 }, (_, k) => ({ kind: 'reasoning', id: 50_000 + i * 4 + k, tier: 2, tokens: 60 + k })),
            ...Array.from({ length: 2 }, (_, k) => ({ kind: 'error_pattern', id: hash(`pattern ${i} ${k}`), tier: 2, tokens: 40 })),
          ],
      left_out: Array.from({ length: 50 }, (_, k) => ({ kind: 'package', id: 100_000 + i * 50 + k, reason: ['budget', 'limit', 'consumed', 'tier'][k % 4], tier: 3 })),
      left_out_counts: { budget: 40 + (i % 7), limit: 60 + (i % 11), consumed: 20, tier: 5 },
      query: { source: 'implicit', terms: [`refresh${i}`, 'token', `rotation${i % 13}`, 'expired', `module${i % 29}`], scope: [`src/auth/part${i % 17}`], scope_source: 'group' },
      delivered: left ? [] : Array.from({ length: 8 }, (_, k) => 10_000 + i * 8 + k),
      model: 'sonnet',
    };
    return {
      created_at: new Date(Date.UTC(2025, 11, 2, 12, 0, i)).toISOString(), session_id: session, group_id: i % 2 ? 'AUTH' : 'CART', agent_type: ['developer', 'qa_expert', 'tech_lead'][i % 3] as string, iteration: Math.floor(i / 6),
      source: i % 4 === 0 ? 'prompt-hook' : 'assemble', outcome: left ? 'left' : 'recorded',
      reason: left ? `with the block the prompt would be about ${23_000 + i} tokens by the builder's estimate, past its file-read budget of 23000` : null,
      purpose: 'implementation', zone: 'Normal', usage_pct: 12.5 + (i % 50), budget: 20_000 + i, used_tokens: left ? 0 : 1380 + i, overrun: 0,
      prompt_tokens: i % 4 === 0 ? 21_000 + i : null, duration_ms: 41.2 + (i % 9), version, detail: JSON.stringify(detail),
    };
  });
}
