/** Commands: reasoning, error patterns and strategies (what agents learn and leave for the next one). */
import { writeTransaction } from '../statements.ts';
import { writeDerived } from '../schemaSteps.ts';
import { invalid, notFound, usage } from '../errors.ts';
import { CONFIDENCE_LEVELS, REASONING_PHASES, STRATEGY_TOPICS, isOneOf, pyList } from '../enums.ts';
import { errorPatternOf, strategyId } from '../hashing.ts';
import { pyJsonDumps } from '../pyjson.ts';
import { captureOutcomes, settleKnownVerdicts } from '../capture.ts';
import {
  deleteExpiredErrorPatterns,
  findErrorPattern,
  insertErrorPattern,
  listErrorPatterns,
  nextConfidence,
  recordErrorOccurrence,
  round2,
  setErrorConfidence,
} from '../repo/errorPatterns.ts';
import { insertReasoning, listReasoning, listStrategySourceReasoning } from '../repo/reasoning.ts';
import { projectScope, sessionExists } from '../repo/sessions.ts';
import { storeFaultKeys, sweepFaultKeys } from '../repo/patternFaults.ts';
import { sweepPatternIndex } from '../repo/searchIndex.ts';
import { saveTokenCounts } from '../repo/tokenCounts.ts';
import { readContentFile } from '../contentFile.ts';
import { reasoningContentChars } from '../settings.ts';
import { shownReasoningLine, shownTail } from '../shown.ts';
import { countCl100k, textHash } from '../tokens.ts';
import { addStrategyHelpfulness, listStrategies, upsertStrategy } from '../repo/strategies.ts';
import {
  groupOrGlobal,
  parseInteger,
  parseJsonOrThrow,
  pyTypeName,
  rejectSecret,
  validateGroupId,
  validateGroupOnly,
} from '../validate.ts';
import { pos, rejectProblem, requirePositionals, type Command } from './types.ts';

const charLength = (s: string) => Array.from(s).length;
const truncateChars = (s: string, max: number) => Array.from(s).slice(0, max).join('');
export { round2 };

const validFlagList = (flags: Record<string, unknown>) => pyList(Object.keys(flags).sort());

// ---------------------------------------------------------------------------------- reasoning

const SAVE_REASONING_FLAGS = {
  '--content-file': 'value',
  '--agent_id': 'value',
  '--iteration': 'value',
  '--confidence': 'value',
  '--references': 'value',
} as const;

const saveReasoning: Command = {
  name: 'save-reasoning',
  indexes: true,
  synopsis:
    'save-reasoning <session_id> <group_id> <agent_type> <phase> [content] [--content-file P] [--agent_id X] [--iteration N] [--confidence high|medium|low] [--references JSON]',
  flags: SAVE_REASONING_FLAGS,
  maxPositionals: 5,
  run(args, ctx) {
    requirePositionals(args, 4, 'save-reasoning requires: <session_id> <group_id> <agent_type> <phase> <content>');
    rejectProblem(args, {
      unknownFlag: (t) => `Unknown flag '${t}'. Valid flags: ${validFlagList(SAVE_REASONING_FLAGS)}`,
      unexpected: (t) => `Unexpected argument '${t}' after positional args.`,
    });
    const iterationText = args.values.get('--iteration');
    const iteration = iterationText === undefined ? null : parseInteger('--iteration', iterationText);
    const referencesText = args.values.get('--references');
    let references: unknown[] | undefined;
    if (referencesText !== undefined) {
      const parsed = parseJsonOrThrow(referencesText, 'Invalid JSON for --references: ');
      if (!Array.isArray(parsed)) throw invalid('references must be a JSON array');
      references = parsed;
    }
    let content = args.positionals[4];
    const contentFile = args.values.get('--content-file');
    if (contentFile !== undefined) content = readContentFile(contentFile, ctx.cwd, ctx.paths().projectRoot);
    if (content === undefined) throw usage('Content is required. Provide as 5th argument or use --content-file FILE');
    const [sessionId, rawGroup, agentType, phase] = args.positionals as [string, string, string, string];
    if (sessionId.trim() === '') throw invalid('session_id cannot be empty');
    const groupId = groupOrGlobal(rawGroup);
    validateGroupId(groupId);
    if (agentType.trim() === '') throw invalid('agent_type cannot be empty');
    if (phase.trim() === '') throw invalid('reasoning_phase cannot be empty');
    if (!isOneOf(REASONING_PHASES, phase)) {
      throw invalid(`Invalid reasoning_phase: ${phase}. Must be one of: ${pyList([...REASONING_PHASES].sort())}`);
    }
    if (content.trim() === '') throw invalid('content cannot be empty');
    const confidence = args.values.get('--confidence') ?? null;
    if (confidence !== null && !isOneOf(CONFIDENCE_LEVELS, confidence)) {
      throw invalid(`Invalid confidence: ${confidence}. Must be one of: ${pyList([...CONFIDENCE_LEVELS].sort())}`);
    }
    references?.forEach((ref, i) => {
      if (typeof ref !== 'string') throw invalid(`references[${i}] must be a string, got ${pyTypeName(ref)}`);
    });
    rejectSecret('agent_type', agentType);
    const redactor = ctx.redactor();
    const stored = redactor.text(content);
    const storedReferences = references && references.length > 0 ? pyJsonDumps(redactor.json(references)) : null;
    const agentId = redactor.optional(args.values.get('--agent_id'));
    // The counts of the entry as an assembly shows it (its line, and its content whole), taken now
    // and outside the write lock, so that a later assembly sizes it without loading the rank table.
    const shown = [shownReasoningLine(agentType, phase, stored, reasoningContentChars(ctx.paths().projectRoot)), shownTail(stored)];
    const counts = new Map(shown.map((text) => [textHash(text), countCl100k(text)]));
    const db = ctx.db();
    const saved = writeTransaction(db, () => {
      if (!sessionExists(db, sessionId)) throw notFound(`Session not found: ${sessionId}`);
      writeDerived(db, () => saveTokenCounts(db, counts), undefined);
      return insertReasoning(db, {
        sessionId,
        groupId,
        agentType,
        agentId,
        iteration,
        phase,
        confidence,
        content: stored,
        referencesJson: storedReferences,
        redacted: redactor.redacted,
      });
    });
    return {
      success: true,
      log_id: saved.id,
      session_id: sessionId,
      group_id: groupId,
      agent_type: agentType,
      reasoning_phase: phase,
      content_length: charLength(stored),
      timestamp: saved.timestamp,
      redacted: redactor.redacted,
    };
  },
};

const GET_REASONING_FLAGS = {
  '--agent_type': 'value',
  '--format': 'value',
  '--group_id': 'value',
  '--limit': 'value',
  '--phase': 'value',
} as const;

function parseReferences(json: string | null): unknown[] {
  if (json === null) return [];
  try {
    const parsed = JSON.parse(json) as unknown;
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

const getReasoning: Command = {
  name: 'get-reasoning',
  synopsis: 'get-reasoning <session_id> [--group_id G] [--agent_type A] [--phase P] [--limit N] [--format json]',
  flags: GET_REASONING_FLAGS,
  maxPositionals: 1,
  run(args, ctx) {
    requirePositionals(args, 1, 'get-reasoning requires <session_id>');
    rejectProblem(args, {
      unknownFlag: (t) => `Unknown flag '${t}'. Valid flags: ${validFlagList(GET_REASONING_FLAGS)}`,
      unexpected: (t) => `Unexpected argument '${t}'. Use --flag syntax for options.`,
    });
    const limitText = args.values.get('--limit');
    const limit = limitText === undefined ? 50 : parseInteger('--limit', limitText);
    const format = args.values.get('--format');
    if (format === 'prompt-summary') throw usage('--format prompt-summary is not supported by this implementation');
    if (format !== undefined && format !== 'json') throw invalid(`--format must be 'json' or 'prompt-summary', got '${format}'`);
    const rawGroup = args.values.get('--group_id');
    const groupId = rawGroup === undefined ? null : groupOrGlobal(rawGroup);
    if (groupId !== null) validateGroupId(groupId);
    const phase = args.values.get('--phase') ?? null;
    if (phase !== null && !isOneOf(REASONING_PHASES, phase)) {
      throw invalid(`Invalid phase: ${phase}. Must be one of: ${pyList([...REASONING_PHASES].sort())}`);
    }
    const rows = listReasoning(ctx.db(), {
      sessionId: pos(args, 0),
      groupId,
      agentType: args.values.get('--agent_type') ?? null,
      phase,
      limit,
    });
    return rows.map(({ references_json, ...row }) => ({
      id: row.id,
      session_id: row.session_id,
      group_id: row.group_id,
      agent_type: row.agent_type,
      agent_id: row.agent_id,
      iteration: row.iteration,
      reasoning_phase: row.reasoning_phase,
      confidence_level: row.confidence_level,
      content: row.content,
      redacted: row.redacted === 1,
      timestamp: row.timestamp,
      references: parseReferences(references_json),
    }));
  },
};

// ----------------------------------------------------------------------------- error patterns

const SAVE_PATTERN_FLAGS = { '--lang': 'value', '--context_hints': 'value', '--stack_pattern': 'value' } as const;

function parseJsonArrayFlag(text: string | undefined, name: string): unknown[] {
  if (text === undefined) return [];
  const prefix = `Invalid JSON for --${name}: `;
  const parsed = parseJsonOrThrow(text, prefix);
  if (!Array.isArray(parsed)) throw invalid(`${prefix}${name} must be a JSON array`);
  return parsed;
}

const saveErrorPattern: Command = {
  name: 'save-error-pattern',
  indexes: true,
  synopsis:
    'save-error-pattern <project_id> <error_type> <error_message> <solution> [--lang L] [--context_hints JSON] [--stack_pattern JSON]',
  flags: SAVE_PATTERN_FLAGS,
  maxPositionals: 4,
  run(args, ctx) {
    requirePositionals(args, 4, 'save-error-pattern requires 4 args: <project_id> <error_type> <error_message> <solution>');
    rejectProblem(args, { unknownFlag: (t) => `Unknown flag '${t}'. Valid flags: ${validFlagList(SAVE_PATTERN_FLAGS)}` });
    const hints = parseJsonArrayFlag(args.values.get('--context_hints'), 'context_hints');
    const stack = parseJsonArrayFlag(args.values.get('--stack_pattern'), 'stack_pattern');
    if (!hints.every((h) => typeof h === 'string')) {
      throw invalid('Invalid JSON for --context_hints: context_hints must be a JSON array of strings');
    }
    const [projectId, errorType, message, rawSolution] = args.positionals as [string, string, string, string];
    rejectSecret('project_id', projectId);
    // Field by field, never the serialised JSON: a replacement must not break the JSON around it.
    const redactor = ctx.redactor();
    // The row the original writes for this input: its signature and hash (hashing.ts
    // errorPatternOf), so a repeat save through either tool counts on this row.
    const { hash, signature, fault } = errorPatternOf(errorType, message, {
      hints: redactor.json(hints as string[]),
      // Secrets can sit at any depth of a stack item (objects, nested arrays).
      stack: redactor.json(stack),
      redact: (t) => redactor.text(t),
    });
    const solution = redactor.text(rawSolution);
    const lang = redactor.optional(args.values.get('--lang'));
    const redacted = redactor.redacted;
    const db = ctx.db();
    return writeTransaction(db, () => {
      // Its fault in this layer's own table (one fault, one key: patternFaults.ts).
      writeDerived(db, () => storeFaultKeys(db, [{ project_id: projectId, pattern_hash: hash, ...fault }]), undefined);
      const existing = findErrorPattern(db, hash, projectId);
      if (!existing) {
        insertErrorPattern(db, {
          hash,
          projectId,
          signatureJson: pyJsonDumps(signature),
          solution,
          lang,
        });
        return { success: true, pattern_hash: hash, operation: 'created', occurrences: 1, confidence: 0.5, redacted };
      }
      const longer = charLength(solution) > charLength(existing.solution) ? solution : null;
      recordErrorOccurrence(db, hash, projectId, longer);
      return { success: true, pattern_hash: hash, operation: 'updated', occurrences: existing.occurrences + 1, redacted };
    });
  },
};

const GET_PATTERN_FLAGS = { '--lang': 'value', '--limit': 'value', '--min_confidence': 'value' } as const;
const FLOAT_RE = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

function parseSignature(json: string): unknown {
  try {
    const parsed = JSON.parse(json) as unknown;
    return parsed !== null && typeof parsed === 'object' ? parsed : {};
  } catch {
    return {};
  }
}

const getErrorPatterns: Command = {
  name: 'get-error-patterns',
  synopsis: 'get-error-patterns <project_id> [--lang L] [--min_confidence F] [--limit N]',
  flags: GET_PATTERN_FLAGS,
  maxPositionals: 1,
  run(args, ctx) {
    requirePositionals(args, 1, 'get-error-patterns requires at least 1 arg: <project_id>');
    rejectProblem(args, { unknownFlag: (t) => `Unknown flag '${t}'. Valid flags: ${validFlagList(GET_PATTERN_FLAGS)}` });
    const minText = args.values.get('--min_confidence');
    if (minText !== undefined && !FLOAT_RE.test(minText)) throw invalid('--min_confidence must be a number');
    const limitText = args.values.get('--limit');
    if (limitText !== undefined && !/^\s*[+-]?[0-9]+\s*$/.test(limitText)) throw invalid('--limit must be an integer');
    const rows = listErrorPatterns(ctx.db(), {
      scope: projectScope(pos(args, 0)),
      lang: args.values.get('--lang') ?? null,
      minConfidence: minText === undefined ? 0.7 : Number(minText.trim()),
      limit: limitText === undefined ? 5 : Number(limitText.trim()),
    });
    return rows.map((r) => ({
      pattern_hash: r.pattern_hash,
      solution: r.solution,
      confidence: round2(r.confidence),
      occurrences: r.occurrences,
      lang: r.lang,
      last_seen: r.last_seen,
      signature: parseSignature(r.signature_json),
    }));
  },
};

const updateErrorConfidence: Command = {
  name: 'update-error-confidence',
  indexes: true,
  synopsis: 'update-error-confidence <pattern_hash> <project_id> <success|failure>',
  flags: {},
  maxPositionals: 3,
  run(args, ctx) {
    requirePositionals(args, 3, 'update-error-confidence requires 3 args: <pattern_hash> <project_id> <success|failure>');
    rejectProblem(args);
    const [hash, projectId, rawOutcome] = args.positionals as [string, string, string];
    const outcome = rawOutcome.toLowerCase();
    if (outcome !== 'success' && outcome !== 'failure') throw invalid(`Outcome must be 'success' or 'failure', got '${outcome}'`);
    const db = ctx.db();
    return writeTransaction(db, () => {
      const row = findErrorPattern(db, hash, projectId);
      if (!row) throw notFound('Pattern not found');
      const previous = round2(row.confidence);
      const next = nextConfidence(row.confidence, outcome);
      setErrorConfidence(db, hash, projectId, next);
      return { success: true, pattern_hash: hash, previous_confidence: previous, new_confidence: next, injectable: next >= 0.3 };
    });
  },
};

const cleanupErrorPatterns: Command = {
  name: 'cleanup-error-patterns',
  indexes: true,
  synopsis: 'cleanup-error-patterns [project_id]',
  flags: {},
  maxPositionals: 1,
  run(args, ctx) {
    rejectProblem(args);
    const projectId = args.positionals[0] ?? null;
    const db = ctx.db();
    const deleted = writeTransaction(db, () => {
      const n = deleteExpiredErrorPatterns(db, projectId);
      // One project's rows need not include the oldest, which the index's freshness check watches.
      if (n > 0) writeDerived(db, () => sweepPatternIndex(db), undefined);
      if (n > 0) writeDerived(db, () => sweepFaultKeys(db), undefined);
      return n;
    });
    return { success: true, deleted_count: deleted, project_id: projectId };
  },
};

// --------------------------------------------------------------------------------- strategies

const INSIGHT_MAX_CHARS = 500;

const normaliseTopic = (topic: string) => (isOneOf(STRATEGY_TOPICS, topic) ? topic : 'general');

const saveStrategy: Command = {
  name: 'save-strategy',
  indexes: true,
  synopsis: 'save-strategy <project_id> <topic> <insight> [--lang L] [--framework F] [--strategy_id ID]',
  flags: { '--lang': 'value', '--framework': 'value', '--strategy_id': 'value' },
  maxPositionals: 3,
  run(args, ctx) {
    requirePositionals(args, 3, 'save-strategy requires: <project_id> <topic> <insight>');
    rejectProblem(args);
    const [projectId, rawTopic, rawInsight] = args.positionals as [string, string, string];
    const topic = normaliseTopic(rawTopic);
    rejectSecret('project_id', projectId);
    const givenId = args.values.get('--strategy_id');
    if (givenId !== undefined) rejectSecret('--strategy_id', givenId);
    const redactor = ctx.redactor();
    const insight = redactor.text(rawInsight);
    const id = givenId ?? strategyId(projectId, topic, insight);
    const db = ctx.db();
    const operation = writeTransaction(db, () =>
      upsertStrategy(db, {
        strategyId: id,
        projectId,
        topic,
        insight: truncateChars(insight, INSIGHT_MAX_CHARS),
        lang: redactor.optional(args.values.get('--lang')),
        framework: redactor.optional(args.values.get('--framework')),
      }),
    );
    return { success: true, strategy_id: id, project_id: projectId, topic, operation, redacted: redactor.redacted };
  },
};

const getStrategies: Command = {
  name: 'get-strategies',
  synopsis: 'get-strategies <project_id> [--lang L] [--framework F] [--topic T] [--limit N]',
  flags: { '--lang': 'value', '--framework': 'value', '--topic': 'value', '--limit': 'value' },
  maxPositionals: 1,
  run(args, ctx) {
    requirePositionals(args, 1, 'get-strategies requires: <project_id>');
    rejectProblem(args);
    const limitText = args.values.get('--limit');
    const limit = Math.min(100, Math.max(1, limitText === undefined ? 5 : parseInteger('--limit', limitText)));
    const topic = args.values.get('--topic') ?? null;
    if (topic !== null && !isOneOf(STRATEGY_TOPICS, topic)) {
      throw invalid(`Invalid topic '${topic}'. Valid: ${STRATEGY_TOPICS.join(', ')}`);
    }
    return listStrategies(ctx.db(), {
      scope: projectScope(pos(args, 0)),
      lang: args.values.get('--lang') ?? null,
      framework: args.values.get('--framework') ?? null,
      topic,
      limit,
    });
  },
};

const updateStrategyHelpfulness: Command = {
  name: 'update-strategy-helpfulness',
  synopsis: 'update-strategy-helpfulness <strategy_id> [increment]',
  flags: {},
  maxPositionals: 2,
  run(args, ctx) {
    requirePositionals(args, 1, 'update-strategy-helpfulness requires: <strategy_id>');
    rejectProblem(args);
    const id = pos(args, 0);
    const raw = args.positionals[1] === undefined ? 1 : parseInteger('increment', pos(args, 1));
    const increment = Math.min(100, Math.max(0, raw));
    const db = ctx.db();
    return writeTransaction(db, () => {
      const next = addStrategyHelpfulness(db, id, increment);
      if (next === undefined) throw notFound('Strategy not found');
      return { success: true, strategy_id: id, previous_helpfulness: Math.max(0, next - increment), new_helpfulness: next };
    });
  },
};

const PHASE_TOPIC: Record<string, string> = {
  completion: 'implementation',
  decisions: 'architecture',
  approach: 'methodology',
};

const extractStrategies: Command = {
  name: 'extract-strategies',
  indexes: true,
  synopsis: 'extract-strategies <session_id> <group_id> <project_id> [--lang L] [--framework F]',
  flags: { '--lang': 'value', '--framework': 'value' },
  maxPositionals: 3,
  run(args, ctx) {
    requirePositionals(args, 3, 'extract-strategies requires: <session> <group_id> <project_id>');
    rejectProblem(args);
    const [sessionId, rawGroup, projectId] = args.positionals as [string, string, string];
    const groupId = groupOrGlobal(rawGroup);
    try {
      validateGroupOnly(groupId);
    } catch (err) {
      throw invalid(`Invalid group_id: ${(err as Error).message}`);
    }
    rejectSecret('project_id', projectId);
    const redactor = ctx.redactor();
    const lang = redactor.optional(args.values.get('--lang'));
    const framework = redactor.optional(args.values.get('--framework'));
    const db = ctx.db();
    const ids = writeTransaction(db, () =>
      listStrategySourceReasoning(db, sessionId, groupId).map((row) => {
        const topic = PHASE_TOPIC[row.reasoning_phase ?? ''] ?? 'general';
        const insight = redactor.text(row.content);
        const id = strategyId(projectId, topic, insight);
        upsertStrategy(db, { strategyId: id, projectId, topic, insight: truncateChars(insight, INSIGHT_MAX_CHARS), lang, framework });
        return id;
      }),
    );
    return {
      success: true,
      extracted_count: ids.length,
      session_id: sessionId,
      group_id: groupId,
      project_id: projectId,
      strategy_ids: ids,
    };
  },
};

// ------------------------------------------------------------------------------------ capture

const CAPTURE_FLAGS = { '--group': 'value', '--dry-run': 'bool' } as const;

const captureOutcomesCommand: Command = {
  name: 'capture-outcomes',
  synopsis: 'capture-outcomes <session_id> [--group G] [--dry-run]',
  flags: CAPTURE_FLAGS,
  maxPositionals: 1,
  run(args, ctx) {
    requirePositionals(args, 1, 'capture-outcomes requires: <session_id>');
    rejectProblem(args, { unknownFlag: (t) => `Unknown flag '${t}'. Valid flags: ${validFlagList(CAPTURE_FLAGS)}` });
    const sessionId = pos(args, 0);
    const rawGroup = args.values.get('--group');
    if (rawGroup !== undefined) validateGroupId(rawGroup);
    const dryRun = args.bools.has('--dry-run');
    const db = ctx.db();
    if (!sessionExists(db, sessionId)) throw notFound(`Session not found: ${sessionId}`);
    // The verdicts now known of what spawns were shown (outcome feedback).
    const settled = dryRun ? 0 : settleKnownVerdicts(db, -1);
    const report = captureOutcomes(db, {
      sessionId,
      ...(rawGroup !== undefined ? { groups: [rawGroup] } : {}),
      projectRoot: ctx.paths().projectRoot,
      dryRun,
      now: new Date().toISOString(),
    });
    return { success: true, ...report, records_settled: settled };
  },
};

export const learningCommands: Command[] = [
  saveReasoning,
  getReasoning,
  saveErrorPattern,
  getErrorPatterns,
  updateErrorConfidence,
  cleanupErrorPatterns,
  saveStrategy,
  getStrategies,
  updateStrategyHelpfulness,
  extractStrategies,
  captureOutcomesCommand,
];

