/** Commands: context packages and consumption. */
import fs from 'node:fs';
import path from 'node:path';
import { writeTransaction } from '../statements.ts';
import { BazingaError, invalid, notFound, usage } from '../errors.ts';
import {
  AGENT_TYPES,
  CONSUMPTION_AGENTS,
  PACKAGE_TYPES,
  PRIORITIES,
  isOneOf,
  pyList,
  pyTuple,
} from '../enums.ts';
import { consumptionScopeId } from '../hashing.ts';
import { markPackageConsumed } from '../consume.ts';
import { isStrictlyInside, resolveLikePython } from '../paths.ts';
import { insertConsumptionScope, listConsumption } from '../repo/consumption.ts';
import {
  countEligiblePackages,
  findPackage,
  hasConsumer,
  insertConsumer,
  insertPackage,
  listEligiblePackages,
  type EligibilityQuery,
} from '../repo/contextPackages.ts';
import { sessionExists } from '../repo/sessions.ts';
import { STORED_SUMMARY_CHARS } from '../shown.ts';
import {
  groupOrGlobal,
  normaliseAgent,
  parseInteger,
  parseLimit,
  parseJsonOrThrow,
  validateGroupId,
  validateGroupOnly,
} from '../validate.ts';
import { pos, rejectProblem, requirePositionals, type Command } from './types.ts';


/** Cuts text to `max` code points, ending in "..." when cut. */
function truncateWithEllipsis(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max - 3).join('') + '...';
}

/** Checks an artifact path (F15) and returns its stored form and size. */
function resolveArtifactPath(filePath: string, sessionId: string, projectRoot: string): { stored: string; sizeBytes: number | null } {
  if (sessionId.includes('/') || sessionId.includes('\\') || sessionId === '.' || sessionId === '..') {
    throw invalid(`Invalid session_id for artifact path: ${sessionId}`);
  }
  const artifactsDir = resolveLikePython(path.join('bazinga', 'artifacts', sessionId), projectRoot);
  const resolved = resolveLikePython(filePath, projectRoot);
  if (!isStrictlyInside(resolved, artifactsDir)) {
    throw invalid(`Invalid file_path: must be within bazinga/artifacts/${sessionId}. Got: ${filePath}`);
  }
  let sizeBytes: number | null = null;
  try {
    const st = fs.statSync(resolved);
    if (!st.isFile()) throw invalid(`Invalid file_path: not a regular file: ${filePath}`);
    sizeBytes = st.size;
  } catch (err) {
    if (err instanceof BazingaError) throw err;
  }
  const relative = path.relative(artifactsDir, resolved).split(path.sep).join('/');
  return { stored: `bazinga/artifacts/${sessionId}/${relative}`, sizeBytes };
}

const SAVE_PACKAGE_ARGS =
  '<session_id> <group_id> <package_type> <file_path> <producer_agent> <consumers_json> <priority> <summary>';

const saveContextPackage: Command = {
  name: 'save-context-package',
  indexes: true,
  synopsis: `save-context-package ${SAVE_PACKAGE_ARGS}`,
  flags: {},
  maxPositionals: 8,
  run(args, ctx) {
    if (args.positionals.length !== 8 || args.problem) throw usage(`save-context-package requires 8 args: ${SAVE_PACKAGE_ARGS}`);
    const [sessionId, rawGroup, packageType, filePath, rawProducer, consumersText, priority, rawSummary] =
      args.positionals as [string, string, string, string, string, string, string, string];
    const prefix = 'Invalid consumers_json argument: ';
    const consumersParsed = parseJsonOrThrow(consumersText, prefix);
    if (!Array.isArray(consumersParsed)) throw invalid(`${prefix}consumers_json must be a JSON array of strings`);
    if (!consumersParsed.every((c) => typeof c === 'string' && c !== '')) {
      throw invalid(`${prefix}All consumer elements must be non-empty strings`);
    }
    const groupId = groupOrGlobal(rawGroup);
    validateGroupId(groupId);
    if (!isOneOf(PACKAGE_TYPES, packageType)) throw invalid(`Invalid package_type: ${packageType}. Must be one of ${pyTuple(PACKAGE_TYPES)}`);
    if (!isOneOf(PRIORITIES, priority)) throw invalid(`Invalid priority: ${priority}. Must be one of ${pyTuple(PRIORITIES)}`);
    const agents = pyList([...AGENT_TYPES].sort());
    const producer = normaliseAgent(rawProducer);
    if (!isOneOf(AGENT_TYPES, producer)) throw invalid(`Invalid producer_agent: ${producer}. Must be one of ${agents}`);
    const consumers: string[] = [];
    for (const item of consumersParsed as string[]) {
      const agent = normaliseAgent(item);
      if (agent === '') continue;
      if (!isOneOf(AGENT_TYPES, agent)) throw invalid(`Invalid consumer agent: ${item}. Must be one of ${agents}`);
      if (!consumers.includes(agent)) consumers.push(agent);
    }
    if (consumers.length === 0) throw invalid('At least one valid consumer agent is required');
    const { stored, sizeBytes } = resolveArtifactPath(filePath, sessionId, ctx.paths().projectRoot);
    const redactor = ctx.redactor();
    // Redacted while its lines are still lines (a value wrapped onto the next one is recognised), then flattened.
    const summary = truncateWithEllipsis(redactor.text(redactor.text(rawSummary).replace(/[\r\n]/g, ' ')), STORED_SUMMARY_CHARS);
    const filePathStored = redactor.text(stored);
    const global = groupId === 'global';
    const db = ctx.db();
    return writeTransaction(db, () => {
      if (!sessionExists(db, sessionId)) throw notFound(`Session not found: ${sessionId}`);
      const packageId = insertPackage(db, {
        sessionId,
        groupId: global ? null : groupId,
        scope: global ? 'global' : 'group',
        packageType,
        filePath: filePathStored,
        producerAgent: producer,
        priority,
        summary,
        sizeBytes,
      });
      for (const agent of consumers) insertConsumer(db, packageId, agent);
      return {
        success: true,
        package_id: packageId,
        file_path: filePathStored,
        consumers_created: consumers.length,
        redacted: redactor.redacted,
      };
    });
  },
};

const getContextPackages: Command = {
  name: 'get-context-packages',
  synopsis: 'get-context-packages <session_id> <group_id> <agent_type> [limit] [--iteration N] [--with-total]',
  flags: { '--iteration': 'value', '--with-total': 'bool' },
  maxPositionals: 4,
  run(args, ctx) {
    requirePositionals(
      args,
      3,
      'get-context-packages requires 3 or 4 args: <session_id> <group_id> <agent_type> [limit]',
    );
    rejectProblem(args);
    const [sessionId, rawGroup, rawAgent, limitText] = args.positionals as [string, string, string, string?];
    const limit = limitText === undefined ? 3 : parseLimit('limit', limitText);
    const iterationText = args.values.get('--iteration');
    const iteration = iterationText === undefined ? null : parseInteger('--iteration', iterationText, 0);
    const groupId = groupOrGlobal(rawGroup);
    validateGroupId(groupId);
    const query: EligibilityQuery = { sessionId, groupId, agentType: normaliseAgent(rawAgent), iteration };
    const db = ctx.db();
    // One read transaction: the list and the total come from the same snapshot, even while
    // another process is writing.
    return db.transaction(() => {
      const packages = listEligiblePackages(db, query, limit);
      if (!args.bools.has('--with-total')) return packages;
      return { packages, total_available: countEligiblePackages(db, query) };
    })();
  },
};

const markContextConsumed: Command = {
  name: 'mark-context-consumed',
  synopsis: 'mark-context-consumed <package_id> <agent_type> [iteration]',
  flags: {},
  maxPositionals: 3,
  run(args, ctx) {
    requirePositionals(args, 2, 'mark-context-consumed requires 2 or 3 args: <package_id> <agent_type> [iteration]');
    rejectProblem(args);
    const packageId = parseInteger('package_id', pos(args, 0));
    const iteration = args.positionals[2] === undefined ? 1 : parseInteger('iteration', pos(args, 2), 0);
    const agent = normaliseAgent(pos(args, 1));
    if (agent === '') throw invalid('agent_type cannot be empty');
    const db = ctx.db();
    return writeTransaction(db, () => {
      const pkg = findPackage(db, packageId);
      if (!pkg) throw notFound(`Context package not found: ${packageId}`);
      if (!hasConsumer(db, packageId, agent)) {
        throw new BazingaError('NOT_CONSUMER', `Agent '${agent}' was not designated as consumer for package ${packageId}`);
      }
      const mark = markPackageConsumed(db, pkg, agent, iteration);
      return {
        success: true,
        package_id: packageId,
        agent_type: agent,
        iteration,
        ...mark,
      };
    });
  },
};

const saveConsumption: Command = {
  name: 'save-consumption',
  synopsis: 'save-consumption <session_id> <group_id> <agent_type> <iteration> <package_id>',
  flags: {},
  maxPositionals: 5,
  run(args, ctx) {
    requirePositionals(args, 5, 'save-consumption requires: <session> <group_id> <agent_type> <iteration> <package_id>');
    rejectProblem(args);
    const [sessionId, rawGroup, rawAgent, iterationText, packageText] = args.positionals as [string, string, string, string, string];
    const iteration = parseInteger('iteration', iterationText);
    const packageId = parseInteger('package_id', packageText);
    const groupId = groupOrGlobal(rawGroup);
    validateGroupOnly(groupId);
    const agent = normaliseAgent(rawAgent);
    if (!isOneOf(CONSUMPTION_AGENTS, agent)) {
      throw invalid(`Invalid agent_type: ${agent}. Must be one of ${pyList([...CONSUMPTION_AGENTS].sort())}`);
    }
    if (iteration < 0) throw invalid(`iteration must be >= 0, got ${iteration}`);
    const db = ctx.db();
    return writeTransaction(db, () => {
      if (!sessionExists(db, sessionId)) throw notFound(`Session not found: ${sessionId}`);
      const pkg = findPackage(db, packageId);
      if (!pkg) throw notFound(`Context package not found: ${packageId}`);
      if (pkg.session_id !== sessionId) throw invalid(`Context package ${packageId} does not belong to session ${sessionId}`);
      const row = {
        scope_id: consumptionScopeId(sessionId, groupId, agent, iteration, packageId),
        session_id: sessionId,
        group_id: groupId,
        agent_type: agent,
        iteration,
        package_id: packageId,
      };
      const inserted = insertConsumptionScope(db, row);
      return { success: true, inserted, ...row };
    });
  },
};

const getConsumption: Command = {
  name: 'get-consumption',
  synopsis: 'get-consumption <session_id> [--group_id G] [--agent_type A] [--limit N]',
  flags: { '--group_id': 'value', '--agent_type': 'value', '--limit': 'value' },
  maxPositionals: 1,
  run(args, ctx) {
    requirePositionals(args, 1, 'get-consumption requires <session_id>');
    rejectProblem(args);
    const rawGroup = args.values.get('--group_id');
    const groupId = rawGroup === undefined ? null : groupOrGlobal(rawGroup);
    if (groupId !== null) validateGroupId(groupId);
    const limitText = args.values.get('--limit');
    const limit = Math.min(1000, Math.max(1, limitText === undefined ? 50 : parseInteger('limit', limitText)));
    const rawAgent = args.values.get('--agent_type');
    return listConsumption(ctx.db(), {
      sessionId: pos(args, 0),
      groupId,
      agentType: rawAgent === undefined ? null : normaliseAgent(rawAgent),
      limit,
    });
  },
};

export const packageCommands: Command[] = [
  saveContextPackage,
  getContextPackages,
  markContextConsumed,
  saveConsumption,
  getConsumption,
];
