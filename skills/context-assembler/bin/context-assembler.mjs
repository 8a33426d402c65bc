#!/usr/bin/env node
// Launcher for the context-assembler scripts that works from any working directory: it loads tsx
// from the bundle's own node_modules (resolved relative to this file, not the caller's cwd).
//
//   context-assembler.mjs [flags]              → assemble.ts (the orchestrator's one command)
//   context-assembler.mjs <step> [flags]       → <step>.ts, step one of: zone rank pack reasoning consume assemble fetch
import { register } from 'tsx/esm/api';

const STEPS = new Set(['zone', 'rank', 'pack', 'reasoning', 'consume', 'assemble', 'fetch']);
const first = process.argv[2];
let script = 'assemble';
if (first !== undefined && !first.startsWith('-')) {
  if (!STEPS.has(first)) {
    process.stderr.write(
      JSON.stringify({ success: false, error: `Unknown step '${first}'. Steps: ${[...STEPS].join(', ')}`, code: 'USAGE' }) + '\n',
    );
    process.exit(2);
  }
  script = first;
  process.argv.splice(2, 1);
}
register();
await import(`../scripts/${script}.ts`);
