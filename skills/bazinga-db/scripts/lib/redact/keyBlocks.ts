/** Stage 3a: private-key blocks (PEM and the like). Part of the redaction engine (../redact.ts). */
import { Run, marker } from './rules.ts';

export const KEY_BLOCK_BEGIN = /-----BEGIN ((?:[A-Z0-9]{1,12} ){0,3})PRIVATE KEY(?: BLOCK)?-----/g;
export const KEY_BLOCK_END = /-----END (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----/g;

/** PEM, OpenSSH and PGP private-key blocks; one without its END line is cut to the end of the text. */
export function redactKeyBlocks(text: string, run: Run): string {
  if (!text.includes('PRIVATE KEY')) return text;
  let out = '';
  let from = 0;
  KEY_BLOCK_BEGIN.lastIndex = 0;
  for (let m = KEY_BLOCK_BEGIN.exec(text); m; m = KEY_BLOCK_BEGIN.exec(text)) {
    KEY_BLOCK_END.lastIndex = m.index + m[0].length;
    const end = KEY_BLOCK_END.exec(text);
    out += text.slice(from, m.index) + marker('private_key');
    run.hit('private_key');
    if (!end) return out;
    from = end.index + end[0].length;
    KEY_BLOCK_BEGIN.lastIndex = from;
  }
  return out + text.slice(from);
}
