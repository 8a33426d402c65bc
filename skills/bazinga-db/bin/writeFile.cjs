// The one atomic file write of the product (plain JavaScript: the launchers, the plugin's hooks and
// the TypeScript code all use it, some before anything is built or installed).
//
// writeFileAtomically(file, data, { mode, mtime }) writes `data` to a temporary file beside the
// target (made exclusively: an existing file or link at that name is never followed), gives it
// `mode` (default: the target's own, else 0o644) and, when given, the modification time `mtime`,
// then renames it over the target: a reader sees the old file or the new one, never half of one.
// A target that is a symbolic link is written where it points (the link stays a link), unless
// `replaceLink` is set (an installer replacing its own files). On any failure the temporary file is
// removed and the error thrown.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

function writeFileAtomically(file, data, options = {}) {
  let dest = file;
  if (!options.replaceLink) {
    try {
      dest = fs.realpathSync(file);
    } catch {
      // absent: written where named
    }
  }
  let mode = options.mode;
  if (mode === undefined) {
    try {
      mode = fs.statSync(dest).mode & 0o777;
    } catch {
      mode = 0o644;
    }
  }
  const tmp = path.join(path.dirname(dest), `.${path.basename(dest)}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(tmp, data, { mode, flag: 'wx' });
    fs.chmodSync(tmp, mode);
    if (options.mtime !== undefined) fs.utimesSync(tmp, options.mtime, options.mtime);
    fs.renameSync(tmp, dest);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

module.exports = { writeFileAtomically };
