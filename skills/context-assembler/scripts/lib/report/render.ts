/**
 * The report as markdown and as one self-contained HTML file, from the data gatherReport made (its
 * texts redacted there). The HTML needs nothing: no script at all, no server, no network (its
 * content security policy forbids every fetch; styles are inline), its tables written when it is
 * generated, its two charts drawn as inline SVG: tokens used against the budget per spawn, and
 * iterations per group against the target.
 */
import type { Metric } from './metrics.ts';
import type { GroupReport, ReportData, SessionReport, SpawnReport } from './data.ts';
import { markdownText as md } from './markdownText.ts';

/** Items listed one by one per spawn in the HTML (the rest counted): keeps 1,000 spawns well under 2 MB. */
const HTML_ITEMS_LISTED = 12;

const fmt = (x: number | null, digits = 0): string => (x === null ? '—' : x.toFixed(digits));
const metricValue = (m: Metric): string => (m.value === null ? 'not computable' : `${m.value}${m.unit === '%' ? ' %' : ''}`);
const verdictMark = (m: Metric): string => (m.met === null ? 'n/a' : m.met ? 'met' : 'not met');
const item = (x: { kind: string; id: number | string; tier: number | null; tokens?: number | null }) =>
  `${x.kind} ${x.id}${x.tier !== null ? ` (T${x.tier}${x.tokens !== undefined && x.tokens !== null ? `, ${x.tokens} t` : ''})` : ''}`;
const leftOut = (x: { kind: string; id: number | string; reason: string }) => `${x.kind} ${x.id}: ${x.reason}`;

/** What BAZINGA's own section would have shown this spawn, and what of it the block did not hold (with why); null for a record before this version. */
function builderLine(sp: SpawnReport): string | null {
  const b = sp.builder;
  if (!b) return null;
  if (b.left_out.length === 0) return `${b.items} item${b.items === 1 ? '' : 's'}, all in the block`;
  return `${b.items} item${b.items === 1 ? '' : 's'}, ${b.left_out.length} not in the block (${b.left_out.map(leftOut).join('; ')})`;
}
const counts = (c: Record<string, number>) =>
  Object.entries(c)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${n} ${k}`)
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
  for (const s of d.sessions) out.push('', ...sessionMarkdown(s));
  return out.join('\n') + '\n';
}

/** What a session that records no project id reads (bazinga-db ProjectScope). */
const WHOLE_DATABASE = " (none recorded: the session reads every project's patterns and strategies)";

function sessionMarkdown(s: SessionReport): string[] {
  const out = [`## Session ${md(s.session_id)}`, '', `Project ${md(s.project_id)}${s.whole_database ? WHOLE_DATABASE : ''}; started ${md(s.start_time ?? '—')}; status ${md(s.status ?? '—')}; ${s.spawns.length} assemblies on record.`];
  if (!s.record_kept) out.push('', 'The database holds no assembly record: no recording assembly of this version ran on it.');
  out.push('', '### Groups', '', '| group | status | iterations | last review | QA attempts | TL reviews | spawns |', '|---|---|---:|---|---:|---:|---:|');
  for (const g of s.groups) out.push(`| ${md(g.id)}: ${md(g.name)} | ${md(g.status ?? '—')} | ${g.iterations} | ${md(g.last_review_status ?? '—')} | ${g.qa_attempts} | ${g.tl_review_attempts} | ${g.spawns.length} |`);
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
    out.push(`- at ${md(sp.at)}, ${md(sp.source)}, ${sp.duration_ms} ms, version ${md(sp.version)}; purpose ${md(sp.purpose ?? '—')}, zone ${md(sp.zone ?? '—')} (window ${fmt(sp.usage_pct, 1)} % used)`);
    if (sp.reason !== null) out.push(`- why: ${md(sp.reason)}`);
    out.push(`- tokens used / budget: ${tokensLine(sp)}${sp.prompt_tokens !== null ? `; the prompt: ${sp.prompt_tokens} tokens of ${sp.model_window}` : ''}`);
    if (sp.sections) out.push(`- by section: packages ${sp.sections.packages}, reasoning ${sp.sections.reasoning}, error patterns ${sp.sections.error_patterns}, strategies ${sp.sections.strategies}, memories ${sp.sections.memories}`);
    out.push(`- shown: ${sp.shown.length === 0 ? 'nothing' : md(sp.shown.map(item).join(', '))}`);
    out.push(`- left out: ${md(counts(sp.left_out_counts))}${sp.left_out.length > 0 ? ` (${md(sp.left_out.map(leftOut).join('; '))})` : ''}`);
    const builder = builderLine(sp);
    if (builder !== null) out.push(`- BAZINGA's own section: ${md(builder)}`);
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
    out.push('| pattern | error | message | seen | last seen |', '|---|---|---|---:|---|');
    for (const f of s.repeated_failures) out.push(`| ${md(f.pattern_hash.slice(0, 12))} | ${md(f.error_type)} | ${md(f.message)} | ${f.occurrences} | ${md(f.last_seen ?? '—')} |`);
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
code{font-size:12px}`;

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
  out.push('<h3>Tokens used against the budget, per spawn</h3>', tokensChart(s.spawns));
  out.push('<h3>Groups</h3>', iterationsChart(s.groups));
  out.push('<table data-table="groups"><thead><tr><th>group</th><th>status</th><th>iterations</th><th>last review</th><th>QA attempts</th><th>TL reviews</th><th>spawns</th></tr></thead><tbody>');
  for (const g of s.groups) {
    out.push(`<tr data-group="${esc(g.id)}"><td>${esc(g.id)}: ${esc(g.name)}</td><td>${esc(g.status ?? '—')}</td><td class="n" data-value="${g.iterations}">${g.iterations}</td><td>${esc(g.last_review_status ?? '—')}</td><td class="n">${g.qa_attempts}</td><td class="n">${g.tl_review_attempts}</td><td class="n">${g.spawns.length}</td></tr>`);
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
    out.push('<table data-table="repeated-failures"><thead><tr><th>pattern</th><th>error</th><th>message</th><th>seen</th><th>last seen</th></tr></thead><tbody>');
    for (const f of s.repeated_failures) out.push(`<tr><td><code>${esc(f.pattern_hash.slice(0, 12))}</code></td><td>${esc(f.error_type)}</td><td>${esc(f.message)}</td><td class="n">${f.occurrences}</td><td>${esc(f.last_seen ?? '—')}</td></tr>`);
    out.push('</tbody></table>');
  }
  const fallbacks = s.spawns.filter((sp) => s.fallbacks.includes(sp.id));
  out.push(`<h3>Fallbacks (<span data-count="fallbacks">${fallbacks.length}</span>)</h3>`);
  if (fallbacks.length === 0) out.push('<p>None.</p>');
  else out.push(`<ul>${fallbacks.map((sp) => `<li data-fallback="${sp.id}">#${sp.id} ${esc(sp.at)} ${esc(sp.agent)} (${esc(sp.group_id ?? 'session-wide')}, iteration ${sp.iteration}): ${esc(sp.outcome)}: ${esc(sp.reason ?? '')}</li>`).join('')}</ul>`);
  out.push('</section>');
  return out.join('\n');
}

function spawnRow(sp: SpawnReport): string {
  const shown = sp.shown.slice(0, HTML_ITEMS_LISTED).map(item).join(', ') + (sp.shown.length > HTML_ITEMS_LISTED ? `, and ${sp.shown.length - HTML_ITEMS_LISTED} more` : '');
  const left = sp.left_out.slice(0, HTML_ITEMS_LISTED).map(leftOut).join('; ');
  const parts = [
    `<b>shown</b>: ${esc(shown || 'nothing')}`,
    `<b>left out</b>: ${esc(counts(sp.left_out_counts))}${left ? ` (${esc(left)}${sp.left_out.length > HTML_ITEMS_LISTED ? '; …' : ''})` : ''}`,
    builderLine(sp) !== null ? `<b>BAZINGA's own section</b>: ${esc(builderLine(sp) as string)}` : '',
    sp.sections ? `<b>by section</b>: packages ${sp.sections.packages}, reasoning ${sp.sections.reasoning}, error patterns ${sp.sections.error_patterns}, strategies ${sp.sections.strategies}, memories ${sp.sections.memories}` : '',
    sp.query ? `<b>query</b>: ${esc(sp.query.source)}${sp.query.terms.length ? ` (${esc(sp.query.terms.join(', '))})` : ''}` : '',
    `${esc(sp.source)}, ${sp.duration_ms} ms, purpose ${esc(sp.purpose ?? '—')}, zone ${esc(sp.zone ?? '—')}${sp.prompt_tokens !== null ? `, prompt ${sp.prompt_tokens} of ${sp.model_window} tokens` : ''}`,
    sp.reason !== null ? `<b>why</b>: ${esc(sp.reason)}` : '',
  ].filter((p) => p !== '');
  const cls = sp.outcome === 'fallback' || sp.outcome === 'left' ? ' class="miss"' : '';
  return `<tr data-spawn="${sp.id}"><td class="n">${sp.id}</td><td>${esc(when(sp.at))}</td><td>${esc(sp.group_id ?? 'session-wide')}</td><td>${esc(sp.agent)}</td><td class="n">${sp.iteration}</td><td>${esc(sp.verdict)}</td><td${cls}>${esc(sp.outcome)}</td><td class="n">${packagesShown(sp)}</td><td class="n" data-used="${sp.used_tokens ?? ''}" data-budget="${sp.budget ?? ''}">${esc(tokensLine(sp))}</td><td><details><summary>${sp.shown.length} shown, ${Object.values(sp.left_out_counts).reduce((a, n) => a + n, 0)} left out</summary>${parts.join('<br>')}</details></td></tr>`;
}

/**
 * Tokens used per spawn as a share of its budget (bars; the budget is the 100 % line), so that a
 * block using little of a large budget and one past a small one read on the same scale; a spawn
 * over its budget (Tier 1's overrun) in red. The scale ends at 100 % or the largest share, at most
 * 200 % (a bar past that is cut there and says its figure).
 */
function tokensChart(spawns: readonly SpawnReport[]): string {
  const withBudget = spawns.filter((sp) => sp.budget !== null && sp.used_tokens !== null);
  if (withBudget.length === 0) return '<p class="small">No spawn on record with a budget.</p>';
  const W = 960;
  const H = 220;
  const pad = 44;
  const share = (sp: SpawnReport) => ((sp.used_tokens as number) * 100) / Math.max(1, sp.budget as number);
  const top = Math.min(200, Math.max(100, ...withBudget.map(share)));
  const step = (W - pad - 10) / withBudget.length;
  const y = (pct: number) => H - 24 - ((H - 40) * Math.min(pct, top)) / top;
  const bars = withBudget
    .map((sp, i) => {
      const x = pad + i * step;
      const w = Math.max(1, step * 0.7);
      const pct = share(sp);
      const over = (sp.used_tokens as number) > (sp.budget as number);
      return `<rect x="${x.toFixed(1)}" y="${y(pct).toFixed(1)}" width="${w.toFixed(1)}" height="${Math.max(1, H - 24 - y(pct)).toFixed(1)}" fill="${over ? '#c0392b' : '#3b6ea8'}"><title>#${sp.id} ${esc(sp.agent)}: ${sp.used_tokens} of ${sp.budget} tokens (${pct.toFixed(1)} %)</title></rect>`;
    })
    .join('');
  const topLabel = top > 110 ? `<text x="4" y="14" font-size="11">${top.toFixed(0)} %</text>` : '';
  return `<svg role="img" aria-label="tokens used as a share of the budget, per spawn" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" data-chart="tokens">${topLabel}<text x="4" y="${(y(100) + 4).toFixed(1)}" font-size="11">100 %</text><text x="4" y="${H - 20}" font-size="11">0</text><line x1="${pad}" x2="${W - 10}" y1="${y(100).toFixed(1)}" y2="${y(100).toFixed(1)}" stroke="#1d2430" stroke-dasharray="4 3"/><line x1="${pad}" x2="${W - 10}" y1="${H - 24}" y2="${H - 24}" stroke="#8893a0"/>${bars}<text x="${pad}" y="${H - 8}" font-size="11">spawns in order: tokens used as a share of the budget (dashed: the budget; red: over it)</text></svg>`;
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
