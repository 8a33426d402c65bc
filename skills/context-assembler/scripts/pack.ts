#!/usr/bin/env -S npx tsx
/**
 * pack.ts: packages redacted, truncated for the zone, counted and packed into the context budget
 *
 * Usage:  tsx pack.ts --session S --agent A [--group G] [flags]     (run from flags)
 *         tsx <previous step> ... | tsx pack.ts [--format json|markdown]   (continue a pipe)
 * Input:  flags, or the previous step's JSON document on stdin (references/assembly-document.md)
 * Output: one JSON document (the assembly document after this step); --format markdown renders it
 * Exit:   0, also when assembly fails (fallback block, warning on stderr); 2 for invalid parameters.
 */
import { main } from './lib/main.ts';

main({
  name: 'pack.ts',
  step: 'pack',
  defaultFormat: 'json',
  readsStdin: true,
  summary: "packages redacted, truncated for the zone, counted and packed into the context budget",
});
