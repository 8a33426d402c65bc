/**
 * The report as markdown and as one self-contained HTML file, from the data gatherReport made (its
 * texts redacted there). The HTML needs nothing: no script at all, no server, no network (its
 * content security policy forbids every fetch; styles are inline), its tables written when it is
 * generated, its two charts drawn as inline SVG: the tokens each block used per spawn (with its budget), and
 * iterations per group against the target.
 */
import type { Metric } from './metrics.ts';
import type { GroupReport, ReportData, SessionReport, SpawnReport, Titled } from './data.ts';
import { markdownText as md } from './markdownText.ts';


const fmt = (x: number | null, digits = 0): string => (x === null ? '—' : x.toFixed(digits));
const metricValue = (m: Metric): string => (m.value === null ? 'not computable' : `${m.value}${m.unit === '%' ? ' %' : ''}`);
const verdictMark = (m: Metric): string => (m.met === null ? 'n/a' : m.met ? 'met' : 'not met');
/** How the report names each kind of item. */
const KIND_LABEL: Readonly<Record<string, string>> = { package: 'package', reasoning: 'reasoning', error_pattern: 'error pattern', strategy: 'strategy', memory: 'memory' };
/** An item's name: its kind and id (an error pattern's 64-digit key by its first 12 digits). */
const itemName = (x: { kind: string; id: number | string }) => `${KIND_LABEL[x.kind] ?? x.kind} ${x.kind === 'error_pattern' ? String(x.id).slice(0, 12) : x.id}`;
const titleOf = (x: Titled) => x.title ?? '(no longer stored)';
/**
 * A shown item: name · tier · tokens: its line, then where it came from and its standing (after
 * the line, so that no mark ends before a colon: the printed text is redacted, and a word such as
 * `pass` before a colon reads as a secret's key).
 */
const shownLine = (x: SpawnReport['shown'][number]) => {
  const marks = [x.provenance ?? null, standingWords(x)].filter((m) => m !== null && m !== '');
  return `${itemName(x)}${x.tier !== null ? ` · Tier ${x.tier}` : ''}${x.tokens !== null ? ` · ${x.tokens} tokens` : ''}: ${titleOf(x)}${marks.length > 0 ? ` — ${marks.join(' · ')}` : ''}`;
};
/** A shown item's standing, in words (a package or reasoning entry a record of this version keeps with its provenance is unreviewed when it has none). */
const standingWords = (x: SpawnReport['shown'][number]): string | null =>
  x.standing === 'contradicted'
    ? `contradicted by ${x.standing_by ?? 'a later failure'}`
    : x.standing === 'held'
      ? `held by ${x.standing_by ?? 'a passing review'}`
      : x.provenance !== undefined && (x.kind === 'package' || x.kind === 'reasoning')
        ? 'unreviewed'
        : null;
/** An item left out: name · why, in words: its line. */
const leftLine = (x: { kind: string; id: number | string; reason: string } & Titled, sp: SpawnReport) => `${itemName(x)} · ${reasonWords(x.reason, sp)}: ${titleOf(x)}`;

const thousands = (n: number) => n.toLocaleString('en-US');

/** Why an item was left out, in words, with the spawn's own figures where they explain it. */
export function reasonWords(reason: string, sp: Pick<SpawnReport, 'budget' | 'zone'>): string {
  const budget = sp.budget === null ? 'the' : `the ${thousands(sp.budget)}-token`;
  switch (reason) {
    case 'budget':
      return `over ${budget} budget`;
    case 'tier':
      return `over its tier's share of ${budget} budget`;
    case 'limit':
      return 'past the limit on packages a block shows';
    case 'zone':
      return `not shown in the ${sp.zone ?? 'current'} zone`;
    case 'consumed':
      return 'given to this spawn already (a request for more)';
    case 'redaction-emptied':
      return 'nothing left once secrets were removed';
    case 'expired':
      return 'past its time to live (stale)';
    case 'contradicted':
      return 'a claim a later review of its group failed (left out by provenance.contradicted)';
    case 'unreviewed':
      return 'no review has passed it yet (left out by provenance.unreviewed)';
    case 'reasoning-off':
      return 'reasoning was off for this request';
    case 'not-a-candidate':
      return 'superseded, or no longer stored';
    default:
      return reason;
  }
}

/** What BAZINGA's own section would have shown this spawn, and what of it the block did not hold; null for a record before this version. */
function builderSummary(sp: SpawnReport): string | null {
  const b = sp.builder;
  if (!b) return null;
  if (b.left_out.length === 0) return `${b.items} item${b.items === 1 ? '' : 's'}, all in the block`;
  return `${b.items} item${b.items === 1 ? '' : 's'}, ${b.left_out.length} not in the block`;
}

/** The page's key, said once: tiers, zones, outcomes and verdicts. */
const READING_GUIDE: readonly [string, string][] = [
  ['Tier 1', "never cut: the group's newest failure report, its decisions and critical packages, the newest completion and decisions reasoning, the pattern of the error being fixed; for a design spawn also the group's research, for a review or handoff its handoff packages"],
  ['Tier 2', "kept next: strategies, other error patterns, reasoning of recent iterations, the group's other packages, other groups' important ones"],
  ['Tier 3', 'cut first: older and low-priority items, project memory'],
  ['zones', "how full the orchestrator's own window was, of its usable part (the model's window less token_safety_margin): Normal (below 60 %), Soft Warning (60 %: summaries shortened), Conservative (75 %: critical, high and medium packages only), Wrap-up (85 %: no packages), Emergency (95 %: nothing assembled)"],
  ['outcome', 'recorded: the block was delivered and its packages recorded; unrecorded: delivered, the database could not be written; skipped-zone: delivered, the zone records nothing; nothing-delivered: no package to deliver; fallback: an error, the agent got the fallback block; left: the prompt hook left the prompt as the builder wrote it'],
  ['verdict', "how the group's iteration the spawn served ended: revised (sent back to the developer), APPROVED or CHANGES_REQUESTED (its last review), completed, or open"],
];

/** What was left out, counted per reason, in words. */
const leftCounts = (sp: SpawnReport) =>
  Object.entries(sp.left_out_counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${n} ${reasonWords(k, sp)}`)
    .join(', ') || 'none';
/** The spawns on record per agent type, as the group tables show them. */
const agentCounts = (g: GroupReport) =>
  Object.entries(g.spawns_by_agent)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || 'none';
const tokensLine = (sp: SpawnReport) =>
  sp.budget === null ? '—' : `${fmt(sp.used_tokens)} / ${fmt(sp.budget)}${sp.overrun > 0 ? ` (overrun ${sp.overrun})` : ''}`;
const packagesShown = (sp: SpawnReport) => sp.shown.filter((x) => x.kind === 'package').length;

// ─── markdown ────────────────────────────────────────────────────────────────────────────────────

/** A record's time as a person reads it: 2025-12-02 12:00:00Z. */
const when = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

/**
 * The report as markdown. Every text in it that is not the report's own words (ids, times, agent
 * types, summaries, reasons, paths, the metrics' texts, which name projects) passes markdownText:
 * whatever the database holds, the document has the headings, table rows, cells and list items
 * it has with plain text, and no link, image or HTML of the data's.
 */
export function renderReportMarkdown(d: ReportData): string {
  const out: string[] = [];
  const ids = d.sessions.map((s) => s.session_id).join(', ');
  out.push(`# context-assembler report: ${md(ids)}`, '', `Generated ${md(d.generated_at)} by context-assembler ${md(d.product_version)} from ${md(d.database)}.`, '');
  out.push('## Success metrics', '', '| metric | value | target | result | how it is computed |', '|---|---:|---|---|---|');
  for (const m of d.metrics) {
    const value = m.value === null ? `not computable: ${m.missing}` : `${metricValue(m)} (${m.figures})`;
    out.push(`| ${md(m.name)} | ${md(value)} | ${md(m.target)} | ${verdictMark(m)} | ${md(m.how)} |`);
  }
  out.push('', '## How to read it', '');
  for (const [term, meaning] of READING_GUIDE) out.push(`- **${term}**: ${meaning}.`);
  for (const s of d.sessions) out.push('', ...sessionMarkdown(s));
  return out.join('\n') + '\n';
}

/** Where each count of the group tables comes from. */
const GROUP_NOTE =
  "Iterations are BAZINGA's revision count + 1. Spawns on record are this product's records of the group's assemblies; QA attempts and TL reviews are BAZINGA's own counters, which its orchestrator raises (they stay 0 where it never did).";

/** What a session that records no project id reads (bazinga-db ProjectScope). */
const WHOLE_DATABASE = " (none recorded: the session reads every project's patterns and strategies)";

function sessionMarkdown(s: SessionReport): string[] {
  const out = [`## Session ${md(s.session_id)}`, '', `Project ${md(s.project_id)}${s.whole_database ? WHOLE_DATABASE : ''}; started ${md(s.start_time ?? '—')}; status ${md(s.status ?? '—')}; ${s.spawns.length} assemblies on record.`];
  if (!s.record_kept) out.push('', 'The database holds no assembly record: no recording assembly of this version ran on it.');
  out.push('', '### Groups', '', GROUP_NOTE, '', '| group | status | iterations | last review | spawns on record | by agent | QA attempts (BAZINGA) | TL reviews (BAZINGA) |', '|---|---|---:|---|---:|---|---:|---:|');
  for (const g of s.groups) out.push(`| ${md(g.id)}: ${md(g.name)} | ${md(g.status ?? '—')} | ${g.iterations} | ${md(g.last_review_status ?? '—')} | ${g.spawns.length} | ${md(agentCounts(g))} | ${g.qa_attempts} | ${g.tl_review_attempts} |`);
  for (const g of s.groups) {
    const spawns = s.spawns.filter((sp) => sp.group_id === g.id);
    if (spawns.length === 0) continue;
    out.push('', `#### Timeline of ${md(g.id)}`, '', '| # | at | agent | iteration | verdict | outcome | packages shown | tokens used / budget |', '|---:|---|---|---:|---|---|---:|---|');
    for (const sp of spawns) out.push(`| ${sp.id} | ${md(when(sp.at))} | ${md(sp.agent)} | ${sp.iteration} | ${md(sp.verdict)} | ${md(sp.outcome)} | ${packagesShown(sp)} | ${tokensLine(sp)} |`);
  }
  out.push('', '### Spawns');
  if (s.spawns.length === 0) out.push('', 'None on record.');
  for (const sp of s.spawns) {
    out.push('', `#### #${sp.id} ${md(sp.agent)} · ${md(sp.group_id ?? 'session-wide')} · iteration ${sp.iteration} · ${md(sp.outcome)}`, '');
    out.push(`- at ${md(sp.at)}, ${md(sp.source)}, ${sp.duration_ms} ms, version ${md(sp.version)}; purpose ${md(sp.purpose ?? '—')}, zone ${md(sp.zone ?? '—')} (usable window ${fmt(sp.usage_pct, 1)} % used)`);
    if (sp.reason !== null) out.push(`- why: ${md(sp.reason)}`);
    out.push(`- tokens used / budget: ${tokensLine(sp)}${sp.prompt_tokens !== null ? `; the prompt: ${sp.prompt_tokens} tokens of ${sp.model_window}` : ''}`);
    if (sp.sections) out.push(`- by section: packages ${sp.sections.packages}, reasoning ${sp.sections.reasoning}, error patterns ${sp.sections.error_patterns}, strategies ${sp.sections.strategies}, memories ${sp.sections.memories}`);
    out.push(`- shown: ${sp.shown.length === 0 ? 'nothing' : `${sp.shown.length} item${sp.shown.length === 1 ? '' : 's'}`}`);
    for (const x of sp.shown) out.push(`  - ${md(shownLine(x))}`);
    out.push(`- left out: ${md(leftCounts(sp))}`);
    for (const x of sp.left_out) out.push(`  - ${md(leftLine(x, sp))}`);
    const builder = builderSummary(sp);
    if (builder !== null) out.push(`- BAZINGA's own section: ${md(builder)}`);
    for (const x of sp.builder?.left_out ?? []) out.push(`  - ${md(leftLine(x, sp))}`);
    if (sp.query) out.push(`- query: ${md(sp.query.source)}${sp.query.terms.length > 0 ? ` (${sp.query.terms.map(md).join(', ')})` : ''}; scope ${md(sp.query.scope_source)}${sp.query.scope.length > 0 ? ` (${sp.query.scope.map(md).join(', ')})` : ''}`);
  }
  out.push('', `### Packages never delivered (${s.never_delivered.length} of ${s.packages_total})`, '');
  if (s.never_delivered.length === 0) out.push('None.');
  else {
    out.push('| id | group | type | priority | file | summary |', '|---:|---|---|---|---|---|');
    for (const p of s.never_delivered) out.push(`| ${p.id} | ${md(p.group_id ?? 'session-wide')} | ${md(p.package_type)} | ${md(p.priority)} | ${md(p.file_path)} | ${md(p.summary)} |`);
  }
  out.push('', `### Repeated failure signatures (${s.repeated_failures.length})`, '');
  if (s.repeated_failures.length === 0) out.push('None: no error pattern of the project was seen twice.');
  else {
    out.push('| error pattern | error | message | seen | last seen |', '|---|---|---|---:|---|');
    for (const f of s.repeated_failures) out.push(`| ${md(f.fault_hash.slice(0, 12))} | ${md(f.error_type)} | ${md(f.message)} | ${f.occurrences} | ${md(f.last_seen ?? '—')} |`);
  }
  const fallbacks = s.spawns.filter((sp) => s.fallbacks.includes(sp.id));
  out.push('', `### Fallbacks (${fallbacks.length})`, '');
  if (fallbacks.length === 0) out.push('None.');
  for (const sp of fallbacks) out.push(`- #${sp.id} ${md(sp.at)} ${md(sp.agent)} (${md(sp.group_id ?? 'session-wide')}, iteration ${sp.iteration}): ${md(sp.outcome)}: ${md(sp.reason ?? '')}`);
  return out;
}

// ─── HTML ────────────────────────────────────────────────────────────────────────────────────────

const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1200px;padding:0 16px;color:#1d2430;background:#fff}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #d8dee6}h3{font-size:15px;margin-top:22px}
table{border-collapse:collapse;margin:8px 0;width:100%}th,td{border:1px solid #d8dee6;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f3f5f8}td.n{text-align:right;font-variant-numeric:tabular-nums}.met{color:#11662f;font-weight:600}.miss{color:#a3261b;font-weight:600}
.na{color:#6b7380}details{margin:2px 0}summary{cursor:pointer}.small{color:#58606c;font-size:12px}svg{max-width:100%;height:auto;background:#fbfcfd;border:1px solid #e3e7ec}
code{font-size:12px}dt{font-weight:600;margin-top:4px}dd{margin-left:18px}`;

export function renderReportHtml(d: ReportData): string {
  const ids = d.sessions.map((s) => s.session_id).join(', ');
  const body: string[] = [];
  body.push(`<h1>context-assembler report: ${esc(ids)}</h1>`);
  body.push(`<p class="small">Generated ${esc(d.generated_at)} by context-assembler ${esc(d.product_version)} from <code>${esc(d.database)}</code>. This file needs no server or network.</p>`);
  body.push('<h2>Success metrics</h2>', '<table id="metrics"><thead><tr><th>metric</th><th>value</th><th>target</th><th>result</th><th>how it is computed</th></tr></thead><tbody>');
  for (const m of d.metrics) {
    const cls = m.met === null ? 'na' : m.met ? 'met' : 'miss';
    const value = m.value === null ? `not computable: ${m.missing}` : `${metricValue(m)} (${m.figures})`;
    body.push(`<tr data-metric="${m.key}"><td>${esc(m.name)}</td><td class="n" data-value="${m.value ?? ''}">${esc(value)}</td><td>${esc(m.target)}</td><td class="${cls}">${verdictMark(m)}</td><td class="small">${esc(m.how)}</td></tr>`);
  }
  body.push('</tbody></table>');
  body.push('<h2>How to read it</h2>', `<dl id="guide">${READING_GUIDE.map(([term, meaning]) => `<dt>${esc(term)}</dt><dd>${esc(meaning)}.</dd>`).join('')}</dl>`);
  for (const s of d.sessions) body.push(sessionHtml(s));
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>context-assembler report: ${esc(ids)}</title>
<style>${STYLE}</style></head>
<body>
${body.join('\n')}
</body></html>
`;
}

function sessionHtml(s: SessionReport): string {
  const out: string[] = [];
  out.push(`<section data-session="${esc(s.session_id)}"><h2>Session ${esc(s.session_id)}</h2>`);
  out.push(`<p>Project ${esc(s.project_id)}${s.whole_database ? esc(WHOLE_DATABASE) : ''}; started ${esc(s.start_time ?? '—')}; status ${esc(s.status ?? '—')}; <span data-count="spawns">${s.spawns.length}</span> assemblies on record.</p>`);
  if (!s.record_kept) out.push('<p class="miss">The database holds no assembly record: no recording assembly of this version ran on it.</p>');
  out.push('<h3>Tokens each block used, per spawn</h3>', tokensChart(s.spawns));
  out.push('<h3>Groups</h3>', iterationsChart(s.groups));
  out.push(`<p class="small">${esc(GROUP_NOTE)}</p>`);
  out.push('<table data-table="groups"><thead><tr><th>group</th><th>status</th><th>iterations</th><th>last review</th><th>spawns on record</th><th>by agent</th><th>QA attempts (BAZINGA)</th><th>TL reviews (BAZINGA)</th></tr></thead><tbody>');
  for (const g of s.groups) {
    out.push(`<tr data-group="${esc(g.id)}"><td>${esc(g.id)}: ${esc(g.name)}</td><td>${esc(g.status ?? '—')}</td><td class="n" data-value="${g.iterations}">${g.iterations}</td><td>${esc(g.last_review_status ?? '—')}</td><td class="n">${g.spawns.length}</td><td>${esc(agentCounts(g))}</td><td class="n">${g.qa_attempts}</td><td class="n">${g.tl_review_attempts}</td></tr>`);
  }
  out.push('</tbody></table>');
  out.push('<h3>Spawns</h3>');
  if (s.spawns.length === 0) out.push('<p>None on record.</p>');
  else {
    out.push('<table data-table="spawns"><thead><tr><th>#</th><th>at</th><th>group</th><th>agent</th><th>iteration</th><th>verdict</th><th>outcome</th><th>packages</th><th>tokens used / budget</th><th>what it got</th></tr></thead><tbody>');
    for (const sp of s.spawns) out.push(spawnRow(sp));
    out.push('</tbody></table>');
  }
  out.push(`<h3>Packages never delivered (<span data-count="never-delivered">${s.never_delivered.length}</span> of ${s.packages_total})</h3>`);
  if (s.never_delivered.length === 0) out.push('<p>None.</p>');
  else {
    out.push('<table data-table="never-delivered"><thead><tr><th>id</th><th>group</th><th>type</th><th>priority</th><th>file</th><th>summary</th></tr></thead><tbody>');
    for (const p of s.never_delivered) out.push(`<tr><td class="n">${p.id}</td><td>${esc(p.group_id ?? 'session-wide')}</td><td>${esc(p.package_type)}</td><td>${esc(p.priority)}</td><td><code>${esc(p.file_path)}</code></td><td>${esc(p.summary)}</td></tr>`);
    out.push('</tbody></table>');
  }
  out.push(`<h3>Repeated failure signatures (${s.repeated_failures.length})</h3>`);
  if (s.repeated_failures.length === 0) out.push('<p>None: no error pattern of the project was seen twice.</p>');
  else {
    out.push('<table data-table="repeated-failures"><thead><tr><th>error pattern</th><th>error</th><th>message</th><th>seen</th><th>last seen</th></tr></thead><tbody>');
    for (const f of s.repeated_failures) out.push(`<tr><td><code>${esc(f.fault_hash.slice(0, 12))}</code></td><td>${esc(f.error_type)}</td><td>${esc(f.message)}</td><td class="n">${f.occurrences}</td><td>${esc(f.last_seen ?? '—')}</td></tr>`);
    out.push('</tbody></table>');
  }
  const fallbacks = s.spawns.filter((sp) => s.fallbacks.includes(sp.id));
  out.push(`<h3>Fallbacks (<span data-count="fallbacks">${fallbacks.length}</span>)</h3>`);
  if (fallbacks.length === 0) out.push('<p>None.</p>');
  else out.push(`<ul>${fallbacks.map((sp) => `<li data-fallback="${sp.id}">#${sp.id} ${esc(sp.at)} ${esc(sp.agent)} (${esc(sp.group_id ?? 'session-wide')}, iteration ${sp.iteration}): ${esc(sp.outcome)}: ${esc(sp.reason ?? '')}</li>`).join('')}</ul>`);
  out.push('</section>');
  return out.join('\n');
}

/** Ids of one kind, as one phrase: `packages 12, 14` (an error pattern's key by its first 12 digits). */
function idsPhrase(items: readonly { kind: string; id: number | string }[]): string {
  const byKind = new Map<string, string[]>();
  for (const x of items) byKind.set(x.kind, [...(byKind.get(x.kind) ?? []), x.kind === 'error_pattern' ? String(x.id).slice(0, 12) : String(x.id)]);
  return [...byKind].map(([kind, ids]) => `${KIND_LABEL[kind] ?? kind}${ids.length > 1 ? 's' : ''} ${ids.join(', ')}`).join('; ');
}

/**
 * Every item of a list, in the HTML: each one whose row is stored on a line of its own with its
 * line (`line`), the ones whose rows are gone together by id (per reason for what was left out), so
 * that a session of 1,000 busy spawns stays a file a browser opens at once.
 */
function itemList<X extends Titled & { kind: string; id: number | string }>(items: readonly X[], line: (x: X) => string, group: (x: X) => string): string {
  if (items.length === 0) return '';
  const gone = new Map<string, X[]>();
  const lines: string[] = [];
  for (const x of items) {
    if (x.title !== null) lines.push(`<li>${esc(line(x))}</li>`);
    else gone.set(group(x), [...(gone.get(group(x)) ?? []), x]);
  }
  for (const [g, xs] of gone) lines.push(`<li>${esc(`${g}${g ? ', ' : ''}no longer stored: ${idsPhrase(xs)}`)}</li>`);
  return `<ul>${lines.join('')}</ul>`;
}

function spawnRow(sp: SpawnReport): string {
  const builder = builderSummary(sp);
  const parts = [
    `<b>shown</b>: ${sp.shown.length === 0 ? 'nothing' : `${sp.shown.length} item${sp.shown.length === 1 ? '' : 's'}`}${itemList(sp.shown, shownLine, () => '')}`,
    `<b>left out</b>: ${esc(leftCounts(sp))}${itemList(sp.left_out, (x) => leftLine(x, sp), (x) => reasonWords(x.reason, sp))}`,
    builder !== null ? `<b>BAZINGA's own section</b>: ${esc(builder)}${itemList(sp.builder?.left_out ?? [], (x) => leftLine(x, sp), (x) => reasonWords(x.reason, sp))}` : '',
    sp.sections ? `<b>by section</b>: packages ${sp.sections.packages}, reasoning ${sp.sections.reasoning}, error patterns ${sp.sections.error_patterns}, strategies ${sp.sections.strategies}, memories ${sp.sections.memories}` : '',
    sp.query ? `<b>query</b>: ${esc(sp.query.source)}${sp.query.terms.length ? ` (${esc(sp.query.terms.join(', '))})` : ''}` : '',
    `${esc(sp.source)}, ${sp.duration_ms} ms, purpose ${esc(sp.purpose ?? '—')}, zone ${esc(sp.zone ?? '—')}${sp.prompt_tokens !== null ? `, prompt ${sp.prompt_tokens} of ${sp.model_window} tokens` : ''}`,
    sp.reason !== null ? `<b>why</b>: ${esc(sp.reason)}` : '',
  ].filter((p) => p !== '');
  const cls = sp.outcome === 'fallback' || sp.outcome === 'left' ? ' class="miss"' : '';
  const leftTotal = Object.values(sp.left_out_counts).reduce((a, n) => a + n, 0);
  return `<tr data-spawn="${sp.id}"><td class="n">${sp.id}</td><td>${esc(when(sp.at))}</td><td>${esc(sp.group_id ?? 'session-wide')}</td><td>${esc(sp.agent)}</td><td class="n">${sp.iteration}</td><td>${esc(sp.verdict)}</td><td${cls}>${esc(sp.outcome)}</td><td class="n">${packagesShown(sp)}</td><td class="n" data-used="${sp.used_tokens ?? ''}" data-budget="${sp.budget ?? ''}">${esc(tokensLine(sp))}</td><td><details><summary>${sp.shown.length} shown, ${leftTotal} left out</summary>${parts.join('<br>')}</details></td></tr>`;
}

/**
 * Tokens each spawn's block used, as bars on one scale of tokens, so that a block's size reads
 * whatever its budget: the scale ends a little above the largest block, or at the largest budget
 * when that is near (at most twice the largest block). Each bar's own budget is a dash over it where
 * it is on the scale; budgets beyond it are stated in the caption. A spawn over its budget (Tier 1's
 * overrun) is red.
 */
function tokensChart(spawns: readonly SpawnReport[]): string {
  const withBudget = spawns.filter((sp) => sp.budget !== null && sp.used_tokens !== null);
  if (withBudget.length === 0) return '<p class="small">No spawn on record with a budget.</p>';
  const W = 960;
  const H = 240;
  const pad = 56;
  const used = (sp: SpawnReport) => sp.used_tokens as number;
  const budget = (sp: SpawnReport) => sp.budget as number;
  const largest = Math.max(1, ...withBudget.map(used));
  const largestBudget = Math.max(...withBudget.map(budget));
  const top = largestBudget <= largest * 2 ? Math.max(largest, largestBudget) * 1.05 : largest * 1.15;
  const step = (W - pad - 10) / withBudget.length;
  const base = H - 36;
  const y = (tokens: number) => base - ((base - 16) * Math.min(tokens, top)) / top;
  const bars = withBudget
    .map((sp, i) => {
      const x = pad + i * step;
      const w = Math.max(1, step * 0.7);
      const over = used(sp) > budget(sp);
      const bar = `<rect x="${x.toFixed(1)}" y="${y(used(sp)).toFixed(1)}" width="${w.toFixed(1)}" height="${Math.max(1, base - y(used(sp))).toFixed(1)}" fill="${over ? '#c0392b' : '#3b6ea8'}"><title>#${sp.id} ${esc(sp.agent)}: ${used(sp)} of ${budget(sp)} tokens</title></rect>`;
      const tick = budget(sp) <= top ? `<line x1="${x.toFixed(1)}" x2="${(x + w).toFixed(1)}" y1="${y(budget(sp)).toFixed(1)}" y2="${y(budget(sp)).toFixed(1)}" stroke="#1d2430" stroke-width="2"/>` : '';
      const label =
        step >= 28
          ? `<text x="${(x + w / 2).toFixed(1)}" y="${(y(used(sp)) - 3).toFixed(1)}" font-size="10" text-anchor="middle">${used(sp)}</text><text x="${(x + w / 2).toFixed(1)}" y="${(base + 12).toFixed(1)}" font-size="10" text-anchor="middle">#${sp.id}</text>`
          : '';
      return bar + tick + label;
    })
    .join('');
  const offScale = withBudget.filter((sp) => budget(sp) > top).map(budget);
  const note =
    offScale.length === 0
      ? 'each dash is that spawn\'s budget'
      : `budgets of ${thousands(Math.min(...offScale))}${Math.max(...offScale) > Math.min(...offScale) ? `–${thousands(Math.max(...offScale))}` : ''} tokens lie above the scale${offScale.length < withBudget.length ? ' (a dash marks the budgets on it)' : ''}`;
  const caption = `tokens each block used, spawns in order (#: the spawn's number in the table below); ${note}; red: over its budget`;
  return `<svg role="img" aria-label="${esc(caption)}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" data-chart="tokens" data-top="${Math.round(top)}"><text x="4" y="${(y(top) + 4).toFixed(1)}" font-size="11">${thousands(Math.round(top))}</text><text x="4" y="${(base + 4).toFixed(1)}" font-size="11">0</text><line x1="${pad}" x2="${W - 10}" y1="${base}" y2="${base}" stroke="#8893a0"/>${bars}<text x="${pad}" y="${H - 6}" font-size="11">${esc(caption)}</text></svg>`;
}

/** Iterations per group as horizontal bars, with the target (3) as a dashed line. */
function iterationsChart(groups: readonly GroupReport[]): string {
  if (groups.length === 0) return '<p class="small">No task group.</p>';
  const W = 640;
  const row = 22;
  const H = 30 + groups.length * row;
  const left = 150;
  const max = Math.max(4, ...groups.map((g) => g.iterations));
  const x = (v: number) => left + ((W - left - 20) * v) / max;
  const bars = groups
    .map((g, i) => `<text x="4" y="${26 + i * row}" font-size="12">${esc(g.id.slice(0, 20))}</text><rect x="${left}" y="${14 + i * row}" width="${(x(g.iterations) - left).toFixed(1)}" height="${row - 8}" fill="${g.iterations >= 3 ? '#c0392b' : '#3b6ea8'}"><title>${esc(g.id)}: ${g.iterations} iterations</title></rect><text x="${(x(g.iterations) + 4).toFixed(1)}" y="${26 + i * row}" font-size="12">${g.iterations}</text>`)
    .join('');
  return `<svg role="img" aria-label="iterations per group" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" data-chart="iterations">${bars}<line x1="${x(3).toFixed(1)}" x2="${x(3).toFixed(1)}" y1="8" y2="${H - 4}" stroke="#1d2430" stroke-dasharray="4 3"/><text x="${(x(3) + 3).toFixed(1)}" y="10" font-size="10">target 3</text></svg>`;
}
