#!/usr/bin/env node
// Launcher for the bazinga-db CLI: works from any working directory (see launch.cjs). A missing
// dependency is the CLI's one-line JSON error on stderr, with the command that installs it; exit 1.
'use strict';
const path = require('node:path');
const { launch } = require('./launch.cjs');

const skillDir = path.resolve(__dirname, '..');
launch(skillDir, 'bazinga-db', (missing, install) => {
  const error = `dependencies are missing (${missing}); install them: ${install}`;
  process.stderr.write(JSON.stringify({ success: false, error, code: 'DB_ERROR' }) + '\n');
  process.exit(1);
}).catch((err) => {
  process.nextTick(() => {
    throw err;
  });
});
