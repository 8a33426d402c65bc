/**
 * What the launcher (../../bazinga-db/bin/launch.cjs) hands a script it runs in its own process
 * after asking the warm assembler: the request's key when the server took the request and gave no
 * usable answer (this run takes the place of whatever the server recorded), and why no server can
 * run here when none can.
 */
import type { Delivery } from './record.ts';

const DELIVERY = Symbol.for('context-assembler.delivery');
const SERVER_SEEN = Symbol.for('context-assembler.server');
const SERVER_WHY = Symbol.for('context-assembler.server-why');

/** The delivery and the reason the launcher left for this process, each when it left one. */
export function handedOver(): { delivery?: Delivery; noServer?: string } {
  const g = globalThis as Record<symbol, unknown>;
  const d = g[DELIVERY] as { key?: unknown; supersedes?: unknown } | undefined;
  const delivery = d !== undefined && typeof d.key === 'string' && d.key !== '' ? { key: d.key, supersedes: d.supersedes === true } : undefined;
  const why = g[SERVER_SEEN] === 'impossible' && typeof g[SERVER_WHY] === 'string' ? (g[SERVER_WHY] as string) : undefined;
  return { ...(delivery ? { delivery } : {}), ...(why !== undefined ? { noServer: why } : {}) };
}
