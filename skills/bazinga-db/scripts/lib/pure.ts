/**
 * bazinga-db's pure helpers: errors, vocabulary, redaction, text shortening, config defaults.
 * Nothing here reaches the database or its driver, so code that must not (the assembler's core,
 * core/*.ts, with config.ts and contract.ts it reads) imports this module, never index.ts, which
 * re-exports it beside the database (test/architecture.test.ts holds that).
 */
export { BazingaError, ERROR_CODES, invalid, notFound, printError, usage } from './errors.ts';
export { describeRefusal, isInsideAny, jsonErrorAt, jsonErrorLocation, readRegularFile, realDir, type FileRefusal } from './files.ts';
export { DEFAULT_FILE_LIMITS, DEFAULT_MEMORY_SETTINGS, MAX_CONFIG_BYTES, readConfigFile, redactionPolicy } from './settings.ts';
export { parseInteger, parseLimit } from './validate.ts';
export { storedText } from './storedText.ts';
export { PACKAGE_TYPES, PRIORITIES, PRIORITY_ORDER, SPAWNED_AGENTS, type Priority, type SpawnedAgent } from './enums.ts';
export { normaliseErrorMessage } from './hashing.ts';
export type { ErrorPatternRow } from './patternRow.ts';
export {
  DEFAULT_POLICY,
  redactJson,
  redactJsonValue,
  redactionMemo,
  redactText,
  settledKey,
  type RedactionMemo,
  type RedactionMode,
  type RedactionPolicy,
  type SettledTexts,
  type TextRedaction,
} from './redact.ts';
export { DEFAULT_REASONING_CONTENT_CHARS, markStoredCut, MIN_SHORTEN_CHARS, oneLine, OMISSION_MARKER, reasoningLine, shorten, shortenStored, shownTail, STORED_SUMMARY_CHARS, truncateAtWord } from './shown.ts';
export { codePointCount } from './textScan.ts';
export { pathsInText } from './searchText.ts';
export { DEFAULT_ARTIFACT_INDEX_BYTES, DEFAULT_INDEX_BUDGET_MS, MAX_ARTIFACT_INDEX_BYTES, MAX_INDEX_BUDGET_MS } from './searchLimits.ts';
