/**
 * The one error type of both skills. Every failure a caller can act on is a BazingaError with a
 * declared code (references/errors.md lists them); only the shells catch it, and they print it with
 * printError as the `{"success":false,"error":…,"code":…}` line on stderr.
 */

export const ERROR_CODES = [
  'USAGE',
  'VALIDATION',
  'NOT_FOUND',
  'NOT_CONSUMER',
  'CONSTRAINT',
  'SQL_ERROR',
  'BUSY',
  'SCHEMA',
  'NO_PROJECT_ROOT',
  'INTEGRITY',
  'DB_ERROR',
  'REFUSED',
  'CONFIG',
  'DEPENDENCY',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class BazingaError extends Error {
  readonly code: ErrorCode;
  /** Extra keys merged into the JSON error object (for example `valid_statuses`). */
  readonly extra: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, extra: Record<string, unknown> = {}) {
    super(message);
    this.name = 'BazingaError';
    this.code = code;
    this.extra = extra;
  }

  /** 2 for usage errors, 1 for everything else. */
  get exitCode(): number {
    return this.code === 'USAGE' ? 2 : 1;
  }

  toJSON(): Record<string, unknown> {
    return { success: false, error: this.message, code: this.code, ...this.extra };
  }
}

export const usage = (message: string, extra?: Record<string, unknown>) =>
  new BazingaError('USAGE', message, extra);
export const invalid = (message: string, extra?: Record<string, unknown>) =>
  new BazingaError('VALIDATION', message, extra);
export const notFound = (message: string) => new BazingaError('NOT_FOUND', message);

/**
 * Prints a failure as the one JSON line both skills use and returns its exit code (`exit`, or
 * the error's own: 2 for USAGE, 1 otherwise). `present` may rewrite the object first (redaction).
 */
export function printError(
  write: (line: string) => void,
  err: unknown,
  options: { exit?: number; present?: (json: Record<string, unknown>) => unknown } = {},
): number {
  const e = toBazingaError(err);
  write(JSON.stringify(options.present ? options.present(e.toJSON()) : e.toJSON()) + '\n');
  return options.exit ?? e.exitCode;
}

interface SqliteLikeError {
  code?: unknown;
  message?: unknown;
}

/** True when a better-sqlite3 error means another connection holds the lock. */
export function isBusyError(err: unknown): boolean {
  const code = (err as SqliteLikeError | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * Maps any error thrown below the shell to a BazingaError: SQLite busy → BUSY (message keeps
 * "database is locked", which callers' retry wrappers grep for), constraint failures →
 * CONSTRAINT, other SQLite or I/O errors → DB_ERROR.
 */
export function toBazingaError(err: unknown): BazingaError {
  if (err instanceof BazingaError) return err;
  const e = err as SqliteLikeError | null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const code = typeof e?.code === 'string' ? e.code : '';
  if (isBusyError(err)) {
    return new BazingaError('BUSY', message.includes('database is locked') ? message : `database is locked (${message})`);
  }
  if (code.startsWith('SQLITE_CONSTRAINT')) return new BazingaError('CONSTRAINT', message);
  return new BazingaError('DB_ERROR', message);
}
