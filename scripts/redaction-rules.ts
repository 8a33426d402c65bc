/**
 * Prints the table of redaction rules that references/redaction.md holds (the test suite checks
 * that the page contains exactly this table): `tsx scripts/redaction-rules.ts [--help]`.
 */
import { fileURLToPath } from 'node:url';
import { RULE_DOCS, redact } from '../skills/bazinga-db/scripts/lib/redact.ts';

/** A table cell holding a code sample: one line, pipes escaped. */
const code = (text: string) => '`' + text.replace(/\n/g, '⏎').replace(/\|/g, '\\|') + '`';

export function ruleTable(): string {
  const rows = RULE_DOCS.map(
    (r) => `| \`${r.id}\` | ${r.title.replace(/\|/g, '\\|')} | ${code(r.example.removes)} → ${code(redact(r.example.removes).text)} | ${code(r.example.keeps)} |`,
  );
  return ['| Rule (marker) | What it removes | Example: removed | Example: kept as written |', '|---|---|---|---|', ...rows].join('\n') + '\n';
}

const HELP = `redaction-rules: prints the markdown table of the redaction rules (references/redaction.md holds it)

Usage: npx tsx scripts/redaction-rules.ts
`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const help = process.argv.slice(2).some((a) => a === '--help' || a === '-h');
  process.stdout.write(help ? HELP : ruleTable());
}
