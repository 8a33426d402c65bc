/**
 * Malformed invocations of the bazinga-db CLI (spec §2.1, §2.4 step 1, §3.1, §4, F14, F15): each one
 * fails with the documented exit code and error code, prints nothing on stdout, reports one JSON
 * error line on stderr without a stack trace, and leaves the database file byte-identical.
 *
 * Every call runs through `runCli` in this process (test/inProcess.ts), with the argv, working
 * directory and environment a process would get and the same assertions (test/cliAssert.ts); the
 * real-process runs of malformed calls (exit code, empty stdout, the JSON error line, no database
 * created) are in test/bazinga-db.smoke.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCleanFailure } from './cliAssert.ts';
import { makeProject, writeArtifact, type Project } from './helpers.ts';
import { bazingaDbIn, runBazingaDbInProcess } from './inProcess.ts';

/** bazinga-db in process (see the header). */
const cli = bazingaDbIn;

const S = 'sess_A';
const GROUP = 'grp1';
const DEV = '["developer"]';
const ART = `bazinga/artifacts/${S}/a.md`;
const LONG_GROUP = 'g'.repeat(65);
const AGENTS = "['developer', 'investigator', 'orchestrator', 'project_manager', 'qa_expert', 'requirements_engineer', 'senior_software_engineer', 'tech_lead']";

/** save-context-package with one positional replaced (0-based index into the 8 positionals). */
function savePackage(overrides: Record<number, string>): string[] {
  const base = [S, GROUP, 'research', ART, 'developer', DEV, 'high', 'summary'];
  for (const [i, v] of Object.entries(overrides)) base[Number(i)] = v;
  return ['save-context-package', ...base];
}

type Code = 'USAGE' | 'VALIDATION' | 'NOT_FOUND' | 'NOT_CONSUMER' | 'REFUSED';

interface Row {
  label: string;
  args: string[];
  code: Code;
  text: string;
}

const rows: Row[] = [
  // --- commands and global flags
  { label: 'unknown command', args: ['bogus-cmd'], code: 'USAGE', text: 'Unknown command: bogus-cmd' },
  { label: 'unsupported original command', args: ['stream-logs', S], code: 'USAGE', text: 'Command not supported by this implementation: stream-logs' },
  { label: 'unsupported original command (recover-db)', args: ['recover-db'], code: 'USAGE', text: 'Command not supported by this implementation: recover-db' },
  { label: 'no command', args: [], code: 'USAGE', text: 'command' },
  { label: 'unknown global flag', args: ['--bogus', 'list-sessions'], code: 'USAGE', text: '--bogus' },
  { label: 'global flag without value', args: ['--busy-timeout'], code: 'USAGE', text: '--busy-timeout' },

  // --- missing and surplus positionals
  { label: 'create-session missing requirements', args: ['create-session', 'sess_B', 'simple'], code: 'USAGE', text: 'create-session requires at least 3 args: <session_id> <mode> <requirements>' },
  { label: 'get-session without id', args: ['get-session'], code: 'USAGE', text: 'get-session requires <session_id>' },
  { label: 'save-context-package with 3 args', args: ['save-context-package', S, GROUP, 'research'], code: 'USAGE', text: 'save-context-package requires 8 args: <session_id> <group_id>' },
  { label: 'save-context-package with 9 args', args: [...savePackage({}), 'extra'], code: 'USAGE', text: 'save-context-package requires 8 args' },
  { label: 'update-session-status missing status', args: ['update-session-status', S], code: 'USAGE', text: 'update-session-status requires <session_id> <status>' },
  { label: 'save-consumption with 4 args', args: ['save-consumption', S, GROUP, 'developer', '0'], code: 'USAGE', text: 'save-consumption requires: <session> <group_id> <agent_type> <iteration> <package_id>' },
  { label: 'save-reasoning without content', args: ['save-reasoning', S, GROUP, 'developer', 'understanding'], code: 'USAGE', text: 'Content is required. Provide as 5th argument or use --content-file FILE' },
  { label: 'get-session surplus positional', args: ['get-session', S, 'extra'], code: 'USAGE', text: "Unexpected argument 'extra'" },
  { label: 'create-task-group 6 positionals', args: ['create-task-group', 'grp2', S, 'Name', 'pending', 'dev', 'extra'], code: 'USAGE', text: 'create-task-group accepts at most 5 positional args' },
  { label: 'get-reasoning surplus positional', args: ['get-reasoning', S, 'extra'], code: 'USAGE', text: "Unexpected argument 'extra'. Use --flag syntax for options." },
  { label: 'save-reasoning surplus positional', args: ['save-reasoning', S, GROUP, 'developer', 'understanding', 'text', 'more'], code: 'USAGE', text: "Unexpected argument 'more' after positional args." },
  { label: 'integrity-check surplus positional', args: ['integrity-check', 'now'], code: 'USAGE', text: "Unexpected argument 'now'" },
  { label: 'query without SQL', args: ['query'], code: 'USAGE', text: 'query command requires SQL statement' },

  // --- flags without values, unknown command flags
  { label: 'save-reasoning --iteration without value', args: ['save-reasoning', S, GROUP, 'developer', 'understanding', 'text', '--iteration'], code: 'USAGE', text: "Flag '--iteration' requires a value" },
  { label: 'get-reasoning --limit without value', args: ['get-reasoning', S, '--limit'], code: 'USAGE', text: "Flag '--limit' requires a value" },
  { label: 'create-session --metadata without value', args: ['create-session', 'sess_B', 'simple', 'req', '--metadata'], code: 'USAGE', text: 'Unknown flag or missing value: --metadata' },
  { label: 'create-session unknown flag', args: ['create-session', 'sess_B', 'simple', 'req', '--bogus', 'x'], code: 'USAGE', text: 'Unknown flag or missing value: --bogus' },
  { label: 'get-reasoning unknown flag', args: ['get-reasoning', S, '--bogus', 'x'], code: 'USAGE', text: "Unknown flag '--bogus'. Valid flags: ['--agent_type', '--format', '--group_id', '--limit', '--phase']" },
  { label: 'save-reasoning unknown flag', args: ['save-reasoning', S, GROUP, 'developer', 'understanding', 'text', '--bogus', 'x'], code: 'USAGE', text: "Unknown flag '--bogus'. Valid flags: ['--agent_id', '--confidence', '--content-file', '--iteration', '--references']" },
  { label: 'save-error-pattern unknown flag', args: ['save-error-pattern', 'proj1', 'E', 'msg', 'fix', '--bogus', 'x'], code: 'USAGE', text: "Unknown flag '--bogus'. Valid flags: ['--context_hints', '--lang', '--stack_pattern']" },
  { label: 'get-error-patterns unknown flag', args: ['get-error-patterns', 'proj1', '--min-conf', '0.5'], code: 'USAGE', text: "Unknown flag '--min-conf'. Valid flags: ['--lang', '--limit', '--min_confidence']" },
  { label: 'get-consumption unknown flag', args: ['get-consumption', S, '--iteration', '1'], code: 'USAGE', text: "Unknown flag '--iteration'" },
  { label: 'save-strategy unknown flag', args: ['save-strategy', 'proj1', 'general', 'insight', '--topic', 'x'], code: 'USAGE', text: "Unknown flag '--topic'" },
  { label: 'get-context-packages --include-consumed (read as the limit)', args: ['get-context-packages', S, GROUP, 'developer', '--include-consumed'], code: 'VALIDATION', text: "limit must be an integer, got '--include-consumed'" },
  { label: 'get-reasoning --format prompt-summary', args: ['get-reasoning', S, '--format', 'prompt-summary'], code: 'USAGE', text: '--format prompt-summary is not supported by this implementation' },
  { label: 'query with both --param and --params', args: ['query', 'SELECT ?', '--param', 'a', '--params', '["a"]'], code: 'USAGE', text: 'use either --param or --params, not both' },

  // --- bad enums
  { label: 'bad mode', args: ['create-session', 'sess_B', 'weird', 'req'], code: 'VALIDATION', text: "Invalid mode: weird. Must be 'simple' or 'parallel'" },
  { label: 'bad session status', args: ['update-session-status', S, 'paused'], code: 'VALIDATION', text: "Invalid status 'paused'" },
  { label: 'bad task-group status', args: ['create-task-group', 'grp2', S, 'Name', 'weird'], code: 'VALIDATION', text: 'Invalid status: weird. Must be one of: pending, in_progress, completed, failed, approved_pending_merge, merging' },
  { label: 'bad package_type', args: savePackage({ 2: 'notes' }), code: 'VALIDATION', text: "Invalid package_type: notes. Must be one of ('research', 'failures', 'decisions', 'handoff', 'investigation')" },
  { label: 'bad priority', args: savePackage({ 6: 'urgent' }), code: 'VALIDATION', text: "Invalid priority: urgent. Must be one of ('low', 'medium', 'high', 'critical')" },
  { label: 'bad producer agent', args: savePackage({ 4: 'ghost' }), code: 'VALIDATION', text: `Invalid producer_agent: ghost. Must be one of ${AGENTS}` },
  { label: 'bad consumer agent', args: savePackage({ 5: '["ghost"]' }), code: 'VALIDATION', text: `Invalid consumer agent: ghost. Must be one of ${AGENTS}` },
  { label: 'no consumer left', args: savePackage({ 5: '["  "]' }), code: 'VALIDATION', text: 'At least one valid consumer agent is required' },
  { label: 'bad reasoning phase', args: ['save-reasoning', S, GROUP, 'developer', 'thinking', 'x'], code: 'VALIDATION', text: "Invalid reasoning_phase: thinking. Must be one of: ['approach', 'blockers', 'completion', 'decisions', 'pivot', 'risks', 'understanding']" },
  { label: 'bad phase filter', args: ['get-reasoning', S, '--phase', 'thinking'], code: 'VALIDATION', text: "Invalid phase: thinking. Must be one of: ['approach', 'blockers', 'completion', 'decisions', 'pivot', 'risks', 'understanding']" },
  { label: 'bad confidence', args: ['save-reasoning', S, GROUP, 'developer', 'understanding', 'x', '--confidence', '0.9'], code: 'VALIDATION', text: "Invalid confidence: 0.9. Must be one of: ['high', 'low', 'medium']" },
  { label: 'bad topic', args: ['get-strategies', 'proj1', '--topic', 'weird'], code: 'VALIDATION', text: "Invalid topic 'weird'. Valid: implementation, architecture, methodology, general" },
  { label: 'bad outcome', args: ['update-error-confidence', 'abc', 'proj1', 'Maybe'], code: 'VALIDATION', text: "Outcome must be 'success' or 'failure', got 'maybe'" },
  { label: 'bad initial_tier', args: ['create-task-group', 'grp2', S, 'Name', '--initial_tier', 'Intern'], code: 'VALIDATION', text: "--initial_tier must be one of ('Developer', 'Senior Software Engineer'), got 'Intern'" },
  { label: 'bad --format', args: ['get-reasoning', S, '--format', 'yaml'], code: 'VALIDATION', text: "--format must be 'json' or 'prompt-summary', got 'yaml'" },
  { label: 'bad consumption agent', args: ['save-consumption', S, GROUP, 'requirements_engineer', '0', '1'], code: 'VALIDATION', text: "Invalid agent_type: requirements_engineer. Must be one of ['developer', 'investigator', 'qa_expert', 'senior_software_engineer', 'tech_lead']" },
  { label: 'complexity out of range', args: ['create-task-group', 'grp2', S, 'Name', '--complexity', '11'], code: 'VALIDATION', text: '--complexity must be between 1 and 10' },
  { label: 'item_count zero', args: ['create-task-group', 'grp2', S, 'Name', '--item_count', '0'], code: 'VALIDATION', text: '--item_count must be a positive integer' },

  // --- non-integer ids and limits, out-of-range limits, negative iterations
  { label: 'non-integer package id', args: ['mark-context-consumed', 'abc', 'developer'], code: 'VALIDATION', text: "package_id must be an integer, got 'abc'" },
  { label: 'fractional package id', args: ['save-consumption', S, GROUP, 'developer', '0', '1.5'], code: 'VALIDATION', text: "package_id must be an integer, got '1.5'" },
  { label: 'non-integer iteration', args: ['save-consumption', S, GROUP, 'developer', 'first', '1'], code: 'VALIDATION', text: "iteration must be an integer, got 'first'" },
  { label: 'non-integer limit (get-context-packages)', args: ['get-context-packages', S, GROUP, 'developer', 'x'], code: 'VALIDATION', text: "limit must be an integer, got 'x'" },
  { label: 'non-integer limit (list-sessions)', args: ['list-sessions', 'ten'], code: 'VALIDATION', text: "limit must be an integer, got 'ten'" },
  { label: 'non-integer --limit (get-reasoning)', args: ['get-reasoning', S, '--limit', '5x'], code: 'VALIDATION', text: "--limit must be an integer, got '5x'" },
  { label: 'non-integer --limit (get-strategies)', args: ['get-strategies', 'proj1', '--limit', '1e3'], code: 'VALIDATION', text: "--limit must be an integer, got '1e3'" },
  { label: 'non-integer --limit (get-error-patterns)', args: ['get-error-patterns', 'proj1', '--limit', 'all'], code: 'VALIDATION', text: '--limit must be an integer' },
  { label: 'non-numeric --min_confidence', args: ['get-error-patterns', 'proj1', '--min_confidence', 'high'], code: 'VALIDATION', text: '--min_confidence must be a number' },
  { label: 'non-integer increment', args: ['update-strategy-helpfulness', 'proj1_general_x', '1.5'], code: 'VALIDATION', text: "increment must be an integer, got '1.5'" },
  { label: 'non-integer --iteration (save-reasoning)', args: ['save-reasoning', S, GROUP, 'developer', 'understanding', 'x', '--iteration', 'two'], code: 'VALIDATION', text: "--iteration must be an integer, got 'two'" },
  { label: 'limit 0', args: ['get-context-packages', S, GROUP, 'developer', '0'], code: 'VALIDATION', text: 'limit must be between 1 and 50 (got 0)' },
  { label: 'limit 51', args: ['get-context-packages', S, GROUP, 'developer', '51'], code: 'VALIDATION', text: 'limit must be between 1 and 50 (got 51)' },
  { label: 'negative iteration (mark-context-consumed)', args: ['mark-context-consumed', '1', 'developer', '-1'], code: 'VALIDATION', text: 'iteration must be >= 0, got -1' },
  { label: 'negative iteration (save-consumption)', args: ['save-consumption', S, GROUP, 'developer', '-1', '1'], code: 'VALIDATION', text: 'iteration must be >= 0, got -1' },
  { label: 'negative --iteration (get-context-packages)', args: ['get-context-packages', S, GROUP, 'developer', '3', '--iteration', '-2'], code: 'VALIDATION', text: '--iteration must be >= 0, got -2' },

  // --- SQL fragments in ids
  { label: 'SQL in package id', args: ['mark-context-consumed', '1; DROP TABLE sessions', 'developer'], code: 'VALIDATION', text: "package_id must be an integer, got '1; DROP TABLE sessions'" },
  { label: 'SQL in package id (save-consumption)', args: ['save-consumption', S, GROUP, 'developer', '0', '1 OR 1=1'], code: 'VALIDATION', text: "package_id must be an integer, got '1 OR 1=1'" },
  { label: 'SQL in group id (read)', args: ['get-context-packages', S, "' OR 1=1 --", 'developer'], code: 'VALIDATION', text: 'group_id must be alphanumeric with underscores/hyphens only' },
  { label: 'SQL in group id (save-context-package)', args: savePackage({ 1: 'grp1; DROP TABLE sessions' }), code: 'VALIDATION', text: 'group_id must be alphanumeric with underscores/hyphens only' },
  { label: 'SQL in task group id', args: ['create-task-group', "x' OR 1=1 --", S, 'Name'], code: 'VALIDATION', text: 'group_id must be alphanumeric with underscores/hyphens only' },
  { label: 'SQL in --group_id (get-reasoning)', args: ['get-reasoning', S, '--group_id', "grp1' OR '1'='1"], code: 'VALIDATION', text: 'group_id must be alphanumeric with underscores/hyphens only' },
  { label: 'SQL in package id list', args: ['update-context-references', GROUP, S, '[1); DROP TABLE sessions; --]'], code: 'VALIDATION', text: 'Invalid package_ids argument: ' },
  { label: 'reserved task group id', args: ['create-task-group', 'global', S, 'Name'], code: 'VALIDATION', text: "'global' is a reserved identifier and cannot be used as a task group ID" },
  { label: 'global group for save-consumption', args: ['save-consumption', S, 'GLOBAL', 'developer', '0', '1'], code: 'VALIDATION', text: "group_id cannot be 'global' for this operation (must be group-specific)" },
  { label: 'blank session id', args: ['create-session', '  ', 'simple', 'req'], code: 'VALIDATION', text: 'session_id cannot be empty' },
  { label: 'blank content', args: ['save-reasoning', S, GROUP, 'developer', 'understanding', '   '], code: 'VALIDATION', text: 'content cannot be empty' },

  // --- path traversal in file_path (F15)
  { label: 'file_path ../ into a sibling session', args: savePackage({ 3: `bazinga/artifacts/${S}/../sess_B/a.md` }), code: 'VALIDATION', text: `Invalid file_path: must be within bazinga/artifacts/${S}. Got: bazinga/artifacts/${S}/../sess_B/a.md` },
  { label: 'file_path ../../ out of the project', args: savePackage({ 3: '../../etc/passwd' }), code: 'VALIDATION', text: `Invalid file_path: must be within bazinga/artifacts/${S}. Got: ../../etc/passwd` },
  { label: 'file_path absolute /etc/passwd', args: savePackage({ 3: '/etc/passwd' }), code: 'VALIDATION', text: `Invalid file_path: must be within bazinga/artifacts/${S}. Got: /etc/passwd` },
  { label: 'file_path = the artifacts dir itself', args: savePackage({ 3: `bazinga/artifacts/${S}` }), code: 'VALIDATION', text: `Invalid file_path: must be within bazinga/artifacts/${S}. Got: bazinga/artifacts/${S}` },
  { label: 'file_path = the artifacts dir with /.', args: savePackage({ 3: `bazinga/artifacts/${S}/.` }), code: 'VALIDATION', text: `Invalid file_path: must be within bazinga/artifacts/${S}. Got: bazinga/artifacts/${S}/.` },
  { label: 'file_path through a symlinked dir pointing outside', args: savePackage({ 3: `bazinga/artifacts/${S}/escape/secret.md` }), code: 'VALIDATION', text: `Invalid file_path: must be within bazinga/artifacts/${S}. Got: bazinga/artifacts/${S}/escape/secret.md` },
  { label: 'file_path is a symlink to /etc/passwd', args: savePackage({ 3: `bazinga/artifacts/${S}/passwd.md` }), code: 'VALIDATION', text: `Invalid file_path: must be within bazinga/artifacts/${S}. Got: bazinga/artifacts/${S}/passwd.md` },
  { label: 'file_path is a directory', args: savePackage({ 3: `bazinga/artifacts/${S}/subdir` }), code: 'VALIDATION', text: `Invalid file_path: not a regular file: bazinga/artifacts/${S}/subdir` },
  { label: 'session id .. as artifact segment', args: savePackage({ 0: '..', 3: 'bazinga/artifacts/../x.md' }), code: 'VALIDATION', text: 'Invalid session_id for artifact path: ..' },
  { label: 'session id with a slash', args: savePackage({ 0: `${S}/../x`, 3: `bazinga/artifacts/${S}/a.md` }), code: 'VALIDATION', text: `Invalid session_id for artifact path: ${S}/../x` },

  // --- malformed JSON
  { label: 'consumers_json unparsable', args: savePackage({ 5: '[developer' }), code: 'VALIDATION', text: 'Invalid consumers_json argument: ' },
  { label: 'consumers_json not an array', args: savePackage({ 5: '"developer"' }), code: 'VALIDATION', text: 'Invalid consumers_json argument: consumers_json must be a JSON array of strings' },
  { label: 'consumers_json empty item', args: savePackage({ 5: '[""]' }), code: 'VALIDATION', text: 'Invalid consumers_json argument: All consumer elements must be non-empty strings' },
  { label: 'metadata unparsable', args: ['create-session', 'sess_B', 'simple', 'req', '--metadata', '{"project_id":'], code: 'VALIDATION', text: 'metadata must be a JSON object' },
  { label: 'metadata not an object', args: ['create-session', 'sess_B', 'simple', 'req', '--metadata', '["acme"]'], code: 'VALIDATION', text: 'metadata must be a JSON object' },
  { label: 'references unparsable', args: ['save-reasoning', S, GROUP, 'developer', 'understanding', 'x', '--references', '[oops'], code: 'VALIDATION', text: 'Invalid JSON for --references: ' },
  { label: 'references not an array', args: ['save-reasoning', S, GROUP, 'developer', 'understanding', 'x', '--references', '{"a":1}'], code: 'VALIDATION', text: 'references must be a JSON array' },
  { label: 'references item not a string', args: ['save-reasoning', S, GROUP, 'developer', 'understanding', 'x', '--references', '["a", 3]'], code: 'VALIDATION', text: 'references[1] must be a string, got int' },
  { label: 'specializations unparsable', args: ['create-task-group', 'grp2', S, 'Name', '--specializations', '[bad'], code: 'VALIDATION', text: 'Invalid JSON for --specializations: ' },
  { label: 'specializations not an array', args: ['create-task-group', 'grp2', S, 'Name', '--specializations', '{"a":1}'], code: 'VALIDATION', text: '--specializations must be a JSON array' },
  { label: 'specialization path traversal', args: ['create-task-group', 'grp2', S, 'Name', '--specializations', '["../../etc/passwd"]'], code: 'VALIDATION', text: 'Invalid specialization path: Path traversal not allowed: ../../etc/passwd' },
  { label: 'context_hints unparsable', args: ['save-error-pattern', 'proj1', 'E', 'msg', 'fix', '--context_hints', '{'], code: 'VALIDATION', text: 'Invalid JSON for --context_hints: ' },
  { label: 'context_hints not an array', args: ['save-error-pattern', 'proj1', 'E', 'msg', 'fix', '--context_hints', '"tsconfig"'], code: 'VALIDATION', text: 'Invalid JSON for --context_hints: context_hints must be a JSON array' },
  { label: 'context_hints non-string item', args: ['save-error-pattern', 'proj1', 'E', 'msg', 'fix', '--context_hints', '[1]'], code: 'VALIDATION', text: 'Invalid JSON for --context_hints: context_hints must be a JSON array of strings' },
  { label: 'stack_pattern unparsable', args: ['save-error-pattern', 'proj1', 'E', 'msg', 'fix', '--stack_pattern', 'nope'], code: 'VALIDATION', text: 'Invalid JSON for --stack_pattern: ' },
  { label: 'params unparsable', args: ['query', 'SELECT ?', '--params', '[1'], code: 'VALIDATION', text: '--params must be a JSON array of strings, numbers, booleans or null' },
  { label: 'params with an object', args: ['query', 'SELECT ?', '--params', '[{"a":1}]'], code: 'VALIDATION', text: '--params must be a JSON array of strings, numbers, booleans or null' },
  { label: 'package ids with a boolean', args: ['update-context-references', GROUP, S, '[true]'], code: 'VALIDATION', text: 'Invalid package_ids argument: package_ids must be a JSON array of integers' },
  { label: 'missing --content-file in the temp folder', args: ['save-reasoning', S, GROUP, 'developer', 'understanding', '--content-file', '/tmp/no/such/file.txt'], code: 'VALIDATION', text: "Could not read content file '/tmp/no/such/file.txt' (/tmp/no/such/file.txt does not exist)" },
  { label: '--content-file outside the project and the temp folder (refused by its name, whether it exists or not)', args: ['save-reasoning', S, GROUP, 'developer', 'understanding', '--content-file', '/no/such/file.txt'], code: 'REFUSED', text: '--content-file /no/such/file.txt lies outside the project root and the temp folder' },

  // --- oversized text
  { label: 'group id of 65 chars (save-context-package)', args: savePackage({ 1: LONG_GROUP }), code: 'VALIDATION', text: 'group_id too long (max 64 chars, got 65)' },
  { label: 'group id of 65 chars (get-context-packages)', args: ['get-context-packages', S, LONG_GROUP, 'developer'], code: 'VALIDATION', text: 'group_id too long (max 64 chars, got 65)' },
  { label: 'group id of 65 chars (save-reasoning)', args: ['save-reasoning', S, LONG_GROUP, 'developer', 'understanding', 'x'], code: 'VALIDATION', text: 'group_id too long (max 64 chars, got 65)' },
  { label: 'task group id of 65 chars', args: ['create-task-group', LONG_GROUP, S, 'Name'], code: 'VALIDATION', text: 'group_id too long (max 64 chars, got 65)' },

  // --- well-formed calls addressing missing rows: the write is refused and nothing is committed
  { label: 'get-session unknown id', args: ['get-session', 'nosuch'], code: 'NOT_FOUND', text: 'Session not found: nosuch' },
  { label: 'update-session-status unknown id', args: ['update-session-status', 'nosuch', 'failed'], code: 'NOT_FOUND', text: 'Session not found: nosuch' },
  { label: 'save-reasoning unknown session', args: ['save-reasoning', 'nosess', GROUP, 'developer', 'understanding', 'x'], code: 'NOT_FOUND', text: 'Session not found: nosess' },
  { label: 'mark-context-consumed unknown package', args: ['mark-context-consumed', '999', 'developer'], code: 'NOT_FOUND', text: 'Context package not found: 999' },
  { label: 'mark-context-consumed by a non-consumer', args: ['mark-context-consumed', '1', 'tech_lead'], code: 'NOT_CONSUMER', text: "Agent 'tech_lead' was not designated as consumer for package 1" },
];

describe('bazinga-db: malformed invocations change nothing', () => {
  let project: Project;
  let before: Buffer;

  beforeAll(() => {
    project = makeProject('ca-bad-input-');
    const seed = (args: string[]) => {
      const r = cli(project, args);
      expect(r.code, r.stderr).toBe(0);
      return r;
    };
    seed(['create-session', S, 'simple', 'Seed requirements', '--metadata', '{"project_id":"proj1"}']);
    seed(['create-task-group', GROUP, S, 'Group one']);
    writeArtifact(project, S, 'a.md', '# research\n');
    const pkg = seed(savePackage({}));
    expect(pkg.json.package_id).toBe(1);
    seed(['save-reasoning', S, GROUP, 'developer', 'understanding', 'seed reasoning']);
    seed(['save-error-pattern', 'proj1', 'E', 'msg', 'fix']);
    seed(['save-strategy', 'proj1', 'general', 'Use small PRs']);

    // Symlinks inside the session's artifacts dir that lead outside it.
    const artifactsDir = path.join(project.root, 'bazinga', 'artifacts', S);
    const outside = path.join(project.root, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'secret.md'), 'secret\n');
    fs.symlinkSync(outside, path.join(artifactsDir, 'escape'));
    fs.symlinkSync('/etc/passwd', path.join(artifactsDir, 'passwd.md'));
    fs.mkdirSync(path.join(artifactsDir, 'subdir'));

    // The CLI closed its connection, which checkpointed the WAL into the main file.
    expect(fs.existsSync(`${project.dbPath}-wal`)).toBe(false);
    before = fs.readFileSync(project.dbPath);
  });

  afterAll(() => project?.cleanup());

  it('has a table of at least 35 malformed invocations', () => {
    expect(rows.length).toBeGreaterThanOrEqual(35);
    expect(new Set(rows.map((r) => r.label)).size).toBe(rows.length);
  });

  it.each(rows)('$label → $code', ({ args, code, text }) => {
    const r = cli(project, args);
    expectCleanFailure(r, code, text);
    expect(fs.readFileSync(project.dbPath).equals(before)).toBe(true);
    // No write-ahead log or shared memory left beside it either: a read removes those it needed.
    expect(fs.existsSync(`${project.dbPath}-wal`)).toBe(false);
    expect(fs.existsSync(`${project.dbPath}-shm`)).toBe(false);
  });

  it('update-session-status errors carry valid_statuses', () => {
    const r = cli(project, ['update-session-status', S, 'paused']);
    expect(r.error.valid_statuses).toEqual(['active', 'completed', 'failed']);
    const u = cli(project, ['update-session-status', S]);
    expect(u.code).toBe(2);
    expect(u.error.valid_statuses).toEqual(['active', 'completed', 'failed']);
    expect(fs.readFileSync(project.dbPath).equals(before)).toBe(true);
  });

  it('a well-formed read afterwards still sees exactly the seeded rows', () => {
    const sessions = cli(project, ['list-sessions']);
    expect(sessions.code).toBe(0);
    expect(sessions.json.map((s: { session_id: string }) => s.session_id)).toEqual([S]);
    const packages = cli(project, ['get-context-packages', S, GROUP, 'developer', '50', '--with-total']);
    expect(packages.json.total_available).toBe(1);
    const groups = cli(project, ['get-task-groups', S]);
    expect(groups.json.map((g: { id: string }) => g.id)).toEqual([GROUP]);
    expect(fs.readFileSync(project.dbPath).equals(before)).toBe(true);
  });
});

describe('bazinga-db: a malformed call never creates the database', () => {
  const malformed: string[][] = [
    ['bogus-cmd'],
    [],
    ['--bogus', 'list-sessions'],
    ['create-session', 'sess_B', 'weird', 'req'],
    ['get-context-packages', S, GROUP, 'developer', '51'],
    ['list-sessions', 'ten'],
    ['save-context-package', S, GROUP, 'research', '/etc/passwd', 'developer', DEV, 'high', 'x'],
    ['save-reasoning', S, GROUP, 'developer', 'understanding', 'x', '--references', '[oops'],
    ['query', 'DELETE FROM sessions'],
    ['get-session'],
  ];

  it('leaves a non-existent --db path (and its missing parent dirs) absent', () => {
    const project = makeProject('ca-bad-nodb-');
    try {
      const dbPath = path.join(project.root, 'nested', 'deeper', 'bazinga.db');
      for (const args of malformed) {
        const r = runBazingaDbInProcess(['--quiet', '--db', dbPath, ...args]);
        expect(r.code, args.join(' ')).toBeGreaterThan(0);
        expect(r.stdout).toBe('');
        expect(r.error?.success).toBe(false);
        expect(fs.existsSync(dbPath)).toBe(false);
        expect(fs.existsSync(path.join(project.root, 'nested'))).toBe(false);
      }
    } finally {
      project.cleanup();
    }
  });

  it('leaves the default <root>/bazinga/bazinga.db absent', () => {
    const project = makeProject('ca-bad-nodb-');
    try {
      const listing = () => fs.readdirSync(path.join(project.root, 'bazinga')).sort();
      const initial = listing();
      for (const args of malformed) {
        const r = cli(project, args);
        expect(r.code, args.join(' ')).toBeGreaterThan(0);
        expect(r.stdout).toBe('');
        expect(fs.existsSync(project.dbPath)).toBe(false);
        expect(listing()).toEqual(initial);
      }
      // Control: a well-formed write does create it (so the checks above could fail); a read never does.
      expect(cli(project, ['list-sessions']).error?.code).toBe('NOT_FOUND');
      expect(fs.existsSync(project.dbPath)).toBe(false);
      expect(cli(project, ['create-session', 'sess_A', 'simple', 'req']).code).toBe(0);
      expect(fs.existsSync(project.dbPath)).toBe(true);
    } finally {
      project.cleanup();
    }
  });
});
