/**
 * Token counting with js-tiktoken's cl100k_base, loaded lazily on the first count (once per
 * process), times a per-model correction factor (cl100k undercounts Claude). js-tiktoken's BPE is
 * quadratic in the length of a single pre-token, so runs without whitespace longer than
 * MAX_RUN characters are cut into pieces before encoding; counting stays linear in the text.
 */
import { createRequire } from 'node:module';
import type { Tiktoken } from 'js-tiktoken/lite';
import type { CountTokens } from './core/pack.ts';

/** Longest run of non-whitespace encoded in one piece. */
export const MAX_RUN = 128;

let encoder: Tiktoken | undefined;

function getEncoder(): Tiktoken {
  if (!encoder) {
    const require = createRequire(import.meta.url);
    const { Tiktoken: Encoder } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
    const ranks = require('js-tiktoken/ranks/cl100k_base') as { default?: unknown };
    encoder = new Encoder((ranks.default ?? ranks) as ConstructorParameters<typeof Encoder>[0]);
  }
  return encoder;
}

/** True once the encoder has been loaded in this process. */
export function tokenizerLoaded(): boolean {
  return encoder !== undefined;
}

const LONG_RUN = new RegExp(`\\S{${MAX_RUN + 1},}`, 'g');

/** cl100k_base token count of `text`, with long whitespace-free runs encoded in MAX_RUN pieces. */
export function countCl100k(text: string): number {
  if (text === '') return 0;
  const enc = getEncoder();
  let total = 0;
  let last = 0;
  for (const m of text.matchAll(LONG_RUN)) {
    const start = m.index ?? 0;
    if (start > last) total += enc.encode(text.slice(last, start)).length;
    const run = m[0];
    for (let i = 0; i < run.length; i += MAX_RUN) total += enc.encode(run.slice(i, i + MAX_RUN)).length;
    last = start + run.length;
  }
  if (last < text.length) total += enc.encode(text.slice(last)).length;
  return total;
}

/** A counter for one model: ceil(cl100k count × factor). */
export function makeTokenCounter(factor: number): CountTokens {
  return (text) => Math.ceil(countCl100k(text) * factor);
}
