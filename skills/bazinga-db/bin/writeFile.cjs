// The one atomic file write of the product (plain JavaScript: the launchers, the plugin's hooks and
// the TypeScript code all use it, some before anything is built or installed).
//
// writeFileAtomically(file, data, { mode, mtime }) writes `data` to a temporary file beside the
// target (a short name of its own, not made from the target's, so that any name the file system
// takes fits; made exclusively: an existing file or link at that name is never followed, nor
// removed), gives it `mode` (default: the target's own, else 0o644) and, when given, the
// modification time `mtime`, then renames it over the target: a reader sees the old file or the
// new one, never half of one.
// A target that is a symbolic link is written where it points (the link stays a link), unless
// `replaceLink` is set (an installer replacing its own files). On any failure the temporary file is
// removed and the error thrown.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/**
 * The temporary file's name: a fixed prefix and 16 random hex digits (35 characters whatever the
 * target's name), so that a target named up to the file system's limit (255 bytes) leaves room for
 * it in the same folder. node:crypto is loaded only when a file is written.
 */
const temporaryName = () => `.bazinga-write-${require('node:crypto').randomBytes(8).toString('hex')}.tmp`;

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
  const tmp = path.join(path.dirname(dest), temporaryName());
  // Made exclusively (an error when anything stands at that name: not this write's, so it stays),
  // then written through its descriptor only, never by name again.
  const fd = fs.openSync(tmp, 'wx', mode);
  try {
    try {
      fs.writeFileSync(fd, data);
      fs.fchmodSync(fd, mode);
      if (options.mtime !== undefined) fs.futimesSync(fd, options.mtime, options.mtime);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, dest);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

module.exports = { writeFileAtomically };
