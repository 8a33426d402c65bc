/**
 * Redaction in linear time: 1 MB adversarial inputs full of near-matches, each redacted by the
 * engine, with the time for 1 MB and the ratio of 1 MB to 100 KB of the same input (10 means
 * linear; a backtracking rule would show 100 or more). Run alone: `tsx bench/redaction.ts [--help]`.
 */
import { fileURLToPath } from 'node:url';
import { redact } from '../skills/bazinga-db/scripts/lib/index.ts';
import { SECRET_CASES } from '../test/secrets/corpus.ts';

/** Repeats `unit` to `bytes` characters. */
const fill = (unit: string, bytes: number) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);

/** Each input, as a function of its size: the shapes that make a careless rule backtrack. */
export const ADVERSARIAL: Record<string, (bytes: number) => string> = {
  'a= repeated': (n) => fill('a=', n),
  'password=password=…': (n) => fill('password=', n),
  'unclosed quotes after keys': (n) => fill('token="', n),
  'nested escaped quotes': (n) => fill('{\\"password\\": \\"', n),
  'key-like words, no operator': (n) => fill('api_key_secret_token_password ', n),
  'one word of name characters': (n) => fill('secret_token.', n),
  'near-miss vendor prefixes': (n) => fill('sk-ant- ghp_ AKIA xoxb- eyJ.eyJ npm_ glpat- ', n),
  'long base64 run': (n) => fill('QmFzZTY0IHRleHQgdGhhdCBuZXZlciBlbmRz', n),
  'unterminated private blocks': (n) => fill('-----BEGIN PRIVATE KEY----- <private', n),
  'URLs with colons, no @': (n) => fill('postgres://user:pass:word/', n),
  'keys whose values are code (token=this.)': (n) => fill('token=this.', n),
  'rejected values after keys (secret=config.)': (n) => fill('secret=config.', n),
  'query strings (password=a&)': (n) => fill('password=a&', n),
  'SAS-like parameters (&sig=)': (n) => fill('&sig=', n),
  'YAML keys without values (token: )': (n) => fill('token: ', n),
  'dense URL heads (a://:)': (n) => fill('a://:', n),
  'Markdown table rows on one line (password cells)': (n) => fill('| password | x ', n),
  'INI-like keys on one line (password = word )': (n) => fill('password = word ', n),
  'YAML block headers (token: then a bar)': (n) => fill('token: |\n', n),
  'client names without -p (mysql -u )': (n) => fill('mysql -u ', n),
  'unclosed XML elements (<password>x)': (n) => fill('<password>x', n),
  'netrc words (login a password )': (n) => fill('login a password ', n),
  'digit runs in identifier-like tokens (Ab000…_)': (n) => fill('Ab' + '0'.repeat(26) + '_ ', n),
  'blank runs after a redacted value': (n) => fill('password=hunter2' + ' '.repeat(1000) + '\n', n),
  'wide indented lines under YAML keys': (n) => fill('password: |\n' + ' '.repeat(1010) + 'x\n', n),
  'URL credentials before runs of @ (a://b:c@@@@ )': (n) => fill('a://b:c@@@@ ', n),
  'corpus text (real secrets)': (n) => fill(SECRET_CASES.map((c) => c.text).join('\n'), n),
};

function timeMs(text: string, repeats: number): number {
  const samples: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const start = performance.now();
    redact(text);
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] as number;
}

export interface RedactionBenchRow {
  input: string;
  ms_1mb: number;
  ms_100kb: number;
  ratio: number;
}

export function benchRedaction(repeats = 3): RedactionBenchRow[] {
  return Object.entries(ADVERSARIAL).map(([input, make]) => {
    const big = make(1_000_000);
    const small = make(100_000);
    timeMs(small, 1); // warm up the compiled regexes
    const msBig = timeMs(big, repeats);
    const msSmall = timeMs(small, repeats);
    return { input, ms_1mb: msBig, ms_100kb: msSmall, ratio: msBig / msSmall };
  });
}

export function printRedactionTable(rows: readonly RedactionBenchRow[]): void {
  console.log('\n| redaction input (1 MB) | ms | 100 KB ms | 1 MB / 100 KB |\n|---|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.input} | ${r.ms_1mb.toFixed(1)} | ${r.ms_100kb.toFixed(1)} | ${r.ratio.toFixed(1)} |`);
}

const HELP = `bench/redaction: the time to redact 1 MB of each adversarial input, and its 1 MB / 100 KB ratio (about 10: linear)

Usage: npx tsx bench/redaction.ts     (also part of npm run bench)
`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) process.stdout.write(HELP);
  else printRedactionTable(benchRedaction());
}
