#!/usr/bin/env -S npx tsx
/**
 * assemble.ts: every step in one process: the context block the orchestrator pastes into the spawn prompt
 *
 * Usage:  tsx assemble.ts --session S --agent A [--group G] [flags]
 * Input:  flags (see --help)
 * Output: the markdown context block (default) or the final JSON document
 * Exit:   0, also when assembly fails (fallback block, warning on stderr); 2 for invalid parameters.
 */
import { ASSEMBLE, main } from './lib/main.ts';

main(ASSEMBLE);
