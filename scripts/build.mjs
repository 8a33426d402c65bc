#!/usr/bin/env node
// Builds the prebuilt bundles the launchers run (no TypeScript compilation on the hot path):
//   skills/context-assembler/dist/{assemble,zone,rank,pack,reasoning,consume,fetch,doctor}.mjs
//   skills/bazinga-db/dist/bazinga-db.mjs
// plus dist/inputs.json listing the sources each was built from, so a launcher can tell a stale
// bundle from a fresh one. Runs at install (`prepare`); `npm run build` rebuilds by hand.
// better-sqlite3 (native) and js-tiktoken (its rank table loads lazily) stay external.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  process.stderr.write('build: esbuild is not installed; the launchers will run the TypeScript sources through tsx\n');
  process.exit(0);
}

const targets = [
  {
    skill: 'context-assembler',
    scripts: ['assemble', 'zone', 'rank', 'pack', 'reasoning', 'consume', 'fetch', 'doctor'],
  },
  { skill: 'bazinga-db', scripts: ['bazinga-db'] },
];

for (const { skill, scripts } of targets) {
  const skillDir = path.join(root, 'skills', skill);
  const outdir = path.join(skillDir, 'dist');
  const staging = `${outdir}.tmp-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: Object.fromEntries(scripts.map((s) => [s, path.join(skillDir, 'scripts', `${s}.ts`)])),
    outdir: staging,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: ['better-sqlite3', 'js-tiktoken', 'js-tiktoken/*'],
    metafile: true,
    logLevel: 'warning',
    legalComments: 'none',
  });
  const inputs = Object.keys(result.metafile.inputs)
    .map((p) => path.relative(outdir, path.resolve(root, p)).split(path.sep).join('/'))
    .sort();
  fs.writeFileSync(path.join(staging, 'inputs.json'), JSON.stringify({ inputs }, null, 2) + '\n');
  // Replace the previous bundle in one step: a launcher never sees half of a build.
  fs.rmSync(outdir, { recursive: true, force: true });
  fs.renameSync(staging, outdir);
  process.stdout.write(`build: ${path.relative(root, outdir)}/ (${scripts.length} entries, ${inputs.length} sources)\n`);
}
