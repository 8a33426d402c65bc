#!/usr/bin/env node
// Launcher for scripts/install.ts (context-assembler-install): loads tsx from this bundle.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./install.ts');
process.exitCode = main(process.argv.slice(2));
