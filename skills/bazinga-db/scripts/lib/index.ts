/**
 * bazinga-db as a library: what another skill (context-assembler), the benchmarks and the tests
 * may use. The modules behind it are internal; a change to them that keeps this surface needs no
 * change in the assembler.
 */

// The pure helpers (errors, vocabulary, redaction, text shortening, config defaults): pure.ts, for
// code that must not reach the database.
export * from './pure.ts';

// Opening a database, transactions.
export { inspectSchema, nativeBindingError, openDatabase, openReadOnly, useDriver, writeTransaction, type DB } from './db.ts';
export { schemaStepsState, type SchemaStepsState } from './migrate.ts';
export { describeRow, type FailedRow, type StepFailure } from './schemaSteps.ts';
export { resolvePaths } from './paths.ts';
export { artifactTail, locateArtifact } from './artifacts.ts';
// The one atomic file write (plain JavaScript: the launchers and the plugin's hooks use it too).
export { writeFileAtomically } from '../../bin/writeFile.cjs';
// A file the product writes for a person (a report): no link inside the project followed.
export { writeFileInProject } from './projectWrite.ts';

// Redaction of rows other tools wrote.
export { redactExistingRows } from './repo/redactExisting.ts';

// Reading and marking context.
export {
  countRequestPackages,
  findPackage,
  findLatestSummary,
  hasConsumer,
  isConsumedAtIteration,
  listBucketHeads,
  listGroupFailures,
  listEligibleByIds,
  listConsumedPackages,
  listPackagesNaming,
  searchRequestPackages,
  type CandidatePackage,
  type EligibilityQuery,
  type PackageRow,
  type SearchedPackage,
} from './repo/contextPackages.ts';
export { claimPackages, markPackageConsumed, unmarkPackageConsumed, type Claim } from './consume.ts';
export { listReasoningByIds, listRecentReasoningOf, type ReasoningRow } from './repo/reasoning.ts';
export { compareShownOrder, iterateErrorPatterns, listErrorPatterns } from './repo/errorPatterns.ts';
export { listStrategies } from './repo/strategies.ts';
export { countSessions, findSession, getProjectId, getProjectScope, listRecentSessionIds, projectScope, sessionExists, type ProjectScope } from './repo/sessions.ts';
export { compareRepresentatives, mergeFaults, representativeOf, rowsOfFaults, withFaultKeys, type FaultedPattern, type MergedFault } from './patternFaults.ts';
export { learntRows, withLearning } from './repo/patternLearning.ts';
export { rowKey } from './repo/patternFaults.ts';
export { groupRevisionCount, listTaskGroups } from './repo/taskGroups.ts';
export { listQuotableTexts, readSpawnState, type SpawnState } from './repo/spawnState.ts';
export { markRunComplete } from './runComplete.ts';
export { askIndexerToYield, indexerRunning, withdrawYieldRequests } from './indexLock.ts';
export { findTokenCount, saveTokenCounts } from './repo/tokenCounts.ts';
export { isSettledText, saveSettledTexts } from './repo/redactionSettled.ts';

// Token counting (shared: bazinga-db counts stored text when it writes it).
export { MAX_RUN, countCl100k, scaleTokens, textHash, tokenizerLoaded, tokenizerSource } from './tokens.ts';

// Full-text search.
export { planScopeMatch, planTextQuery, type QueryLimits, type TextMatch, type TextQuery } from './repo/textQuery.ts';
export {
  highlightTexts,
  indexedArtifactText,
  packagePathText,
  listPackagePaths,
  scorePackage,
  searchIndexBehind,
  searchReasoning,
  syncSearchIndex,
} from './repo/searchIndex.ts';
export { DEFAULT_SEARCH_WEIGHTS, memoryLine, searchScore, type SearchWeights } from './memory.ts';
export { hasMemoryTables, parseMemory, selectMemories } from './repo/memories.ts';
export { monotonicMs } from './clock.ts';
export { deleteAssembly, findAssemblyByKey, hasAssemblyRecord, insertAssembly, listAssemblies, type AssemblyRecord, type AssemblyRow } from './repo/assemblies.ts';
export { findReportSession, listItemRows, listLatestSessionIds, listReportGroups, listReportPackages, listScopePatterns, type ItemIds, type ItemRows, type ReportGroupRow, type ReportPackageRow } from './repo/report.ts';
export { listGroupReviews, listPackageProducers, listSessionFailures, type ReviewFailureRow, type GroupReviewRow } from './repo/reviews.ts';

// Writing rows directly (the benchmarks' and the tests' generators: a database of 100,000 rows is
// made in seconds, not through 100,000 commands). The commands stay the way the product writes.
export { insertConsumer, insertPackage } from './repo/contextPackages.ts';
export { insertErrorPattern, setErrorConfidence } from './repo/errorPatterns.ts';
export { insertReasoning } from './repo/reasoning.ts';
export { insertSession } from './repo/sessions.ts';
export { upsertStrategy } from './repo/strategies.ts';
export { capturedPatternOf, consumptionScopeId, errorPatternHash, errorPatternOf, failureFaultKeys, faultKeyOf, faultKeyOfRow, type FaultKey } from './hashing.ts';
export { faultSignature } from './faultSignature.ts';
export { captureBeforeSpawn, captureOutcomes, failureTextOf, settleKnownVerdicts, type CaptureReport } from './capture.ts';
export { capturesOfFault, fixTallies, listCaptures, type CaptureRow } from './repo/captures.ts';
export { listVerdicts, type ShownVerdict } from './repo/outcomes.ts';
export { pyJsonDumps } from './pyjson.ts';
export { REASONING_PHASES } from './enums.ts';
export { redact } from './redact.ts';
export { findNewestCompletion, listBuilderErrorPatterns, listBuilderPackages, listBuilderReasoning } from './repo/builderSection.ts';
