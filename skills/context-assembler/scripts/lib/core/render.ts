/**
 * Markdown rendering of the context block. The headings and markers are the wire format the
 * orchestrator checks. Pure. The package and reasoning lines are rendered here once and the same
 * strings are what packing counts, so the counted text is exactly the emitted text.
 */
import type { Zone } from '../config.ts';
import type { AssemblyDoc, AssemblyRequest, ErrorPatternItem, ExclusionReason, Navigation, ReasoningItem, RankedPackage, StrategyItem, TruncationReport } from '../contract.ts';
import { ZONE_RULES } from './zone.ts';
import { floorLeftOut, type FloorReason } from './floor.ts';
import { ITEM_KINDS, purposeRules, type ItemKind } from './tiers.ts';
import { KINDS, kindRow, renderErrorPattern, renderPackageEntry, renderReasoningEntry, renderStrategy } from './kinds.ts';
import { OMISSION_MARKER } from '../../../../bazinga-db/scripts/lib/pure.ts';

export {
  errorPatternsHeader,
  markedPhase,
  memoriesHeader,
  reasoningHeader,
  renderErrorPattern,
  renderPackageEntry,
  renderReasoningEntry,
  renderStrategy,
  strategiesHeader,
} from './kinds.ts';

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

/**
 * The `+N more` line: how many more packages there are and the command that gives this spawn the
 * next ones (its request again with --more: what it was given is left out); the count alone when
 * the command is null (navigation `minimal`, a budget too tight for it).
 */
export const overflowLine = (overflow: number | string, capped: boolean, command: string | null) =>
  `📦 +${typeof overflow === 'number' ? availableText(overflow, capped) : overflow} more packages available${command === null ? '' : `: \`${command}\``}`;

/** Whether the block prints a `+N more` line naming its command: packages left over, a zone that shows the line, a layout that keeps the command. */
export const moreCommandShown = (zone: Zone, overflow: number, navigation: Navigation | undefined): boolean => overflow > 0 && ZONE_RULES[zone].showsOverflow && navigation !== 'minimal';

/** The `+N more` line's command for a navigation layout: none in `minimal`. */
export const commandFor = (navigation: Navigation | undefined, command: () => string): string | null => (navigation === 'minimal' ? null : command());

/** A word of a command line, quoted for a POSIX shell when it holds anything but safe characters. */
export const shellWord = (w: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);

/**
 * The command that asks for more for this spawn: `launcher` (how an agent runs this skill's
 * launcher, for example `node .claude/skills/context-assembler/bin/context-assembler.cjs`) with
 * assemble, the request's session, group, agent, iteration and model, and --more with the packages
 * this spawn was given (`given`, in the order given: what it named before, then its block's).
 */
export function moreCommand(launcher: string, r: Pick<AssemblyRequest, 'session' | 'group' | 'agent' | 'iteration' | 'model' | 'more'>, given: readonly number[]): string {
  const ids = [...new Set([...(r.more ?? []), ...given])];
  return [launcher, 'assemble', '--session', shellWord(r.session), '--group', shellWord(r.group), '--agent', r.agent, '--iteration', String(r.iteration), '--model', shellWord(r.model), ...(ids.length > 0 ? ['--more', ids.join(',')] : [])].join(' ');
}

/** The sections of a handoff block, in order (purpose handoff). */
export const HANDOFF_HEADINGS = ['### Position', '### Pending work', '### Active decisions', '### Key learnings', '### Verification commands'] as const;

/** What an empty handoff section says: nothing is invented. */
export const NONE_RECORDED = '_None recorded._';

/** The launcher as an installed package names it (`npm install -g`): what a block names when the run knows no path to its own. */
export const DEFAULT_LAUNCHER = 'context-assembler';

/** How the truncation report names each reason. */
const REASON_TEXT: Readonly<Record<ExclusionReason, string>> = {
  budget: 'for budget',
  tier: "over their tier's share",
  limit: 'past the limit',
  zone: 'for the zone',
  consumed: 'already delivered',
  'redaction-emptied': 'emptied by redaction',
  expired: 'past their TTL',
  contradicted: 'claims a later review failed',
  unreviewed: 'not reviewed yet',
};

/** The line stating by how much the block passes its budget, and why: Tier 1's one item, or the block's own lines (headings, the `+N more` line, what names the builder's items not shown). */
export function overrunLine(r: Pick<TruncationReport, 'overrun' | 'budget' | 'used' | 'tiers'>): string {
  const tier1 = (r.tiers.find((t) => t.tier === 1)?.used ?? 0) > 0;
  return `- Over budget by ${r.overrun} tokens (${r.used} of ${r.budget}): ${tier1 ? 'Tier 1 is never cut' : "the block's own lines alone pass the budget"}`;
}

/**
 * The `### Left out` section: counts per reason, the overrun when Tier 1 alone passed the budget,
 * and the most relevant ids: in a compact navigation without the packages when the block's `+N
 * more` command lists them next (`commandShown`), in a minimal one none (the JSON has them).
 */
export function renderLeftOut(r: Pick<TruncationReport, 'left_out' | 'overrun' | 'budget' | 'used' | 'most_relevant' | 'tiers' | 'navigation'>, commandShown = false, launcher = DEFAULT_LAUNCHER): string {
  const lines = ['### Left out', ''];
  if (r.overrun > 0) lines.push(overrunLine(r));
  const counts = (Object.keys(REASON_TEXT) as ExclusionReason[])
    .filter((reason) => (r.left_out[reason] ?? 0) > 0)
    .map((reason) => `${r.left_out[reason]} ${REASON_TEXT[reason]}`);
  if (counts.length > 0) lines.push(`- ${counts.join(', ')}`);
  const named = r.navigation === 'minimal' ? [] : r.navigation === 'compact' && commandShown ? r.most_relevant.filter((i) => i.kind !== 'package') : r.most_relevant;
  if (named.length > 0) {
    // An error pattern's id is a 64-digit hash: its first 12 digits name it here (the JSON has it whole).
    const name = (i: TruncationReport['most_relevant'][number]) => (KINDS[i.kind] ? `${KINDS[i.kind].label} ${KINDS[i.kind].shortId(i.id)}` : `${i.kind} ${i.id}`);
    // The command that prints one of them whole, as an agent runs it (the launcher the `+N more` line names too).
    const firstPackage = named.find((i) => i.kind === 'package');
    const hint = firstPackage ? ` (\`${launcher} fetch ${firstPackage.id}\` prints package ${firstPackage.id})` : '';
    lines.push(`- Most relevant left out: ${named.map(name).join(', ')}${hint}`);
  }
  return lines.join('\n');
}

/**
 * The `### Left out` section as the block prints it: the report when it is shown, with the line
 * naming the builder's items not shown (renderFloorLeftOut); without the report, that line alone
 * (after the overrun, when there is one); null when there is neither. The fit sizes this same text.
 */
export function renderLeftOutSection(report: TruncationReport | undefined, floorText: string | null, commandShown = false, launcher = DEFAULT_LAUNCHER): string | null {
  if (report?.shown) return renderLeftOut(report, commandShown, launcher) + (floorText === null ? '' : `\n${floorText}`);
  if (floorText === null) return null;
  return ['### Left out', '', ...(report !== undefined && report.overrun > 0 ? [overrunLine(report)] : []), floorText].join('\n');
}

/** Why a floor item is left out, as the block says it (in a compact navigation without the budget's figures). */
function floorReasonText(reason: FloorReason, doc: AssemblyDoc): string {
  switch (reason) {
    case 'budget':
    case 'tier': {
      if (doc.truncation?.navigation !== undefined) return 'for budget';
      const used = doc.truncation?.used;
      const budget = doc.truncation?.budget ?? doc.context_budget;
      return `for budget: ${used === undefined ? '' : `${used} of `}${budget} tokens${used === undefined ? '' : ' used'}`;
    }
    case 'zone':
      return `for the zone: ${doc.zone} at ${pct(doc.usage_pct)} % of the window`;
    case 'limit':
      return 'past the limit';
    case 'consumed':
      return 'given to this spawn already (--more)';
    case 'redaction-emptied':
      return 'emptied by redaction';
    case 'expired':
      return 'past its TTL: stale';
    case 'contradicted':
      return 'a claim a later review failed: provenance.contradicted is left_out';
    case 'unreviewed':
      return 'not reviewed yet: provenance.unreviewed is left_out';
    case 'reasoning-off':
      return 'reasoning is off for this request (--include-reasoning false)';
    case 'not-a-candidate':
      return 'superseded or no longer stored';
  }
}

/**
 * The line naming what BAZINGA's own prompt builder would show that this block does not, with why
 * (core/floor.ts floorLeftOut): the block replaces that section, so nothing of it goes silently.
 * Null when the block holds all of it.
 */
export function renderFloorLeftOut(doc: AssemblyDoc): string | null {
  const missing = floorLeftOut(doc);
  if (missing.length === 0) return null;
  const compact = doc.truncation?.navigation !== undefined;
  const reasons: FloorReason[] = [];
  for (const m of missing) if (!reasons.includes(m.reason)) reasons.push(m.reason);
  const parts = reasons.map((reason) => {
    // An error pattern by the builder's row of it (BAZINGA's own key), as BAZINGA's tools know it.
    const idOf = (m: (typeof missing)[number]) => (m.kind === 'error_pattern' ? (doc.floor?.pattern_rows?.[String(m.id)] ?? m.id) : m.id);
    const named = missing.filter((m) => m.reason === reason);
    // Compact: a kind's label once before a run of its ids (`package 63, 60, 61`).
    const names = named.map((m, i) => `${compact && i > 0 && named[i - 1]?.kind === m.kind ? '' : `${KINDS[m.kind].label} `}${KINDS[m.kind].shortId(idOf(m))}`);
    return `${names.join(', ')} (${floorReasonText(reason, doc)})`;
  });
  return `- Also in BAZINGA's own ${compact ? 'section' : 'context section, not shown here'}: ${parts.join('; ')}`;
}

/**
 * What a verification command starts with: a test, check, lint or build run (never a publish, a
 * deploy or a reset), then a space or the end.
 */
const RUNNERS = String.raw`(?:npm (?:test|t|run|run-script|ci)|pnpm (?:test|run|exec)|yarn (?:test|run|lint|build|typecheck)|npx (?:vitest|jest|tsc|eslint|playwright|mocha|ava|tap|prettier --check|tsx --test)|node --test|pytest|python3? -m (?:pytest|unittest|mypy)|mypy|ruff check|go (?:test|vet|build)|cargo (?:test|build|check|clippy)|make (?:test|check|lint|build)|mvn (?:test|verify)|gradle (?:test|check|build)|\.\/gradlew (?:test|check|build)|bundle exec (?:rspec|rake)|rspec|jest|vitest|tox|dotnet test|swift test|flutter test|bazel test|deno test|bun test)(?=[\s\x60]|$)`;
/** A command quoted in backticks. */
const QUOTED_COMMAND = new RegExp(`\`(${RUNNERS}[^\`\\n]{0,200})\``, 'g');
/** A command on a line of its own inside a fenced code block, after an optional `$ ` prompt. */
const FENCED_COMMAND = new RegExp(`^\\s*(?:\\$\\s+)?(${RUNNERS}.{0,200})$`);

export interface VerificationCommand {
  command: string;
  /** Where it was found: `package 12`, `reasoning 40`. */
  source: string;
}

/**
 * The test and build commands these items quote, first mention first, each once (never made up:
 * only what the records say): in backticks in any text, and on their own line in a fenced code
 * block of a package's artifact.
 */
export function verificationCommands(items: {
  packages: readonly Pick<RankedPackage, 'id' | 'summary'>[];
  /** The indexed text of package artifacts, by package id. */
  artifacts?: ReadonlyMap<number, string>;
  reasoning: readonly Pick<ReasoningItem, 'id' | 'content'>[];
  errorPatterns?: readonly Pick<ErrorPatternItem, 'pattern_hash' | 'solution'>[];
  strategies?: readonly Pick<StrategyItem, 'strategy_id' | 'insight'>[];
}): VerificationCommand[] {
  const out = new Map<string, VerificationCommand>();
  const add = (command: string, source: string) => {
    const c = command.trim();
    // A command a shortened text cut through is no command anyone ran.
    if (c.includes(OMISSION_MARKER.trim())) return;
    if (!out.has(c)) out.set(c, { command: c, source });
  };
  const scan = (text: string, source: string) => {
    for (const m of text.matchAll(QUOTED_COMMAND)) add(m[1] as string, source);
  };
  const fenced = (text: string, source: string) => {
    let inside = false;
    for (const line of text.split('\n')) {
      if (/^\s*```/.test(line)) inside = !inside;
      else if (inside) {
        const m = FENCED_COMMAND.exec(line);
        if (m) add(m[1] as string, source);
      }
    }
  };
  for (const p of items.packages) {
    scan(p.summary, `package ${p.id}`);
    const artifact = items.artifacts?.get(p.id);
    if (artifact !== undefined) {
      scan(artifact, `package ${p.id}`);
      fenced(artifact, `package ${p.id}`);
    }
  }
  for (const e of items.reasoning) scan(e.content, `reasoning ${e.id}`);
  for (const p of items.errorPatterns ?? []) scan(p.solution, `error pattern ${p.pattern_hash}`);
  for (const s of items.strategies ?? []) scan(s.insight, `strategy ${s.strategy_id}`);
  return [...out.values()];
}

export const renderCommand = (c: VerificationCommand) => `- \`${c.command}\` (from ${c.source})`;

/** One decimal, rounded down: 94.99 % must not read "95.0" in a zone that starts at 95. */
const pct = (usage: number) => (Math.floor(usage * 10) / 10).toFixed(1);

const NO_PACKAGES_TEXT =
  'No context packages found for this session/group. The agent will proceed with task and specialization context only.';
const WITHDRAWN_TEXT = 'The packages chosen were delivered to this agent by a concurrent run; re-invoke to get the next ones.';
const LOW_ONLY_TEXT = 'Only low-priority packages are available; they are left out in this zone.';
const NONE_FIT_TEXT = 'No package fit the context budget; fetch one by id if needed.';

/** The lines that stand in for the package entries when none is shown (the block budget reserves the longest). */
export const NO_PACKAGE_LINES: readonly string[] = [NO_PACKAGES_TEXT, WITHDRAWN_TEXT, LOW_ONLY_TEXT, NONE_FIT_TEXT];

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
  const floorText = renderFloorLeftOut(doc);
  if (rules.body) {
    out.push('', ...rules.body);
    if (floorText !== null) out.push('', '### Left out', '', floorText);
    return out.join('\n') + '\n';
  }
  const packages = KINDS.package.shown(doc);
  const available = doc.total_available ?? packages.length;
  if (purposeRules(doc.purpose).handoffLayout) out.push(...renderHandoff(doc, packages));
  else {
    const header = renderPackageHeader(doc.zone, packages.length, availableText(available, doc.total_capped), doc.priority_used ?? null);
    out.push('', renderPackageSection(header, packages.map(renderPackageEntry)));
    if (packages.length === 0) {
      const why =
        available === 0
          ? NO_PACKAGES_TEXT
          : doc.consumption === 'recorded' && (doc.consumed ?? []).length === 0 // every chosen package withdrawn
            ? WITHDRAWN_TEXT
            : rules.ladder !== null && (doc.excluded ?? []).every((e) => e.kind !== 'package' || (e.reason !== 'budget' && e.reason !== 'tier'))
              ? LOW_ONLY_TEXT
              : NONE_FIT_TEXT;
      out.push('', why);
    }
    // Then a section a kind, in the table's order, each under its heading.
    for (const kind of ITEM_KINDS) {
      const row = kindRow(kind);
      const items = row.shown(doc);
      if (row.header === null || items.length === 0) continue;
      out.push('', row.header(items.length), '');
      out.push(items.map(row.entry).join(row.separator));
    }
  }
  const overflow = doc.overflow_count ?? 0;
  const commandShown = moreCommandShown(doc.zone, overflow, doc.truncation?.navigation);
  if (overflow > 0 && rules.showsOverflow) {
    const command = commandFor(doc.truncation?.navigation, () => moreCommand(doc.more_launcher ?? DEFAULT_LAUNCHER, doc.request, packages.map((p) => p.id)));
    out.push('', overflowLine(overflow, doc.total_capped ?? false, command));
  }
  const leftOut = renderLeftOutSection(doc.truncation, floorText, commandShown, doc.more_launcher ?? DEFAULT_LAUNCHER);
  if (leftOut !== null) out.push('', leftOut);
  return out.join('\n') + '\n';
}

type Entry = { kind: ItemKind; text: string };

/** Entries of one section: a run of one kind joined as its own section joins them, runs apart by a blank line. */
function sectionBody(entries: readonly Entry[]): string {
  const out: string[] = [];
  entries.forEach((e, i) => {
    if (i > 0) out.push(e.kind === entries[i - 1]?.kind ? KINDS[e.kind].separator : '\n\n');
    out.push(e.text);
  });
  return out.join('');
}

/**
 * The handoff layout: Position → Pending work → Active decisions → Key learnings → Verification
 * commands, each filled only from what the block carries (an empty one says so).
 * Position: the completion reasoning and the handoff packages no review failed; Pending work: the
 * failures packages, the blockers reasoning, then the completions and handoffs a review failed; Active decisions: the decisions packages and reasoning; Key
 * learnings: everything else (research and investigation packages, the other reasoning, error
 * patterns, strategies); Verification commands: the commands quoted in any of them.
 */
function renderHandoff(doc: AssemblyDoc, packages: readonly RankedPackage[]): string[] {
  const reasoning = doc.reasoning?.entries ?? [];
  const pkg = (types: readonly string[]): Entry[] => packages.filter((p) => types.includes(p.package_type)).map((p) => ({ kind: 'package', text: renderPackageEntry(p) }));
  const why = (phases: readonly string[]): Entry[] => reasoning.filter((e) => phases.includes(e.phase)).map((e) => ({ kind: 'reasoning', text: renderReasoningEntry(e) }));
  const placedPhases = ['completion', 'blockers', 'decisions'];
  // A claim a later review failed is not where things stand: it follows the failures, under Pending work.
  const failed = (x: { standing?: string }) => x.standing === 'contradicted';
  // Position: the newest completion no review failed (the others are history, with the learnings).
  const completions = reasoning.filter((e) => e.phase === 'completion' && !failed(e));
  const newest = completions.reduce<(typeof completions)[number] | undefined>(
    (best, e) => (best === undefined || (e.timestamp ?? '') > (best.timestamp ?? '') || ((e.timestamp ?? '') === (best.timestamp ?? '') && e.id > best.id) ? e : best),
    undefined,
  );
  const claimsFailed: Entry[] = [
    ...reasoning.filter((e) => failed(e) && e.phase === 'completion').map((e): Entry => ({ kind: 'reasoning', text: renderReasoningEntry(e) })),
    ...packages.filter((p) => failed(p) && p.package_type === 'handoff').map((p): Entry => ({ kind: 'package', text: renderPackageEntry(p) })),
  ];
  const sections: Entry[][] = [
    [
      ...(newest ? [{ kind: 'reasoning' as const, text: renderReasoningEntry(newest) }] : []),
      ...packages.filter((p) => p.package_type === 'handoff' && !failed(p)).map((p): Entry => ({ kind: 'package', text: renderPackageEntry(p) })),
    ],
    [...pkg(['failures']), ...why(['blockers']), ...claimsFailed],
    [...why(['decisions']), ...pkg(['decisions'])],
    [
      ...pkg(['research', 'investigation']),
      ...reasoning.filter((e) => !placedPhases.includes(e.phase) || (e.phase === 'completion' && e !== newest && !failed(e))).map((e): Entry => ({ kind: 'reasoning', text: renderReasoningEntry(e) })),
      ...(doc.error_patterns ?? []).map((p): Entry => ({ kind: 'error_pattern', text: renderErrorPattern(p) })),
      ...(doc.strategies ?? []).map((s): Entry => ({ kind: 'strategy', text: renderStrategy(s) })),
      ...KINDS.memory.shown(doc).map((m): Entry => ({ kind: 'memory', text: m.line })),
    ],
  ];
  const commands = doc.verification_commands ?? verificationCommands({ packages, reasoning, errorPatterns: doc.error_patterns ?? [], strategies: doc.strategies ?? [] });
  const out: string[] = [];
  HANDOFF_HEADINGS.forEach((heading, i) => {
    const body = i < sections.length ? sectionBody(sections[i] as Entry[]) : commands.map(renderCommand).join('\n');
    out.push('', heading, '', body === '' ? NONE_RECORDED : body);
  });
  return out;
}
