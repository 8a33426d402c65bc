/**
 * Redaction in linear time: 1 MB adversarial inputs full of near-matches (test/secrets/hostile.ts),
 * each redacted by the engine, with the time for 1 MB and the ratio of 1 MB to 100 KB of the same
 * input (10 means linear; a backtracking rule would show 100 or more). Run alone:
 * `tsx bench/redaction.ts [--help]`.
 */
import { fileURLToPath } from 'node:url';
import { redact } from '../skills/bazinga-db/scripts/lib/index.ts';
import { HOSTILE_SHAPES } from '../test/secrets/hostile.ts';

/** Each input, as a function of its size: the shapes that make a careless rule backtrack (shared with test/redaction.linear.test.ts). */
export const ADVERSARIAL: Record<string, (bytes: number) => string> = HOSTILE_SHAPES;

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
