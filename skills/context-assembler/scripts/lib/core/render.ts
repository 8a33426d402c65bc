/**
 * Markdown rendering of the context block. The headings and markers are the wire format the
 * orchestrator checks. Pure. The package and reasoning lines are rendered here once and the same
 * strings are what packing counts, so the counted text is exactly the emitted text.
 */
import type { Zone } from '../config.ts';
import type { AssemblyDoc, ErrorPatternItem, ReasoningItem, RankedPackage, StrategyItem } from '../contract.ts';
import { reasoningLine } from '../../../../bazinga-db/scripts/lib/index.ts';
import { ZONE_RULES } from './zone.ts';

export function renderPackageEntry(p: Pick<RankedPackage, 'id' | 'priority' | 'file_path' | 'summary'>): string {
  return `**[${p.priority.toUpperCase()}]** ${p.file_path} (id ${p.id})\n> ${p.summary}`;
}

/** The available count as shown: "1000+" when the count stopped at its cap. */
export const availableText = (available: number, capped = false) => `${available}${capped ? '+' : ''}`;

export function renderPackageHeader(zone: Zone, count: number, available: number | string, priorityUsed: string | null): string {
  if (ZONE_RULES[zone].ladder !== null) {
    return `### Priority Packages (${count}/${available})${priorityUsed ? ` - ${priorityUsed} level` : ''}`;
  }
  return `### Relevant Packages (${count}/${available})`;
}

/** The package section exactly as emitted (header, blank line, entries separated by blank lines). */
export function renderPackageSection(header: string, entries: readonly string[]): string {
  return entries.length === 0 ? header : `${header}\n\n${entries.join('\n\n')}`;
}

export function renderReasoningEntry(e: Pick<ReasoningItem, 'agent_type' | 'phase' | 'content'>): string {
  return reasoningLine(e.agent_type, e.phase, e.content);
}

function renderErrorPattern(p: ErrorPatternItem): string {
  return [
    `⚠️ **Known Issue**: "${p.error_type}: ${p.message_pattern}"`,
    `> **Solution**: ${p.solution}`,
    `> **Confidence**: ${p.confidence} (seen ${p.occurrences} times)`,
  ].join('\n');
}

function renderStrategy(s: StrategyItem): string {
  return `- **${s.topic}** (helpful ${s.helpfulness}×): ${s.insight}`;
}

/** One decimal, rounded down: 94.99 % must not read "95.0" in a zone that starts at 95. */
const pct = (usage: number) => (Math.floor(usage * 10) / 10).toFixed(1);

const NO_PACKAGES_TEXT =
  'No context packages found for this session/group. The agent will proceed with task and specialization context only.';

/** The block printed when assembly failed: the orchestrator proceeds without context. */
export function renderFallback(agent: string): string {
  return [
    `## Context for ${agent}`,
    '',
    ':warning: Context assembly encountered an error. Proceeding with minimal context.',
    '',
    '**Fallback Mode**: Task and specialization context only. Context packages unavailable.',
    '',
  ].join('\n');
}

/** The one-line block printed when the assembler is disabled in config. */
export function renderDisabled(agent: string): string {
  return `## Context for ${agent} — context assembly is disabled (context_engineering.enable_context_assembler is false)\n`;
}

/** Renders a finished (or partly finished) assembly document as the markdown block. */
export function renderMarkdown(doc: AssemblyDoc): string {
  const agent = doc.request.agent;
  const out: string[] = [`## Context for ${agent}`];
  const rules = ZONE_RULES[doc.zone];
  if (rules.banner) out.push('', rules.banner(pct(doc.usage_pct), doc.summary_cap));
  if (rules.body) {
    out.push('', ...rules.body);
    return out.join('\n') + '\n';
  }
  const packages = doc.packages ?? doc.candidates ?? [];
  const available = doc.total_available ?? packages.length;
  const header = renderPackageHeader(doc.zone, packages.length, availableText(available, doc.total_capped), doc.priority_used ?? null);
  out.push('', renderPackageSection(header, packages.map(renderPackageEntry)));
  if (packages.length === 0) {
    const why =
      available === 0
        ? NO_PACKAGES_TEXT
        : doc.consumption === 'recorded' && (doc.consumed ?? []).length === 0 // every chosen package withdrawn
          ? 'The packages chosen were delivered to this agent by a concurrent run; re-invoke to get the next ones.'
          : rules.ladder !== null && (doc.excluded ?? []).every((e) => e.reason !== 'budget')
            ? 'Only low-priority packages are available; they are left out in this zone.'
            : 'No package fit the context budget; fetch one by id if needed.';
    out.push('', why);
  }
  const skipped = (doc.excluded ?? []).filter((e) => e.kind === 'package' && e.reason === 'budget').map((e) => `(id ${e.id})`);
  if (skipped.length > 0) out.push('', `_Left out for budget: ${skipped.join(', ')}_`);
  const reasoning = doc.reasoning;
  if (reasoning && reasoning.entries.length > 0) {
    out.push('', `### Prior Agent Reasoning (${reasoning.entries.length} entries)`, '');
    out.push(reasoning.entries.map(renderReasoningEntry).join('\n'));
  }
  const patterns = doc.error_patterns ?? [];
  if (patterns.length > 0) {
    out.push('', `### Error Patterns (${patterns.length} matches)`, '');
    out.push(patterns.map(renderErrorPattern).join('\n\n'));
  }
  const strategies = doc.strategies ?? [];
  if (strategies.length > 0) {
    out.push('', `### Strategies That Worked (${strategies.length})`, '');
    out.push(strategies.map(renderStrategy).join('\n'));
  }
  const overflow = doc.overflow_count ?? 0;
  if (overflow > 0 && rules.showsOverflow) {
    out.push('', `📦 +${availableText(overflow, doc.total_capped)} more packages available (re-invoke with higher limit to expand)`);
  }
  return out.join('\n') + '\n';
}
