/**
 * JSON text written exactly as Python's `json.dumps` does with default arguments, so that JSON
 * stored in the database (signature_json, references_json, context_references, specializations)
 * looks the same whichever tool wrote the row: `", "` and `": "` separators, no indentation, and
 * every character outside printable ASCII escaped (`\uXXXX`, lower-case hex, surrogate pairs).
 */

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

function dumpString(s: string): string {
  let out = '"';
  // Iterate UTF-16 code units: astral characters come out as their surrogate pair, as in Python.
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] as string;
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) {
      out += short;
      continue;
    }
    const code = s.charCodeAt(i);
    out += code >= 0x20 && code <= 0x7e ? ch : '\\u' + code.toString(16).padStart(4, '0');
  }
  return out + '"';
}

function dumpNumber(n: number): string {
  if (!Number.isFinite(n)) throw new TypeError(`cannot serialise non-finite number ${n}`);
  return String(n);
}

/** Serialises a JSON value the way Python's `json.dumps(value)` does. */
export function pyJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return dumpString(value);
  if (typeof value === 'number') return dumpNumber(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) return '[' + value.map(pyJsonDumps).join(', ') + ']';
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return '{' + entries.map(([k, v]) => `${dumpString(k)}: ${pyJsonDumps(v)}`).join(', ') + '}';
  }
  throw new TypeError(`cannot serialise ${typeof value}`);
}
