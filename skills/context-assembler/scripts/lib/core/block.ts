/**
 * The whole block within its budget: every section's items (packages, reasoning, error patterns,
 * strategies) tiered and fitted together (fitTiers), the sections' fixed lines reserved first,
 * and the truncation report (`### Left out`) sized into the same budget. Pack runs it over the
 * packages, patterns and strategies; reasoning runs it again with its entries added, so the final
 * document holds one fit of everything it shows. Pure; the token counter is injected.
 */
import type { Zone } from '../config.ts';
import type { Exclusion, ExclusionReason, Navigation, TruncationReport } from '../contract.ts';
import { fitOrder, fitTiers, ITEM_KINDS, purposeRules, type FitResult, type FitItem, type ItemKind, type Split, type Purpose, type Tier, type TierUsage } from './tiers.ts';
import { type Sized, type TokenCounter } from './pack.ts';
import { availableText, commandFor, HANDOFF_HEADINGS, moreCommandShown, NONE_RECORDED, renderLeftOutSection, renderPackageHeader, overflowLine, NO_PACKAGE_LINES, verificationCommands, renderCommand, type VerificationCommand } from './render.ts';
import { kindRow, type ItemOf, type ItemsByKind, type KindRow, type Tiered } from './kinds.ts';
import { codePointCount } from '../../../../bazinga-db/scripts/lib/pure.ts';
import { ZONE_RULES } from './zone.ts';

export interface BlockInput {
  purpose: Purpose;
  split: Split;
  /** The block's budget (context_budget). */
  budget: number;
  /** Tier 1 holds at most this many items (purposes.tier1_max_items); absent, no count bound. */
  tier1MaxItems?: number;
  /** For Tier 1 items, by `${kind}:${id}`: the tier rule that made each essential (tierRuleOf); Tier 1 keeps the lower first. */
  essential?: ReadonlyMap<string, number>;
  zone: Zone;
  totalAvailable: number;
  totalCapped: boolean;
  priorityUsed: string | null;
  /** Every candidate of the block, a list a kind (core/kinds.ts), each tiered and in its step's order. */
  items: ItemsByKind<{ tier: Tier }>;
  /** Exclusions made before this fit (rank's, redaction, an earlier fit's), kept and reported. */
  excludedBefore: readonly Exclusion[];
  /** The floor's items by `${kind}:${id}` (contract.ts FloorItems): admitted on the block's room alone. */
  floor?: ReadonlySet<string>;
  /**
   * The line `### Left out` adds for the floor's items a fit leaves unshown (render.ts
   * renderFloorLeftOut), given what it shows and every exclusion; null when it shows them all.
   * Sized into the budget with the report.
   */
  floorLine?: (shown: ItemsByKind, excluded: readonly Exclusion[], navigation: Navigation | undefined) => string | null;
  /** The command the `+N more` line names (render.ts moreCommand), at its widest: naming every candidate package. */
  moreCommand: string;
  /** How an agent runs this skill's launcher (the `+N more` and `fetch` commands the block names); absent: render.ts DEFAULT_LAUNCHER. */
  launcher?: string;
  /**
   * The same command naming only `shown`, the packages a fit admitted (what the line will name):
   * with it the line is reserved at its size for the block's packages, not at its widest.
   */
  moreCommandOf?: (shown: readonly number[]) => string;
  /** Purpose handoff: the indexed text of the packages' artifacts, by id, for their verification commands. */
  artifacts?: ReadonlyMap<number, string>;
  counter: TokenCounter;
}

export interface BlockOutput {
  /** What the fit admitted, a list a kind, in the order given. */
  items: { [K in ItemKind]: Tiered<ItemOf[K]>[] };
  /** An admitted item's tokens (its entry and separator). */
  tokensOf: (kind: ItemKind, id: number | string) => number;
  /** excludedBefore plus what this fit left out (with reason budget or tier, and the tier). */
  excluded: Exclusion[];
  report: TruncationReport;
  /** Every figure used is a count (items, fixed lines, the report). */
  exact: boolean;
  /** Every admitted item's figure is a count. */
  itemsExact: boolean;
  /** Purpose handoff: the commands the admitted items quote. */
  commands?: VerificationCommand[];
}

/** The text an item adds to its section (entry and separator): what the fit sizes. */
function entryText(kind: ItemKind, item: unknown): string {
  const row = kindRow(kind);
  return row.entry(item) + row.separator;
}

/** An item's key in the block's fit: `${kind}:${id}`. */
export const keyOf = (kind: ItemKind, id: number | string) => `${kind}:${id}`;

/**
 * The block's fixed lines: the section headings, the line saying why no package is shown, the
 * overflow line, and in a handoff the five headings, their "none recorded" lines and the
 * verification commands. At their widest (`shown` undefined: every candidate admitted, the
 * headings with the largest counts), reserved before any item; or for what one fit shows (the
 * `+N more` line naming its packages, the no-package line only when it shows none), the room
 * given back once a fit is known.
 */
function fixedLines(input: LaidInput, shown?: ItemsByKind): string {
  const items = shown ?? input.items;
  const parts: string[] = [];
  const available = availableText(input.totalAvailable, input.totalCapped);
  parts.push(renderPackageHeader(input.zone, items.package.length, available, input.priorityUsed) + '\n\n');
  if (shown === undefined || shown.package.length === 0) parts.push(NO_PACKAGE_LINES.reduce((a, b) => (a.length >= b.length ? a : b)) + '\n\n');
  if (ZONE_RULES[input.zone].showsOverflow) {
    const more = commandFor(input.navigation, () => (shown !== undefined && input.moreCommandOf !== undefined ? input.moreCommandOf(shown.package.map((p) => p.id)) : input.moreCommand));
    parts.push(overflowLine(available, input.totalCapped, more) + '\n\n');
  }
  if (purposeRules(input.purpose).handoffLayout) {
    for (const heading of HANDOFF_HEADINGS) parts.push(`${heading}\n\n${NONE_RECORDED}\n\n`);
    // The candidates' commands whatever is shown: finding them reads every artifact's text, once.
    for (const c of candidateCommands(input)) parts.push(renderCommand(c) + '\n');
    return parts.join('');
  }
  for (const kind of ITEM_KINDS) {
    const header = kindRow(kind).header;
    const count = items[kind].length;
    if (count > 0 && header) parts.push(header(count) + '\n\n');
  }
  return parts.join('');
}

/**
 * The counter with each text's figure kept for this fit: the block is fitted several times over
 * the same texts (with and without room for its report), and every figure costs a hash and a
 * cache read. A text counted is from then on sized by its count, as the counter itself would.
 */
function rememberingCounter(counter: TokenCounter): TokenCounter {
  const counts = new Map<string, number>();
  const bounds = new Map<string, Sized>();
  return {
    ...counter,
    count(text) {
      let n = counts.get(text);
      if (n === undefined) {
        n = counter.count(text);
        counts.set(text, n);
      }
      return n;
    },
    bound(text) {
      const n = counts.get(text);
      if (n !== undefined) return { tokens: n, exact: true };
      let b = bounds.get(text);
      if (b === undefined) {
        b = counter.bound(text);
        bounds.set(text, b);
      }
      return b;
    },
  };
}

/**
 * The item shortened so that its entry fits `maxTokens`, as long as it can be (a binary search on
 * the characters its kind keeps), or undefined when even its shortest form does not fit.
 */
function shortenedToFit<T>(row: KindRow<T>, item: T, maxTokens: number, counter: TokenCounter): { item: T; text: string } | undefined {
  const shorten = row.shorten;
  if (shorten === undefined) return undefined;
  const full = codePointCount(row.entry(item));
  const at = (chars: number) => {
    const cut = shorten(item, chars);
    return { item: cut, text: row.entry(cut) + row.separator };
  };
  let lo = row.minChars ?? 0;
  let hi = full - 1;
  if (hi < lo) return undefined;
  let best = at(lo);
  if (counter.count(best.text) > maxTokens) return undefined;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const next = at(mid);
    if (counter.count(next.text) <= maxTokens) {
      lo = mid;
      best = next;
    } else hi = mid - 1;
  }
  return best;
}

/** Rounds a room given back to the fixed lines may grow in before the widest is taken. */
const ROOM_ROUNDS = 4;

/**
 * The share of the budget the navigation lines (the `+N more` line and `### Left out`) may take:
 * past it, a shorter layout is tried (TruncationReport.navigation), so a tight budget goes to
 * items, not to the lines that say what else there is.
 */
export const NAVIGATION_SHARE = 1 / 8;
const LAYOUTS: readonly (Navigation | undefined)[] = [undefined, 'compact', 'minimal'];

/** The block's input with the navigation layout a fit is made for. */
type LaidInput = BlockInput & { navigation?: Navigation };

/**
 * The block fitted in its whole navigation layout, and while the navigation lines of the last fit
 * pass NAVIGATION_SHARE of the budget, in the next shorter one: a shorter layout's fit is kept when
 * it shows more items (or as many, less past the budget). Nothing left out: one fit.
 */
export function fitBlock(input: BlockInput): BlockOutput {
  let fit = fitLaid(input);
  let best = fit;
  // Without a `+N more` line (Conservative) there is no command for `minimal` to drop.
  const layouts = LAYOUTS.slice(1).filter((l) => l !== 'minimal' || ZONE_RULES[input.zone].showsOverflow);
  for (const navigation of layouts) {
    if (navigationTokens(input, fit) <= input.budget * NAVIGATION_SHARE) break;
    fit = fitLaid({ ...input, navigation });
    // A shorter layout is kept only when the room it frees goes to items (more shown, or less past
    // the budget): else the longer lines say more for the same block.
    if (showsMore(fit, best)) best = fit;
  }
  return best;
}

/** Whether fit `a` shows more items than `b`, or as many with less past the budget. */
function showsMore(a: BlockOutput, b: BlockOutput): boolean {
  const shown = (o: BlockOutput) => ITEM_KINDS.reduce((n, kind) => n + o.items[kind].length, 0);
  return shown(a) > shown(b) || (shown(a) === shown(b) && a.report.overrun < b.report.overrun);
}

/** The tokens of a fitted block's navigation lines as the block prints them: the `+N more` line and `### Left out`. */
function navigationTokens(input: BlockInput, out: BlockOutput): number {
  const navigation = out.report.navigation;
  const overflow = Math.max(0, input.totalAvailable - out.items.package.length);
  const more =
    overflow > 0 && ZONE_RULES[input.zone].showsOverflow
      ? overflowLine(overflow, input.totalCapped, commandFor(navigation, () => (input.moreCommandOf ?? (() => input.moreCommand))(out.items.package.map((p) => p.id))))
      : '';
  const leftOut = renderLeftOutSection(out.report, input.floorLine?.(out.items, out.excluded, navigation) ?? null, moreCommandShown(input.zone, overflow, navigation), input.launcher) ?? '';
  if (more === '' && leftOut === '') return 0;
  // On its bound while that is within the share (the rank table stays unloaded), else counted.
  const text = `${more}\n\n${leftOut}`;
  const bound = input.counter.bound(text);
  return bound.exact || bound.tokens <= input.budget * NAVIGATION_SHARE ? bound.tokens : input.counter.count(text);
}

function fitLaid(input: LaidInput): BlockOutput {
  const counter = rememberingCounter(input.counter);
  // The shortened items the fits made, by key and admitted text.
  const cuts = new Map<string, unknown>();
  const items = ITEM_KINDS.flatMap((kind) => {
    const row = kindRow(kind) as KindRow<unknown>;
    return (input.items[kind] as readonly (unknown & { tier: Tier })[]).map((item): FitItem & { id: number | string } => {
      const id = row.id(item);
      const key = keyOf(kind, id);
      const shorter =
        row.shorten === undefined
          ? undefined
          : (maxTokens: number) => {
              const cut = shortenedToFit(row, item, maxTokens, counter);
              if (cut === undefined) return undefined;
              cuts.set(`${key}\u0000${cut.text}`, cut.item);
              return cut.text;
            };
      return { kind, id, tier: item.tier, key, text: entryText(kind, item), ...(input.floor?.has(key) ? { floor: true } : {}), ...(shorter ? { shorter } : {}) };
    });
  });
  const ordered = fitOrder(items, input.purpose, input.essential);
  // The fixed lines and the report are sized like the items: on a bound while everything fits,
  // counted as soon as something is left out (a decision then depends on their size), so the
  // block holds exactly what counting everything would give it.
  const size = (text: string, decides: boolean): Sized => {
    const bound = counter.bound(text);
    return decides && !bound.exact ? { tokens: counter.count(text), exact: true } : bound;
  };
  const fixedText = fixedLines(input);
  const decides = (r: FitResult) => r.leftOut.size > 0 || r.overrun > 0;
  let widest = size(fixedText, false);
  // The fixed lines' room each fit was made with (the widest, or a room given back for what a fit shows).
  const roomOf = new WeakMap<FitResult, Sized>();
  const fitIn = (room: Sized, reserve: number) => {
    const r = fitTiers(ordered, input.budget - room.tokens - reserve, input.split, counter, input.tier1MaxItems);
    roomOf.set(r, room);
    return r;
  };
  // A fit within `fixed`; when that room was given back and what the fit shows needs more lines
  // than it holds (say no package, so the no-package line), the fit again in the room those lines
  // need (a few rounds), else in the widest room.
  const fit = (fixed: Sized, reserve: number) => {
    let room = fixed;
    for (let round = 0; round < ROOM_ROUNDS; round++) {
      const r = fitIn(room, reserve);
      if (room === widest) return r;
      const need = size(fixedLines(input, shownBy(input, r, cuts)), true);
      if (need.tokens <= room.tokens) return r;
      if (need.tokens >= widest.tokens) break;
      room = need;
    }
    return fitIn(widest, reserve);
  };
  let fixed = widest;
  let result = fit(fixed, 0);
  if (decides(result) && !fixed.exact) {
    widest = size(fixedText, true);
    fixed = widest;
    result = fit(fixed, 0);
  }
  const fixedOf = (r: FitResult) => roomOf.get(r) ?? fixed;
  // When something is left out, the fixed lines' room is given back down to their size for what a
  // fit shows (the `+N more` line names its packages, not every candidate; no line stands in for
  // packages it shows): `fit` grows that room with what it lets in, else keeps the widest. (A
  // smaller room leaves the items more: no Tier 1 overrun the widest did not have.)
  if (decides(result)) {
    const room = size(fixedLines(input, shownBy(input, result, cuts)), true);
    if (room.tokens < fixed.tokens) {
      result = fit(room, 0);
      fixed = fixedOf(result);
    }
  }
  // The report is sized into the budget too: the items are fitted again with room for it. On its
  // bound while that leaves nothing more out; otherwise counted, the room growing to the size of
  // the report written after each fit until that report fits its room (it is short and bounded,
  // so a few rounds settle it), then shrinking back to the report's own size while that still
  // holds (so the report never pushes out an item that fits beside it). A report that cannot fit
  // is left to the JSON; when Tier 1 alone overran the budget it is shown all the same.
  const base = result;
  let report = reportOf(input, ordered, result, fixedOf(result), undefined);
  let reportSize: Sized | undefined;
  // The report as the block prints it: with the line naming the floor's items a fit leaves unshown.
  const floorOf = (r: FitResult) => input.floorLine?.(shownBy(input, r, cuts), [...input.excludedBefore, ...leftOutExclusions(ordered, r)], input.navigation) ?? null;
  const reportText = (r: FitResult, rep: TruncationReport) => `${renderLeftOutSection({ ...rep, shown: true }, floorOf(r), moreCommandShown(input.zone, input.totalAvailable - shownBy(input, r, cuts).package.length, input.navigation), input.launcher)}\n`;
  if (needsReport(report) || floorOf(result) !== null) {
    const reportAt = (r: FitResult, room: number) => {
      const text = reportText(r, reportOf(input, ordered, r, fixedOf(r), { tokens: room, exact: true }));
      const bound = size(text, false);
      return bound.tokens <= room ? bound : size(text, true);
    };
    const accept = (next: FitResult, fits: Sized) => {
      result = next;
      report = reportOf(input, ordered, next, fixedOf(next), fits);
      reportSize = fits;
    };
    // Holds: the report written after this fit fits the room it had, and the block with it stays
    // within the budget (its fixed lines, items and report), unless Tier 1 overran without the
    // report or the block's headings alone pass the budget.
    const holds = (next: FitResult, room: number, fits: Sized) =>
      fits.tokens <= room && (base.overrun > 0 || fixedOf(next).tokens >= input.budget || (next.overrun === 0 && fixedOf(next).tokens + next.used + fits.tokens <= input.budget));
    const text = reportText(result, report);
    const bound = size(text, false);
    const first = fit(fixed, bound.tokens);
    if (!decides(first) || (first.leftOut.size === result.leftOut.size && first.overrun === result.overrun)) {
      // Nothing more left out with the room at its bound: the report as written fits.
      const fits = reportAt(first, bound.tokens);
      if (holds(first, bound.tokens, fits)) accept(first, fits);
    }
    let room = reportSize === undefined ? size(text, true).tokens : bound.tokens;
    for (let round = 0; round < 8 && reportSize === undefined; round++) {
      const next = fit(fixed, room);
      const fits = reportAt(next, room);
      if (holds(next, room, fits)) accept(next, fits);
      else if (next.overrun > 0 && base.overrun === 0) break; // only the report would overrun: left to the JSON
      else room = Math.max(room, fits.tokens);
    }
    // Give back what the room held beyond the report: a tighter room may admit more.
    // Only when the fit left something out (a decision then depends on the report's size), on its count.
    for (let round = 0; round < 3 && reportSize !== undefined && result.leftOut.size > 0; round++) {
      const own: Sized = reportSize.exact ? reportSize : size(reportText(result, report), true);
      if (own.tokens >= room) break;
      room = own.tokens;
      const next = fit(fixed, room);
      const fits = reportAt(next, room);
      if (!holds(next, room, fits) || next.admitted.size <= result.admitted.size) break;
      accept(next, fits);
    }
    if (reportSize === undefined) {
      result = base;
      report = reportOf(input, ordered, result, fixedOf(result), undefined);
      // The report is left to the JSON, but the line naming the builder's items not shown is
      // printed all the same (under `### Left out`): it is given its room.
      if (floorOf(base) !== null) {
        // The section without the report (shown false): the floor's line, after the overrun if one is stated.
        const floorAt = (r: FitResult, stated?: TruncationReport) => size(`${renderLeftOutSection(stated ?? { ...report, overrun: 0, shown: false }, floorOf(r), false, input.launcher) ?? ''}\n`, true);
        let room = floorAt(base).tokens;
        for (let round = 0; round < 4; round++) {
          const next = fit(fixed, room);
          const fits = floorAt(next);
          if (fits.tokens <= room && (next.overrun === 0 || base.overrun > 0) && fixedOf(next).tokens + next.used + fits.tokens <= input.budget) {
            result = next;
            const plain = reportOf(input, ordered, next, fixedOf(next), undefined);
            const used = plain.used + fits.tokens;
            report = { ...plain, used, overrun: Math.max(0, used - input.budget) };
            break;
          }
          room = Math.max(room, fits.tokens);
        }
        if (result === base) {
          // No room for it beside the items: the items give way to it but Tier 1's first (never
          // cut), and what is then still past the budget (the block's own lines, that item) is stated.
          result = fit(fixed, input.budget);
          const plain = reportOf(input, ordered, result, fixedOf(result), undefined);
          let used = plain.used + floorAt(result).tokens;
          for (let round = 0; round < 2; round++) used = plain.used + floorAt(result, { ...plain, used, overrun: Math.max(0, used - input.budget) }).tokens;
          report = { ...plain, used, overrun: Math.max(0, used - input.budget) };
        }
      }
    }
  }
  const admitted = result.admitted;
  // An item Tier 1 had no room for was admitted (or not) as Tier 2: it says so.
  const kept = shownBy(input, result, cuts);
  return {
    items: kept,
    tokensOf: (kind, id) => (admitted.get(keyOf(kind, id)) as Sized).tokens,
    ...(purposeRules(input.purpose).handoffLayout ? { commands: commandsOf(kept, input.artifacts) } : {}),
    excluded: [...input.excludedBefore, ...leftOutExclusions(ordered, result)],
    report,
    exact: fixedOf(result).exact && result.exact && (reportSize?.exact ?? true),
    itemsExact: result.exact,
  };
}

/** What a fit admitted, a list a kind, in the order given (the texts as admitted: a shortened item as shortened). */
function shownBy(input: BlockInput, result: FitResult, cuts: ReadonlyMap<string, unknown>): { [K in ItemKind]: Tiered<ItemOf[K]>[] } {
  const keep = <K extends ItemKind>(kind: K): Tiered<ItemOf[K]>[] => {
    const row = kindRow(kind);
    return (input.items[kind] as readonly Tiered<ItemOf[K]>[])
      .filter((item) => result.admitted.has(keyOf(kind, row.id(item))))
      .map((item) => {
        const key = keyOf(kind, row.id(item));
        const text = result.shortened.get(key);
        const shown = text === undefined ? item : (cuts.get(`${key}\u0000${text}`) as Tiered<ItemOf[K]>);
        return result.demoted.has(key) ? { ...shown, tier: 2 as const } : shown;
      });
  };
  return { package: keep('package'), reasoning: keep('reasoning'), error_pattern: keep('error_pattern'), strategy: keep('strategy'), memory: keep('memory') };
}

const commandsOfItems = new WeakMap<BlockInput['items'], { artifacts: BlockInput['artifacts']; commands: VerificationCommand[] }>();

/**
 * The verification commands every candidate quotes, computed once for a block's candidates and
 * artifacts (the fits of every navigation layout share them).
 */
function candidateCommands(input: BlockInput): VerificationCommand[] {
  const known = commandsOfItems.get(input.items);
  if (known !== undefined && known.artifacts === input.artifacts) return known.commands;
  const commands = commandsOf(input.items, input.artifacts);
  commandsOfItems.set(input.items, { artifacts: input.artifacts, commands });
  return commands;
}

/** Purpose handoff: the verification commands these items quote (and the packages' artifacts). */
function commandsOf(items: ItemsByKind, artifacts: ReadonlyMap<number, string> | undefined): VerificationCommand[] {
  return verificationCommands({ packages: items.package, artifacts, reasoning: items.reasoning, errorPatterns: items.error_pattern, strategies: items.strategy });
}

function leftOutExclusions(ordered: readonly (FitItem & { id: number | string })[], result: ReturnType<typeof fitTiers>): Exclusion[] {
  const out: Exclusion[] = [];
  for (const item of ordered) {
    const reason = result.leftOut.get(item.key);
    if (reason !== undefined) out.push({ kind: item.kind, id: item.id, reason, tier: result.demoted.has(item.key) ? 2 : item.tier });
  }
  return out;
}

const needsReport = (r: TruncationReport) => r.overrun > 0 || Object.values(r.left_out).some((n) => n > 0);

/** Reasons in the order the report lists them. */
export const REPORT_REASONS: readonly ExclusionReason[] = ['budget', 'tier', 'limit', 'zone', 'consumed', 'redaction-emptied', 'expired', 'contradicted', 'unreviewed'];

/** How many items the report names (the most relevant of those left out). */
export const REPORT_IDS = 5;

function reportOf(
  input: LaidInput,
  ordered: readonly (FitItem & { id: number | string })[],
  result: ReturnType<typeof fitTiers>,
  fixed: Sized,
  /** The report's size when it is shown (undefined: not shown). */
  shownSize: Sized | undefined,
): TruncationReport {
  const excluded = [...input.excludedBefore, ...leftOutExclusions(ordered, result)];
  const left_out = countReasons(excluded);
  const most_relevant = mostRelevant(excluded);
  const tiers: TierUsage[] = result.tiers.map((t) => ({
    ...t,
    // Left out by this fit or an earlier one (pack's, then reasoning's level budget), per tier.
    left_out: excluded.filter((e) => (e.reason === 'budget' || e.reason === 'tier') && e.tier === t.tier).length,
  }));
  const used = fixed.tokens + result.used + (shownSize?.tokens ?? 0);
  return {
    purpose: input.purpose,
    budget: input.budget,
    used,
    // The fit admits nothing past the budget but Tier 1; the block's own headings at a budget
    // smaller than they are are the other way over it. Either is stated.
    overrun: Math.max(0, used - input.budget),
    tiers,
    left_out,
    most_relevant,
    shown: shownSize !== undefined,
    ...(input.navigation ? { navigation: input.navigation } : {}),
  };
}

/** Items left out per reason (reasons with none absent). */
function countReasons(excluded: readonly Exclusion[]): Partial<Record<ExclusionReason, number>> {
  const out: Partial<Record<ExclusionReason, number>> = {};
  for (const reason of REPORT_REASONS) {
    const n = excluded.filter((e) => e.reason === reason).length;
    if (n > 0) out[reason] = n;
  }
  return out;
}

/**
 * The most relevant items left out, best first: what the budget or the tiers left out, by tier (in
 * the order the fit considered them), then what ranked below the limit, then what the zone left
 * out. Consumed items were delivered already; emptied ones have nothing to show.
 */
function mostRelevant(excluded: readonly Exclusion[]): TruncationReport['most_relevant'] {
  const byTier = excluded.filter((e) => e.reason === 'budget' || e.reason === 'tier').sort((a, b) => (a.tier ?? 3) - (b.tier ?? 3));
  const rest = excluded.filter((e) => e.reason === 'limit').concat(excluded.filter((e) => e.reason === 'zone'));
  return [...byTier, ...rest].slice(0, REPORT_IDS).map((e) => ({ kind: e.kind, id: e.id }));
}

/** The report after exclusions changed outside a fit (a concurrent run's packages withdrawn as consumed). */
export function reportWithExcluded(report: TruncationReport, excluded: readonly Exclusion[]): TruncationReport {
  return { ...report, left_out: countReasons(excluded), most_relevant: mostRelevant(excluded) };
}
