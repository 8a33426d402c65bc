#!/usr/bin/env -S npx tsx
/**
 * rank.ts: eligible context packages ranked for the agent, plus error patterns and strategies
 *
 * Usage:  tsx rank.ts --session S --agent A [--group G] [flags]     (run from flags)
 *         tsx <previous step> ... | tsx rank.ts [--format json|markdown]   (continue a pipe)
 * Input:  flags, or the previous step's JSON document on stdin (references/assembly-document.md)
 * Output: one JSON document (the assembly document after this step); --format markdown renders it
 * Exit:   0, also when assembly fails (fallback block, warning on stderr); 2 for invalid parameters.
 */
import { main } from './lib/main.ts';

main({
  name: 'rank.ts',
  step: 'rank',
  defaultFormat: 'json',
  readsStdin: true,
  summary: "eligible context packages ranked for the agent, plus error patterns and strategies",
});
