/**
 * Fault signatures in linear time: 1 MB of each text shape that makes a careless pattern slow
 * (test/textShapes.ts: the tools' outputs, long runs of path, number, blank and marker characters,
 * one word with no end), signed as a tool output (faultSignature) and keyed as a stored pattern's
 * text (faultKeyOf), with the time for 1 MB (the median of the runs) and the ratio of 1 MB to 100 KB
 * of the same shape (of the least times: a busy machine only ever adds; 10 means linear, a
 * backtracking pattern shows 100 or more). Run alone: `tsx bench/signature.ts [--help]`.
 */
import { fileURLToPath } from 'node:url';
import { faultKeyOf, faultSignature } from '../skills/bazinga-db/scripts/lib/index.ts';
import { TEXT_SHAPES } from '../test/textShapes.ts';

/** The median and the least of `repeats` timed calls, in ms. */
function timesMs(run: () => unknown, repeats: number): { median: number; least: number } {
  const samples: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const start = performance.now();
    run();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(samples.length / 2)] as number, least: samples[0] as number };
}

export interface SignatureBenchRow {
  shape: string;
  /** faultSignature of 1 MB (ms). */
  ms_1mb: number;
  /** faultKeyOf of a stored pattern holding the 1 MB text (ms). */
  key_ms_1mb: number;
  /** faultSignature of 100 KB (ms), and 1 MB / 100 KB (of the least times). */
  ms_100kb: number;
  ratio: number;
}

export function benchSignature(repeats = 3): SignatureBenchRow[] {
  return Object.entries(TEXT_SHAPES).map(([shape, make]) => {
    const big = make(1_000_000);
    const small = make(100_000);
    faultSignature(small); // compiled before it is timed
    const signed = timesMs(() => faultSignature(big), repeats);
    const keyed = timesMs(() => faultKeyOf({ error_type: 'Error', message_pattern: big }), repeats);
    // Ten times the repeats for a tenth of the text: its time is short, and noisier.
    const smallSigned = timesMs(() => faultSignature(small), repeats * 10);
    return { shape, ms_1mb: signed.median, key_ms_1mb: keyed.median, ms_100kb: smallSigned.median, ratio: signed.least / smallSigned.least };
  });
}

export function printSignatureTable(rows: readonly SignatureBenchRow[]): void {
  console.log('\n| fault signature of 1 MB | signature ms | stored pattern key ms | 100 KB ms | 1 MB / 100 KB |\n|---|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.shape} | ${r.ms_1mb.toFixed(1)} | ${r.key_ms_1mb.toFixed(1)} | ${r.ms_100kb.toFixed(1)} | ${r.ratio.toFixed(1)} |`);
}

const HELP = `bench/signature: the time to sign 1 MB of each text shape as a tool output and as a stored pattern, and the 1 MB / 100 KB ratio (about 10: linear)

Usage: npx tsx bench/signature.ts     (also part of npm run bench)
`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) process.stdout.write(HELP);
  else printSignatureTable(benchSignature());
}
