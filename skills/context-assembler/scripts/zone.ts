#!/usr/bin/env -S npx tsx
/**
 * zone.ts: zone and budgets: how full the orchestrator's window is and how many tokens this agent's context may use
 *
 * Usage:  tsx zone.ts --session S --agent A [--group G] [flags]
 * Input:  flags (see --help)
 * Output: one JSON document (the assembly document after this step); --format markdown renders it
 * Exit:   0, also when assembly fails (fallback block, warning on stderr); 2 for invalid parameters.
 */
import { main } from './lib/main.ts';

main({
  name: 'zone.ts',
  step: 'zone',
  defaultFormat: 'json',
  readsStdin: false,
  summary: "zone and budgets: how full the orchestrator's window is and how many tokens this agent's context may use",
});
