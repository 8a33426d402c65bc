/**
 * The one way the context-assembler scripts print: every text written to stdout or stderr goes
 * through the redaction engine first, whatever produced it (the block, a JSON document, --explain,
 * fetch, an echoed --task or --error, a warning, an error line). Items are also redacted one by
 * one before packing, so that budgets count what is printed; this is the guarantee at the door.
 */
import { DEFAULT_POLICY, redactJsonValue, redactionMemo, redactText, type RedactionMemo, type RedactionPolicy, type TextRedaction } from '../../../bazinga-db/scripts/lib/index.ts';

export interface PrintIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * Redacts a printed text. A JSON document is redacted value by value and printed again in the
 * same layout (a replacement inside a serialised string could otherwise break its escaping).
 * `redactString` redacts each text (a script passes its redactionMemo, shared with its items).
 */
export function redactPrinted(text: string, policy: RedactionPolicy, redactString: TextRedaction = redactText): string {
  const trimmed = text.trim();
  if ((trimmed.startsWith('{') && trimmed.endsWith('}')) || (trimmed.startsWith('[') && trimmed.endsWith(']'))) {
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      return redactString(text, policy);
    }
    const indented = /\n\s/.test(trimmed);
    return JSON.stringify(redactJsonValue(value, policy, redactString), null, indented ? 2 : undefined) + (text.endsWith('\n') ? '\n' : '');
  }
  return redactString(text, policy);
}

/**
 * Wraps stdout and stderr so that nothing leaves unredacted; `setPolicy` applies the project's
 * policy once known. `redactString` is the script's redactionMemo: hand it to whatever redacts
 * the items, so that the texts printed were mostly seen already. `printJson` prints a document
 * the script holds as a value (indented, one line break after): each string redacted as
 * redactPrinted would, without serialising it first and parsing it back (the memo then meets the
 * very strings it redacted, not copies it would have to hash and compare again).
 */
export function guardIo<T extends PrintIo>(io: T): { io: T; setPolicy: (policy: RedactionPolicy) => void; redactString: RedactionMemo; printJson: (value: unknown) => void } {
  let policy = DEFAULT_POLICY;
  const redactString = redactionMemo();
  return {
    io: { ...io, stdout: (t: string) => io.stdout(redactPrinted(t, policy, redactString)), stderr: (t: string) => io.stderr(redactPrinted(t, policy, redactString)) },
    redactString,
    printJson: (value) => io.stdout(JSON.stringify(redactJsonValue(value, policy, redactString), null, 2) + '\n'),
    setPolicy: (p) => {
      policy = p;
    },
  };
}
