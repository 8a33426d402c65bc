#!/usr/bin/env -S npx tsx
/**
 * report.ts: what each spawn of a session was given, what it cost, and whether context helped: the
 * four success metrics, a timeline per group, every spawn's items shown and left out; as markdown,
 * JSON, or one self-contained HTML file. Reads only.
 *
 * Usage:  tsx report.ts [--session ID | --last N] [--format markdown|json|html] [--out FILE] [--project-root DIR]
 * Output: the report on stdout (markdown, json), or the HTML file's path
 * Exit:   0; 1 when the session or database is missing, or a link is refused; 2 for invalid parameters
 */
import { runReport } from './lib/report/run.ts';
import { mainWith } from './lib/main.ts';

mainWith(runReport);
