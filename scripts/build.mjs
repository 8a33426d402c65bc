#!/usr/bin/env node
// Builds the prebuilt bundles the launchers run (no TypeScript compilation on the hot path):
//   skills/context-assembler/dist/{assemble,zone,rank,pack,reasoning,consume,fetch}.cjs (one
//     self-contained CommonJS file each), doctor.mjs (+ its chunk-*.mjs)
//   skills/bazinga-db/dist/bazinga-db.cjs, and cl100k_base.ranks (the token counter's rank table
//     in a form that loads in a third of the time; both skills' counters read it from there)
// plus dist/inputs.json naming each script's file (`entries`) and listing the sources they were
// built from (`inputs`), so a launcher can tell a stale bundle from a fresh one. Runs at install
// (`prepare`); `npm run build` rebuilds by hand.
//
// CommonJS, one file per script, because start-up is what the orchestrator waits for: it loads
// faster than ESM, split or not (no module linking; better-sqlite3 is a plain require instead of
// going through the CommonJS-from-ESM translator): about 7 ms less CPU per start than split ESM
// chunks (measured: 124 → 117 ms, `node -e 0` 54 ms). import.meta.url (createRequire in the
// sources) is the bundle's own file URL there. doctor stays ESM with split chunks: it uses
// top-level await and dynamic imports, and it is not on the hot path.
// js-tiktoken (its rank table loads lazily) stays external, and so does better-sqlite3's native
// addon (its JavaScript is bundled into the CommonJS bundles, external in doctor's).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
  fs.writeSync(
    1,
    `build: the prebuilt bundles the launchers run (skills/*/dist/), and the token counter's rank file

Usage: node scripts/build.mjs     (npm run build; also run at install, by npm's prepare)

Without esbuild installed it builds nothing and says so (exit 0): the launchers then run the
TypeScript sources through tsx.
`,
  );
  process.exit(0);
}

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
    scripts: ['assemble', 'zone', 'rank', 'pack', 'reasoning', 'consume', 'fetch', 'prompt-hook', 'serve', 'report', 'doctor'],
    esm: ['doctor'],
  },
  { skill: 'bazinga-db', scripts: ['bazinga-db'], esm: [] },
];

const common = {
  absWorkingDir: root, // the metafile's input paths are relative to it, whatever the caller's cwd
  bundle: true,
  platform: 'node',
  target: 'node20',
  external: ['better-sqlite3', 'js-tiktoken', 'js-tiktoken/*'],
  metafile: true,
  logLevel: 'warning',
  legalComments: 'none',
};
/** The version of better-sqlite3 whose JavaScript the CommonJS bundles take in (the one installed here). */
function bundledSqliteVersion() {
  return JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')).version;
}
const formats = {
  cjs: {
    format: 'cjs',
    // better-sqlite3's JavaScript is bundled in, so its code is compiled once and cached with the
    // rest (loading it from node_modules cost a few milliseconds of every start: its module
    // resolution and compilation); its native addon stays in node_modules, loaded by path
    // (driver.ts). The version bundled is defined for driver.ts, which loads the installed
    // JavaScript where it differs or the addon is not where it looks (`bindings`, the default
    // lookup, works only from the installed package, and stays external).
    external: ['bindings', 'js-tiktoken', 'js-tiktoken/*'],
    outExtension: { '.js': '.cjs' },
    define: { 'import.meta.url': '__importMetaUrl', __BUNDLED_BETTER_SQLITE3__: JSON.stringify(bundledSqliteVersion()) },
    // "use strict" first: the sources are ES modules (strict), and a directive after the banner would not count.
    banner: { js: '"use strict";\nconst __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    // Any other import.meta property would be empty in CommonJS: fail the build instead.
    logOverride: { 'empty-import-meta': 'error' },
  },
  // Split: doctor's dynamic imports (shell.ts, which needs better-sqlite3) stay separate chunks, so
  // a missing better-sqlite3 fails that import, caught, not the loading of doctor itself.
  // A CommonJS module bundled in (bazinga-db's bin/writeFile.cjs) requires Node's modules: an ES
  // module has no `require`, so each chunk makes one.
  esm: {
    format: 'esm',
    outExtension: { '.js': '.mjs' },
    splitting: true,
    banner: { js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);" },
  },
};

/**
 * The cl100k rank table in the form tokens.ts loads fastest (RANKS_FILE, next to bazinga-db's
 * bundle), made by tokens.ts's own encoder: bundled into the staging folder, run, removed.
 */
async function writeRanks(dir) {
  const writer = path.join(dir, 'ranks-writer.mjs');
  await esbuild.build({ ...common, metafile: false, format: 'esm', entryPoints: [path.join(root, 'skills', 'bazinga-db', 'scripts', 'lib', 'tokens.ts')], outfile: writer });
  const { encodeRanks, RANKS_FILE } = await import(pathToFileURL(writer).href);
  fs.writeFileSync(path.join(dir, RANKS_FILE), encodeRanks());
  fs.rmSync(writer);
}

for (const { skill, scripts, esm } of targets) {
  const skillDir = path.join(root, 'skills', skill);
  const outdir = path.join(skillDir, 'dist');
  const staging = `${outdir}.tmp-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  const entries = {};
  const inputs = new Set();
  for (const [format, names] of [
    ['cjs', scripts.filter((s) => !esm.includes(s))],
    ['esm', esm],
  ]) {
    if (names.length === 0) continue;
    const result = await esbuild.build({
      ...common,
      ...formats[format],
      entryPoints: Object.fromEntries(names.map((s) => [s, path.join(skillDir, 'scripts', `${s}.ts`)])),
      outdir: staging,
    });
    for (const s of names) entries[s] = `${s}${formats[format].outExtension['.js']}`;
    // The project's own sources: better-sqlite3's JavaScript bundled in is not one (an install
    // keeps node_modules elsewhere; driver.ts checks the version bundled against the installed one).
    for (const p of Object.keys(result.metafile.inputs)) {
      if (!/(^|[\\/])node_modules[\\/]better-sqlite3[\\/]/.test(p)) inputs.add(path.relative(outdir, path.resolve(root, p)).split(path.sep).join('/'));
    }
  }
  if (skill === 'bazinga-db') await writeRanks(staging);
  fs.writeFileSync(path.join(staging, 'inputs.json'), JSON.stringify({ entries, inputs: [...inputs].sort() }, null, 2) + '\n');
  // Replace the previous bundle in one step: a launcher never sees half of a build.
  fs.rmSync(outdir, { recursive: true, force: true });
  fs.renameSync(staging, outdir);
  process.stdout.write(`build: ${path.relative(root, outdir)}/ (${scripts.length} entries, ${inputs.size} sources)\n`);
}
