/** report.ts behind the shell: flags, the read-only database, the data, one of three formats. */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  findReportSession,
  invalid,
  markRunComplete,
  notFound,
  openDatabase,
  parseInteger,
  printError,
  redactText,
  usage,
  writeFileInProject,
  type DB,
} from '../../../../bazinga-db/scripts/lib/index.ts';
import { redactionPolicyOf } from '../config.ts';
import { parseFlags } from '../params.ts';
import { guardIo } from '../print.ts';
import { loadEnvironment, type ScriptIo } from '../shell.ts';
import { gatherReport, sessionsToReport } from './data.ts';
import { renderReportHtml, renderReportMarkdown } from './render.ts';

const FLAGS = {
  '--session': 'string',
  '--last': 'string',
  '--format': 'string',
  '--out': 'string',
  '--now': 'string',
  '--db': 'string',
  '--project-root': 'string',
  '--config': 'string',
  '--help': 'bool',
} as const;

const FORMATS = ['markdown', 'json', 'html'] as const;
/** The most sessions one report covers. */
const MAX_LAST = 100;
/** Where an HTML report goes unless --out says otherwise (relative to the project root). */
export const REPORTS_DIR = path.join('bazinga', 'reports');

export const REPORT_HELP = `report: what each spawn was given, what it cost, whether context helped (reads only)

Usage: context-assembler report [--session ID | --last N] [--format markdown|json|html] [--out FILE]
                                [--now ISO] [--project-root DIR] [--db PATH] [--config PATH]

  --session ID   the session to report (default: the newest by start time)
  --last N       the newest N sessions of the database together (1-${MAX_LAST})
  --format F     markdown (default, on stdout), json (on stdout), or html: one self-contained file,
                 written to ${REPORTS_DIR}/<session>.html (or --out), its path printed
  --out FILE     write the report to FILE (any format) instead of stdout / the default path
  --now ISO      the time the report says it was generated (default: now)

Shows the four success metrics against their targets (iterations per group < 3, prompt sizes
< 80 % of the model's limit, context hits > 50 %, QA failure recurrence < 10 %) with how each is
computed and what is missing when it cannot be; per group a timeline of spawns with iteration and
verdict; per spawn what was shown and left out and why, tokens per section against the budget;
packages never delivered; repeated failure signatures; fallbacks. Every text passes the redaction
engine. The assembly record it reads is written by recording assemblies (never by dry runs).
In markdown every stored text shows as text: no heading, table cell, list item, link, image or HTML
comes from the data. A file is never written through a symbolic link inside the project (bazinga/,
bazinga/reports/ or any folder between the project root and the file, --out's too) nor through one
at the file itself: refused, naming it, nothing written. --out's links outside the project are followed.
Exit: 0; 1 when the session or database is missing, or a link refused; 2 for invalid parameters.
`;

export function runReport(rawIo: ScriptIo): number {
  const guarded = guardIo(rawIo);
  const io = guarded.io;
  let flags;
  let format: (typeof FORMATS)[number];
  let last: number;
  let now: Date;
  try {
    flags = parseFlags(io.argv, FLAGS);
    if (flags.bools.has('--help')) {
      io.stdout(REPORT_HELP);
      return 0;
    }
    const f = flags.values.get('--format') ?? 'markdown';
    if (!(FORMATS as readonly string[]).includes(f)) throw invalid(`--format must be one of ${FORMATS.join(', ')}, got '${f}'`);
    format = f as (typeof FORMATS)[number];
    const lastText = flags.values.get('--last');
    if (lastText !== undefined && flags.values.has('--session')) throw usage('--session and --last exclude each other: give one');
    last = lastText === undefined ? 1 : parseInteger('--last', lastText, 1);
    if (last > MAX_LAST) throw invalid(`--last must be between 1 and ${MAX_LAST}, got '${lastText}'`);
    const nowText = flags.values.get('--now');
    now = nowText === undefined ? io.now() : new Date(nowText);
    if (Number.isNaN(now.getTime())) throw invalid(`--now must be an ISO 8601 time such as 2025-12-02T12:00:00Z, got '${nowText}'`);
  } catch (err) {
    return printError(io.stderr, err, { exit: 2 });
  }
  let db: DB | undefined;
  try {
    const env = loadEnvironment(flags, io);
    guarded.setPolicy(redactionPolicyOf(env.config));
    if (!fs.existsSync(env.dbPath)) throw notFound(`Database not found: ${env.dbPath}`);
    // The product's reader: it writes nothing (no -wal or -shm left behind), reads a read-only file
    // in a read-only folder, and refuses a file that is no BAZINGA database with the schema check's words.
    db = openDatabase({ dbPath: env.dbPath, create: false, readOnly: true });
    const session = flags.values.get('--session') ?? null;
    const ids = sessionsToReport(db, session === null ? null : session.trim(), last);
    if (ids.length === 0) throw notFound(`no session in ${env.dbPath}`);
    for (const id of ids) if (findReportSession(db, id) === undefined) throw notFound(`session '${id}' is not in ${env.dbPath}`);
    const data = gatherReport(db, ids, { database: env.dbPath, now, config: env.config });
    const text = format === 'json' ? JSON.stringify(data, null, 2) + '\n' : format === 'markdown' ? renderReportMarkdown(data) : renderReportHtml(data);
    const outFlag = flags.values.get('--out');
    const out = outFlag !== undefined ? path.resolve(io.cwd, outFlag) : format === 'html' ? path.join(env.projectRoot, REPORTS_DIR, `${fileNameOf(ids)}.html`) : undefined;
    if (out !== undefined && [env.dbPath, `${env.dbPath}-wal`, `${env.dbPath}-shm`, `${env.dbPath}-journal`].some((f) => sameFile(f, out))) {
      return printError(io.stderr, invalid(`--out must not name the database or its side files, got '${outFlag}'`), { exit: 2 });
    }
    if (out === undefined) io.stdout(text);
    else {
      // No link inside the project is followed, nor the file itself if it is one (bazinga-db projectWrite.ts).
      writeFileInProject(out, text, { projectRoot: env.projectRoot, mode: 0o600, what: 'report' });
      io.stdout(`${out}\n`);
    }
    markRunComplete();
    return 0;
  } catch (err) {
    return printError(io.stderr, err, { exit: 1 });
  } finally {
    db?.close();
  }
}

/**
 * A file name for the sessions: the one session's id, or the newest's with how many earlier. The id
 * is redacted first (a name can hold a secret too); one that had to be changed to be a safe name
 * (other characters, redaction, over 80 characters) gets a short hash of the id, so two ids never
 * share a file.
 */
function fileNameOf(ids: readonly string[]): string {
  const id = ids[0] as string;
  const safe = redactText(id).replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_').slice(0, 80);
  const name = safe === id ? safe : `${safe}-${createHash('sha256').update(id).digest('hex').slice(0, 8)}`;
  return ids.length === 1 ? name : `${name}-and-${ids.length - 1}-earlier`;
}

/** Whether `a` and `b` name the same file (by real path where they exist). */
function sameFile(a: string, b: string): boolean {
  const real = (f: string) => {
    try {
      return fs.realpathSync(f);
    } catch {
      return path.resolve(f);
    }
  };
  return real(a) === real(b);
}
