/**
 * The save decision of project memory (memorySave.ts decideSave), pure: table rows of what the
 * database holds and what a save does.
 */
import { describe, expect, it } from 'vitest';
import { withDefaults, type MemoryContent, type MemoryType } from '../skills/bazinga-db/scripts/lib/memory.ts';
import { decideSave, type KnownMemory, type SaveFacts } from '../skills/bazinga-db/scripts/lib/memorySave.ts';

const T = 0.85;
const RATIONALE = 'a reused refresh token means it was stolen; rotating tokens detect theft by reuse and the safe answer is to revoke';
const decision = (text: string, rationale = RATIONALE): MemoryContent => withDefaults('decision', { decision: text, rationale, alternatives: ['ignore reuse', 'log only'] });
const known = (id: number, type: MemoryType, title: string, content: MemoryContent): KnownMemory => ({ id, type, title, content });
const facts = (f: Partial<SaveFacts> & Pick<SaveFacts, 'type' | 'title' | 'content'>): SaveFacts => ({ hash: 'h', sourceRef: null, live: [], ...f });

describe('decideSave', () => {
  it.each([
    ['the same source, saying what it said: unchanged', facts({ type: 'state', title: 's', content: withDefaults('state', { task: 't' }), sourceRef: 'S1/state', earlier: { id: 3, hash: 'h', sourceRef: 'S1/state', superseded: false } }), { action: 'unchanged', id: 3 }],
    ['the same source moved on: supersedes it', facts({ type: 'state', title: 's', content: withDefaults('state', { task: 't' }), sourceRef: 'S1/state', hash: 'h2', earlier: { id: 3, hash: 'h', sourceRef: 'S1/state', superseded: false } }), { action: 'supersede', id: 3 }],
    ['the same source, replaced since by a later memory: unchanged', facts({ type: 'state', title: 's', content: {}, sourceRef: 'S1/state', hash: 'h2', earlier: { id: 3, hash: 'h', sourceRef: 'S1/state', superseded: true } }), { action: 'unchanged', id: 3 }],
    ['the same text: bumped', facts({ type: 'learning', title: 'l', content: {}, same: { id: 7 } }), { action: 'bump', id: 7 }],
    ['a state under the same title: supersedes it', facts({ type: 'state', title: 'Cart sync', content: withDefaults('state', { task: 'b' }), live: [known(4, 'state', 'Cart sync', withDefaults('state', { task: 'a' }))] }), { action: 'supersede', id: 4 }],
    ['a decision under the same title, its statement negated: supersedes it', facts({ type: 'decision', title: 'Retry', content: decision('do not retry failed payments'), live: [known(5, 'decision', 'Retry', decision('retry failed payments'))] }), { action: 'supersede', id: 5 }],
    ['nothing alike: created', facts({ type: 'learning', title: 'Metro cache', content: withDefaults('learning', { lesson: 'reset the metro cache' }), live: [known(6, 'learning', 'Token expiry', withDefaults('learning', { lesson: 'map jose JWTExpired to 401' }))] }), { action: 'create' }],
    [
      'a decision alike as a whole, its statement saying something else: supersedes it (never merges)',
      facts({ type: 'decision', title: 'Reuse revokes the session per device', content: decision('reuse of a refresh token revokes only the device session'), live: [known(8, 'decision', 'Reuse revokes the session family', decision('reuse of a refresh token revokes the whole family'))] }),
      { action: 'supersede', id: 8 },
    ],
  ])('%s', (_name, f, expected) => {
    expect(decideSave(f, T)).toEqual(expected);
  });

  it('a decision under the same title whose rationale alone changed merges, with how alike they are', () => {
    const d = decideSave(facts({ type: 'decision', title: 'Retry', content: decision('retry failed payments', 'the gateway times out under load, and retrying is safe'), live: [known(5, 'decision', 'Retry', decision('retry failed payments'))] }), T);
    expect(d.action).toBe('merge');
    expect(d).toMatchObject({ id: 5 });
    expect((d as { similarity: number }).similarity).toBeGreaterThan(0);
  });
});
