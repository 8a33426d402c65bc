/** Stage 1: `<private>…</private>` blocks, removed whole. Part of the redaction engine (../redact.ts). */
import { Run, marker } from './rules.ts';

export const PRIVATE_OPEN = /<private>/gi;

export function removePrivate(text: string, run: Run): string {
  if (!/<private>/i.test(text)) return text;
  const lower = text.toLowerCase();
  let out = '';
  let from = 0;
  PRIVATE_OPEN.lastIndex = 0;
  for (let m = PRIVATE_OPEN.exec(text); m; m = PRIVATE_OPEN.exec(text)) {
    const close = lower.indexOf('</private>', m.index + m[0].length);
    out += text.slice(from, m.index) + marker('private');
    run.hit('private');
    if (close === -1) return out; // unterminated: everything after the tag is private
    from = close + '</private>'.length;
    PRIVATE_OPEN.lastIndex = from;
  }
  return out + text.slice(from);
}
