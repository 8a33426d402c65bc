/**
 * The parity figures as markdown (a table a spawn, the totals, every builder item the block does
 * not show, and what else was seen) and as one JSON document. Pure.
 */
import type { FloorItem } from './builderSection.ts';
import { countCl100k } from '../../skills/bazinga-db/scripts/lib/tokens.ts';
import { blockKinds, blockStanding, totalsOf, type SpawnMeasure, type Totals } from './measure.ts';

const size = (s: { chars: number; tokens: number } | null) => (s === null ? '—' : `${s.chars} ≈ ${s.tokens}`);
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function kinds(items: readonly { item: FloorItem }[]): string {
  const n = (k: FloorItem['kind']) => items.filter((i) => i.item.kind === k).length;
  return `${items.length} (${n('package')}/${n('reasoning')}/${n('error_pattern')})`;
}

const pct = (n: number, of: number) => (of === 0 ? '—' : `${Math.round((100 * n) / of)} %`);

export function totalsLine(t: Totals): string {
  const k = t.byKind;
  return [
    `**${t.items} builder items over ${t.spawns} spawns: ${t.present} present (${pct(t.present, t.items)}), ${t.stated} absent with a stated reason, ${t.silent} absent silently.**`,
    `Packages ${k.package.items} (${k.package.present} present, ${k.package.stated} stated, ${k.package.silent} silent); reasoning entries ${k.reasoning.items} (${k.reasoning.present}/${k.reasoning.stated}/${k.reasoning.silent}); error patterns ${k.error_pattern.items} (${k.error_pattern.present}/${k.error_pattern.stated}/${k.error_pattern.silent}).`,
    `Outside the markers: ${t.identical} of ${t.spawns} prompts byte-identical to the builder's.${t.problems > 0 ? ` Instrument problems: ${t.problems} (see the notes).` : ''}`,
  ].join(' ');
}

/** The markdown report (a README can hold it as it is). */
export function renderMarkdown(measures: readonly SpawnMeasure[], runNotes: readonly string[] = []): string {
  const out: string[] = [];
  out.push(
    '| Spawn | Scenario | Agent · group: what | Hook | Builder items (pkg/rsn/err) | Present | Stated | Silent | Builder section, chars ≈ tokens | Block, chars ≈ tokens | Outside the markers |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const m of measures) {
    const n = (s: string) => m.items.filter((i) => i.verdict.status === s).length;
    out.push(
      `| ${m.id} | ${m.scenario} | ${cell(`${m.agent} · ${m.group}: ${m.what}`)} | ${m.outcome === 'kept' ? "builder's prompt kept" : m.outcome} | ${kinds(m.items)} | ${n('present')} | ${n('stated')} | ${n('silent')} | ${size(m.section)} | ${size(m.block)} | ${m.identical ? 'identical' : '**different**'} |`,
    );
  }
  out.push('', totalsLine(totalsOf(measures)), '', 'Tokens are the builder\'s own estimate (estimate_tokens: code points ÷ 3.85, plus 2 %); the section is the builder\'s `## Context from Prior Work` through its last line, the block the text between the markers.');
  out.push('', aboveTheFloor(measures));
  out.push('', standingTable(measures));
  const absent = measures.flatMap((m) => m.items.filter((i) => i.verdict.status !== 'present').map((i) => ({ m, i })));
  if (absent.length > 0) {
    out.push('', '| Spawn | Builder item not in the block | How |', '|---|---|---|');
    for (const { m, i } of absent) {
      const v = i.verdict;
      const how =
        v.status === 'stated'
          ? `stated: \`${cell(v.line.trim()).slice(0, 160)}\``
          : v.status === 'silent' && v.named !== undefined
            ? `**silent** (named without a reason: \`${cell(v.named.trim()).slice(0, 120)}\`)`
            : '**silent**';
      out.push(`| ${m.id} | ${cell(i.label)} | ${how} |`);
    }
  }
  const notes = measures.flatMap((m) => [...m.problems.map((p) => `${m.id}: **${p}**`), ...(m.difference ? [`${m.id}: first difference outside the markers at ${m.difference}`] : []), ...m.notes.map((n) => `${m.id}: ${n}`)]);
  if (notes.length + runNotes.length > 0) out.push('', ...[...runNotes, ...notes].map((n) => `- ${cell(n)}`));
  return out.join('\n') + '\n';
}

/** The JSON document (`--json`): every spawn with its items and verdicts, and the totals. */
export function renderJson(measures: readonly SpawnMeasure[], meta: Record<string, unknown>, runNotes: readonly string[] = []): string {
  return (
    JSON.stringify(
      {
        ...meta,
        totals: totalsOf(measures),
        notes: runNotes,
        spawns: measures.map((m) => ({
          ...m,
          items: m.items.map((i) => ({ label: i.label, kind: i.item.kind, ...i.verdict, item: { ...i.item, line: undefined } })),
        })),
      },
      null,
      2,
    ) + '\n'
  );
}

/**
 * Above the floor: per spawn whose section the block replaced, what the block shows (a count a
 * kind) beyond the builder's own items, and its size beside the builder's section.
 */
export function aboveTheFloor(measures: readonly SpawnMeasure[]): string {
  const out = [
    '| Spawn | Agent: what | Block (pkg/rsn/err/strat/mem) | Beyond the builder\'s (pkg/rsn/err/strat/mem) | Block ÷ section (tokens) |',
    '|---|---|---|---|---|',
  ];
  for (const m of measures) {
    if (m.blockText === null || m.block === null || m.section === null) continue;
    const k = blockKinds(m.blockText);
    const builder = (kind: string) => m.items.filter((i) => i.item.kind === kind && i.verdict.status === 'present').length;
    const beyond = [k.packages - builder('package'), k.reasoning - builder('reasoning'), k.error_patterns - builder('error_pattern'), k.strategies, k.memories];
    out.push(`| ${m.id} | ${cell(`${m.agent}: ${m.what}`)} | ${k.packages}/${k.reasoning}/${k.error_patterns}/${k.strategies}/${k.memories} | ${beyond.map((n) => `+${Math.max(0, n)}`).join('/')} | ${(m.block.tokens / Math.max(1, m.section.tokens)).toFixed(2)} |`);
  }
  return out.join('\n');
}

/**
 * Per spawn, the packages and reasoning entries its block shows by standing (held, contradicted,
 * unreviewed) and what the provenance and standing marks cost (cl100k tokens of the block with and
 * without them); the totals after.
 */
export function standingTable(measures: readonly SpawnMeasure[]): string {
  const out = ['| Spawn | Agent: what | Held / contradicted / unreviewed | Marks, tokens (of the block) |', '|---|---|---|---|'];
  const all = { held: 0, contradicted: 0, unreviewed: 0, marks: 0, tokens: 0, blocks: 0 };
  for (const m of measures) {
    if (m.blockText === null) continue;
    const s = blockStanding(m.blockText, countCl100k);
    all.held += s.held;
    all.contradicted += s.contradicted;
    all.unreviewed += s.unreviewed;
    all.marks += s.markTokens;
    all.tokens += s.tokens;
    all.blocks++;
    out.push(`| ${m.id} | ${cell(`${m.agent}: ${m.what}`)} | ${s.held} / ${s.contradicted} / ${s.unreviewed} | ${s.markTokens} (${s.tokens}) |`);
  }
  const items = all.held + all.contradicted + all.unreviewed;
  out.push(
    '',
    `Standing of the ${items} packages and reasoning entries the ${all.blocks} blocks show: held ${pct(all.held, items)}, contradicted ${pct(all.contradicted, items)}, unreviewed ${pct(all.unreviewed, items)}. ` +
      `Provenance and standing marks: ${all.blocks === 0 ? 0 : Math.round(all.marks / all.blocks)} tokens a block on average, ${pct(all.marks, all.tokens)} of the blocks' tokens.`,
  );
  return out.join('\n');
}
