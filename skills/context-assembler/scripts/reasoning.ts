#!/usr/bin/env -S npx tsx
/**
 * reasoning.ts: prior agents' reasoning for this recipient, within the reasoning level's token budget
 *
 * Usage:  tsx reasoning.ts --session S --agent A [--group G] [flags]     (run from flags)
 *         tsx <previous step> ... | tsx reasoning.ts [--format json|markdown]   (continue a pipe)
 * Input:  flags, or the previous step's JSON document on stdin (references/assembly-document.md)
 * Output: one JSON document (the assembly document after this step); --format markdown renders it
 * Exit:   0, also when assembly fails (fallback block, warning on stderr); 2 for invalid parameters.
 */
import { main } from './lib/main.ts';

main({
  name: 'reasoning.ts',
  step: 'reasoning',
  defaultFormat: 'json',
  readsStdin: true,
  summary: "prior agents' reasoning for this recipient, within the reasoning level's token budget",
});
