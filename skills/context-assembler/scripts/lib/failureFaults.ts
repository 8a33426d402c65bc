/**
 * The failure that sent a spawn back, wherever BAZINGA put it, as the fault keys its patterns are
 * known by: the error text the spawn was given (`--error`; from a params file, the retry's
 * `qa_feedback` and `tl_feedback`) and the group's newest failures package (its summary and the
 * head of its artifact). Each text is signed as the capture signs a failure (bazinga-db capture.ts
 * failureTextOf, hashing.ts failureFaultKeys), so a pattern the capture learnt of the same fault in
 * another group, or one an agent saved of it by hand, has one of these keys. Reads only.
 */
import { failureFaultKeys, failureTextOf, listGroupFailures, type CandidatePackage, type DB } from '../../../bazinga-db/scripts/lib/index.ts';
import type { AssemblyRequest } from './contract.ts';

/** The group's newest failures package the agent may be shown (by creation time, then id), or undefined. */
export function newestGroupFailure(db: DB, r: Pick<AssemblyRequest, 'session' | 'group' | 'agent'>): CandidatePackage | undefined {
  if (r.group === 'global') return undefined;
  return listGroupFailures(db, { sessionId: r.session, groupId: r.group, agentType: r.agent }, 1).sort(
    (a, b) => (b.created_at ?? '').localeCompare(a.created_at ?? '') || b.id - a.id,
  )[0];
}

/**
 * The fault keys of the request's failure, in order (the error text's first, then the newest
 * failures package's), each once; none when neither is there. Each text is signed as it is and,
 * when redacting changes it, redacted as the capture redacts (`redact`): a row this product wrote
 * holds the redacted text, one BAZINGA wrote may not.
 */
export function failureFaults(db: DB, r: AssemblyRequest, projectRoot: string | null, redact: (text: string) => string): string[] {
  const texts: string[] = [];
  if (r.error !== null && r.error.trim() !== '') texts.push(r.error);
  const report = newestGroupFailure(db, r);
  if (report !== undefined) texts.push(failureTextOf(projectRoot, report.summary, report.file_path));
  const keys: string[] = [];
  for (const text of texts) {
    const signed = redact(text) === text ? failureFaultKeys(text) : [...failureFaultKeys(text), ...failureFaultKeys(text, redact)];
    for (const key of signed) if (!keys.includes(key)) keys.push(key);
  }
  return keys;
}
