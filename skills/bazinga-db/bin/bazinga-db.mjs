#!/usr/bin/env node
// Launcher for the bazinga-db CLI that works from any working directory: it loads tsx from the
// bundle's own node_modules (resolved relative to this file, not the caller's cwd) and runs
// ../scripts/bazinga-db.ts with the caller's arguments.
import { register } from 'tsx/esm/api';

register();
await import('../scripts/bazinga-db.ts');
