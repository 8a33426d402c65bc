/** The schema of a writer's file: its tables, its version, the v19 schema made in a missing or empty file, this layer's `ca_*` objects added (never anything removed; BAZINGA's rows an earlier release re-keyed given their keys back: patternRestore.ts), each change a schema step that can fail without failing the open (schemaSteps.ts), the checks that refuse a file that is no BAZINGA database. Part of opening a database (db.ts). */
import { BazingaError } from './errors.ts';
import { resetSearchIndex, upgradePackageIndex } from './repo/searchIndex.ts';
import { resignPatternKeys, restoreNotice, restorePatternKeys } from './patternRestore.ts';
import { renameCaptureColumn } from './repo/captures.ts';
import { clearSchemaFailures, findSchemaFailures, recordSchemaFailures, type RecordedFailures } from './repo/schemaFailures.ts';
import { failureNotice, runStep, type StepFailure } from './schemaSteps.ts';
import { ASSEMBLY_ADDED_COLUMNS, CAPTURE_ADDED_COLUMNS, CA_DDL, OUTCOMES_SHAPE_COLUMN, CA_OBJECTS, CA_SCHEMA_VERSION, CORE_TABLES, MEMORY_ADDED_COLUMNS, SCHEMA_VERSION, SCHEMA_VERSION_DESCRIPTION, SEARCH_TABLES, V19_DDL, searchDdl } from './schema.ts';
import { SEARCH_TOKENIZER } from './searchText.ts';
import { hasTable, stmt, writeTransaction, type DB } from './statements.ts';

export function tableNames(db: DB): Set<string> {
  const rows = stmt(db, "SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
  return new Set(rows.map((r) => r.name));
}

export function currentSchemaVersion(db: DB, tables: Set<string>): number {
  if (!tables.has('schema_version')) return 0;
  const row = stmt(db, 'SELECT version FROM schema_version ORDER BY version DESC LIMIT 1').get() as
    | { version: number }
    | undefined;
  return row ? Number(row.version) : 0;
}

export function createV19Schema(db: DB): boolean {
  return writeTransaction(db, () => {
    // Another process may have created it while we waited for the write lock.
    if (tableNames(db).has('sessions')) return false;
    for (const ddl of V19_DDL) db.exec(ddl);
    db.prepare('INSERT INTO schema_version (version, description) VALUES (?, ?)').run(
      SCHEMA_VERSION,
      SCHEMA_VERSION_DESCRIPTION,
    );
    return true;
  });
}

/** Whether this version's extension objects are all there (a file a later release extended counts: it is left as it is). */
export function extensionsCurrent(db: DB): boolean {
  // The original's migrations may drop indexes: every object is looked for.
  const present = db
    .prepare(`SELECT COUNT(*) AS n FROM sqlite_master WHERE name IN (${CA_OBJECTS.map(() => '?').join(', ')})`)
    .get(...CA_OBJECTS) as { n: number };
  if (present.n !== CA_OBJECTS.length) return false;
  return recordedExtensionsVersion(db) >= CA_SCHEMA_VERSION;
}

/** Where this layer's schema stands in a file (doctor's reading; a read). */
export interface SchemaStepsState {
  /** The version a writer recorded (`ca_schema`; 0: none did) and this release's. */
  recorded: number;
  wanted: number;
  /** This release's objects the file lacks. */
  missing: string[];
  /** The steps that failed at the last writer's open, when it recorded any (repo/schemaFailures.ts). */
  failed: RecordedFailures | undefined;
}

export function schemaStepsState(db: DB): SchemaStepsState {
  const present = new Set(
    (db.prepare(`SELECT name FROM sqlite_master WHERE name IN (${CA_OBJECTS.map(() => '?').join(', ')})`).all(...CA_OBJECTS) as { name: string }[]).map((r) => r.name),
  );
  return { recorded: recordedExtensionsVersion(db), wanted: CA_SCHEMA_VERSION, missing: CA_OBJECTS.filter((o) => !present.has(o)), failed: findSchemaFailures(db) };
}

/** The extension version a writer recorded in ca_meta (0 when none did). */
function recordedExtensionsVersion(db: DB): number {
  if (!hasTable(db, 'ca_meta')) return 0;
  const version = db.prepare("SELECT value FROM ca_meta WHERE key = 'ca_schema'").get() as { value: string } | undefined;
  return Number(version?.value) || 0;
}

/**
 * Makes the extension objects that are missing and brings this layer's own rows to this version
 * (the steps: references/schema-steps.md). Each step runs in a savepoint of its own
 * (schemaSteps.ts): one SQLite or this layer refuses is rolled back and returned, and the rest
 * goes on, so no row another tool wrote, no trigger and no odd object can make the open fail.
 * The version is recorded (and an earlier failure record removed) only when every step
 * succeeded; otherwise the failures are recorded for doctor (repo/schemaFailures.ts) and the next
 * process's writer tries again. In one transaction, or, with `between`, the tables and row steps
 * in one and then each index in its own, `between` called after each: building the indexes of a
 * large database takes seconds, and index-search runs it so that a spawn's writes are served
 * between two of them. A run cut short leaves objects missing and `ca_schema` unset, so the next
 * open makes the rest. Returns the steps that failed (none: the file is current).
 */
export function ensureExtensions(db: DB, between?: () => void, notice: (line: string) => void = () => {}): StepFailure[] {
  if (extensionsCurrent(db)) return [];
  const failures: StepFailure[] = [];
  const step = (name: string, fn: () => void) => runStep(db, failures, name, fn);
  const isIndex = (ddl: string) => /^CREATE INDEX/.test(ddl);
  const line = writeTransaction(db, () => {
    // What this layer's own tables say of patterns predates fault keys (v12) until a writer says otherwise.
    const before = recordedExtensionsVersion(db);
    // A search table made with another definition (an older tokenizer) is made again; one that has
    // to be (re)created starts empty, so the whole index and its watermarks start over.
    step('search tables redefined', () => {
      for (const t of staleSearchTables(db)) db.exec(`DROP TABLE IF EXISTS ${t}`);
    });
    const searchObjects = [...SEARCH_TABLES, 'ca_term_df', 'ca_package_paths', 'ca_meta'];
    const searchTables = db
      .prepare(`SELECT COUNT(*) AS n FROM sqlite_master WHERE name IN (${searchObjects.map(() => '?').join(', ')})`)
      .get(...searchObjects) as { n: number };
    // This layer's own tables made by an earlier definition gain the columns they lack, before
    // anything indexes them (ca_assemblies by v9; ca_memories by v6; ca_captures by an earlier v10
    // and, before v12, its pattern_hash named for what it holds).
    step('ca_assemblies columns', () => addMissingColumns(db, 'ca_assemblies', ASSEMBLY_ADDED_COLUMNS));
    step('ca_memories columns', () => addMissingColumns(db, 'ca_memories', MEMORY_ADDED_COLUMNS));
    step('ca_captures columns', () => {
      addMissingColumns(db, 'ca_captures', CAPTURE_ADDED_COLUMNS);
      renameCaptureColumn(db);
    });
    // ca_outcomes of an earlier shape: derived from the records, so made again and they settled anew.
    let outcomesRemade = false;
    if (hasTable(db, 'ca_outcomes') && !columnsOf(db, 'ca_outcomes').has(OUTCOMES_SHAPE_COLUMN)) {
      outcomesRemade = step('ca_outcomes reshaped', () => db.exec('DROP TABLE ca_outcomes'));
    }
    for (const ddl of CA_DDL) if (!between || !isIndex(ddl)) step(`create ${objectOf(ddl)}`, () => db.exec(ddl));
    if (outcomesRemade) step('records settled again', () => db.exec('UPDATE ca_assemblies SET settled = 0'));
    if (searchTables.n < searchObjects.length) step('search index reset', () => resetSearchIndex(db));
    // v15: a package's path column also holds the paths its artifact names: the packages indexed
    // again, once (its own mark, so a later step that fails does not bring it back).
    step('package index layout', () => upgradePackageIndex(db, before));
    // v12: rows an earlier release re-keyed get the original's keys back; every row its fault key
    // (idempotent; never fails on a row it cannot read: such a row is left as it is).
    const restored = restorePatternKeys(db, before < 12, failures);
    // v14: the keys an earlier signer stored signed again, and what names them renamed.
    if (before < 14) resignPatternKeys(db, failures);
    if (!between) settleVersion(db, failures);
    return restoreNotice(restored);
  });
  // Said once the transaction that made it committed.
  if (line !== undefined) notice(line);
  if (between) {
    for (const ddl of CA_DDL.filter(isIndex)) {
      writeTransaction(db, () => step(`create ${objectOf(ddl)}`, () => db.exec(ddl)));
      between();
    }
    writeTransaction(db, () => settleVersion(db, failures));
  }
  if (failures.length > 0) notice(failureNotice(failures));
  return failures;
}

/** The object a CA_DDL statement makes (its name). */
function objectOf(ddl: string): string {
  return /(?:TABLE|INDEX) IF NOT EXISTS (\w+)/.exec(ddl)?.[1] ?? ddl.slice(0, 40);
}

/**
 * After the steps: every one succeeded, the version is recorded and an earlier failure record
 * removed; else the failures are recorded (best effort: a ca_meta that refuses it leaves the
 * open's notice as the only word of them).
 */
function settleVersion(db: DB, failures: StepFailure[]): void {
  const current = () => {
    setSchemaVersion(db);
    clearSchemaFailures(db);
  };
  if (failures.length === 0 && runStep(db, failures, 'ca_schema version', current)) return;
  runStep(db, [], 'failure record', () => recordSchemaFailures(db, CA_SCHEMA_VERSION, failures));
}

function columnsOf(db: DB, table: string): Set<string> {
  return new Set((stmt(db, 'SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).map((c) => c.name));
}

/** Adds to `table`, when it exists, the columns (name, definition: constants, never input) it lacks. */
function addMissingColumns(db: DB, table: string, columns: readonly (readonly [string, string])[]): void {
  if (!hasTable(db, table)) return;
  const have = columnsOf(db, table);
  for (const [name, definition] of columns) if (!have.has(name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${definition}`);
}

/** Records this version in `ca_meta` (never lowering a later release's). */
function setSchemaVersion(db: DB): void {
  db.prepare(
    `INSERT INTO ca_meta (key, value) VALUES ('ca_schema', ?) ON CONFLICT(key) DO UPDATE
     SET value = MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)), updated_at = datetime('now')`,
  ).run(String(CA_SCHEMA_VERSION));
}

/** The search tables whose stored definition differs from this version's. */
export function staleSearchTables(db: DB): string[] {
  const expected = new Map(searchDdl(SEARCH_TOKENIZER).map((ddl) => [/EXISTS (\S+)/.exec(ddl)?.[1] ?? '', ddl.replace(' IF NOT EXISTS', '')]));
  const rows = db.prepare(`SELECT name, sql FROM sqlite_master WHERE name IN (${SEARCH_TABLES.map(() => '?').join(', ')})`).all(...SEARCH_TABLES) as {
    name: string;
    sql: string;
  }[];
  return rows.filter((r) => expected.get(r.name) !== r.sql).map((r) => r.name);
}

/** The schema version (max of schema_version, 0 when absent) and the core tables it lacks. */
export function inspectSchema(db: DB): { version: number; missingCoreTables: string[] } {
  const tables = tableNames(db);
  return { version: currentSchemaVersion(db, tables), missingCoreTables: CORE_TABLES.filter((t) => !tables.has(t)) };
}

export function checkSchema(db: DB, dbPath: string, notice: (line: string) => void): void {
  const tables = tableNames(db);
  if (!tables.has('sessions')) {
    throw new BazingaError('SCHEMA', `Not a BAZINGA database (table 'sessions' missing): ${dbPath}`);
  }
  const version = currentSchemaVersion(db, tables);
  if (version < SCHEMA_VERSION) {
    throw new BazingaError(
      'SCHEMA',
      `Database schema v${version} is older than v${SCHEMA_VERSION}; open it once with the original BAZINGA tool to migrate it`,
    );
  }
  const missing = CORE_TABLES.filter((t) => !tables.has(t));
  if (missing.length > 0) {
    throw new BazingaError('SCHEMA', `Database is missing core tables: ${missing.join(', ')}`);
  }
  if (version > SCHEMA_VERSION) {
    notice(`⚠ Database schema v${version} is newer than v${SCHEMA_VERSION}; continuing`);
  }
}
