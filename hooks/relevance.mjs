// Relevance on where BAZINGA users are. BAZINGA ships bazinga/skills_config.json with
// "context_engineering": {"enable_fts5": false, …} (its conservative feature flag), and its installer
// keeps a project's file; with it, every query of this product ranks without relevance. The installer
// (install-skills) and the plugin's first session turn it on once, with one line saying so:
//   - the file's bytes change only in that value (the rest of its layout stays), checked by parsing;
//   - the previous file is kept beside it (PREVIOUS) and the change is recorded (RECORD);
//   - a user who sets it back to false afterwards is never overridden: the record says it was done.
// Plain JavaScript with no dependencies: the plugin's SessionStart hook runs it before any build.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

// The product's one atomic file write (plain JavaScript, like this file).
const { writeFileAtomically } = createRequire(import.meta.url)('../skills/bazinga-db/bin/writeFile.cjs');

export const CONFIG = 'bazinga/skills_config.json';
/** The file as it was before the change. */
export const PREVIOUS = 'bazinga/skills_config.json.before-context-assembler';
/** That the change was made once (and when): it is never made again. */
export const RECORD = 'bazinga/.context-assembler-relevance.json';
const KEY = /("enable_fts5"\s*:\s*)false\b/g;

/**
 * What turning relevance on in `project` would do: `{ state, line, text? }`, state one of
 *   'on'         relevance is on (or no config file: the defaults have it on), nothing to do
 *   'turn-on'    the file has enable_fts5 false and was never changed: `text` is the new file
 *   'kept-off'   set back to false after it was turned on: respected, nothing to do
 *   'unreadable' the file is not a regular file or not JSON: left alone
 * Reads only.
 */
export function planRelevance(project) {
  const file = path.join(project, CONFIG);
  let text;
  try {
    if (!fs.statSync(file).isFile()) return { state: 'unreadable', line: `${CONFIG} is not a regular file; relevance left as configured` };
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return { state: 'on', line: '' };
  }
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return { state: 'unreadable', line: `${CONFIG} is not valid JSON; relevance left as configured` };
  }
  if (value?.context_engineering?.enable_fts5 !== false) return { state: 'on', line: '' };
  if (fs.existsSync(path.join(project, RECORD))) {
    return { state: 'kept-off', line: `Relevance: off (${CONFIG}: context_engineering.enable_fts5 is false, set back after it was turned on; left as you set it)` };
  }
  const next = withFts5On(text, value);
  return {
    state: 'turn-on',
    text: next,
    line: `Relevance: turned on (${CONFIG}: context_engineering.enable_fts5 false -> true, BAZINGA's shipped default; previous file kept at ${PREVIOUS}; set it back to false to keep it off, it is not changed again)`,
  };
}

/** The file with context_engineering.enable_fts5 true: the one `false` token replaced when that alone does it, else the object written again. */
function withFts5On(text, value) {
  const wanted = { ...value, context_engineering: { ...value.context_engineering, enable_fts5: true } };
  const matches = text.match(KEY) ?? [];
  if (matches.length === 1) {
    const edited = text.replace(KEY, '$1true');
    try {
      if (JSON.stringify(JSON.parse(edited)) === JSON.stringify(wanted)) return edited;
    } catch {
      // fall through: write the object again
    }
  }
  return JSON.stringify(wanted, null, 2) + '\n';
}

/** Makes the change `plan` (state 'turn-on') describes: previous file kept, new file written through a rename, record written. */
export function applyRelevance(project, plan, now = new Date()) {
  // A config that is a symbolic link is written where it points (the link stays a link).
  const file = path.join(project, CONFIG);
  fs.copyFileSync(file, path.join(project, PREVIOUS));
  writeFileAtomically(file, plan.text);
  fs.writeFileSync(path.join(project, RECORD), JSON.stringify({ enable_fts5: true, turned_on_at: now.toISOString(), previous: PREVIOUS }, null, 2) + '\n');
}
