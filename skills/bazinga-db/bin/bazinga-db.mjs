#!/usr/bin/env node
// Launcher for the bazinga-db CLI: works from any working directory (see launch.mjs). A missing
// dependency is the CLI's one-line JSON error on stderr, with the command that installs it; exit 1.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from './launch.mjs';

const skillDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
await launch(skillDir, 'bazinga-db', (missing, install) => {
  const error = `dependencies are missing (${missing}); install them: ${install}`;
  process.stderr.write(JSON.stringify({ success: false, error, code: 'DB_ERROR' }) + '\n');
  process.exit(1);
});
