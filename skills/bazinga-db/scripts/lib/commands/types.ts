/** What every bazinga-db command is: its synopsis, its flags, and a `run` that returns the JSON to print. */
import type { DB } from '../statements.ts';
import type { FlagKind, ParsedArgs } from '../args.ts';
import type { ResolvedPaths } from '../paths.ts';
import type { Redactor } from '../redact.ts';
import { usage } from '../errors.ts';
import type { ChildRun } from '../relaunch.ts';

export interface CommandContext {
  /** Project root and database path (throws NO_PROJECT_ROOT). Never opens the database. */
  paths(): ResolvedPaths;
  /** The read-write connection, opened on first use: call it only after all arguments are checked. */
  db(): DB;
  /** A read-only connection for `query`. */
  readOnlyDb(): DB;
  /** A fresh redactor under the project's redaction policy: every text a command stores goes through one. */
  redactor(): Redactor;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** A warning line on stderr, also under --quiet (what a caller must know: a result was cut short). */
  warn: (line: string) => void;
  /** This invocation run again in a child process (relaunch.ts), stopped after timeoutMs. */
  again(opts: { timeoutMs: number }): ChildRun;
  /** This invocation started again as a detached, low-priority process without `drop` among its arguments; its process id. */
  detach(drop: string): number;
}

/** What a command returns when a child process printed its result: relayed as it is. */
export class Relayed {
  constructor(readonly run: ChildRun & { code: number }) {}
}

export interface Command {
  name: string;
  synopsis: string;
  flags: Record<string, FlagKind>;
  maxPositionals: number;
  /** Writes text the full-text index holds: the index is brought up to date after it runs. */
  indexes?: true;
  /** The text to print instead of the result's JSON (undefined: the JSON), already redacted by the CLI. */
  print?: (result: unknown) => string | undefined;
  run(args: ParsedArgs, ctx: CommandContext): unknown;
}

/** Wording of the tokenizer's problems, per command (defaults follow the original's common texts). */
export interface ProblemWording {
  unknownFlag?: (token: string) => string;
  unexpected?: (token: string) => string;
  missingValue?: (flag: string) => string;
}

/** Throws the tokenizer's problem, if any, as a USAGE error in the command's wording. */
export function rejectProblem(args: ParsedArgs, wording: ProblemWording = {}): void {
  const p = args.problem;
  if (!p) return;
  switch (p.kind) {
    case 'unknown-flag':
      throw usage((wording.unknownFlag ?? ((t) => `Unknown flag '${t}'`))(p.token));
    case 'unexpected':
      throw usage((wording.unexpected ?? ((t) => `Unexpected argument '${t}'`))(p.token));
    case 'missing-value':
      throw usage((wording.missingValue ?? ((f) => `Flag '${f}' requires a value`))(p.token));
  }
}

/** Throws USAGE `message` unless the number of positionals is within [min, max]. */
export function requirePositionals(args: ParsedArgs, min: number, message: string, max = Infinity): void {
  if (args.positionals.length < min || args.positionals.length > max) throw usage(message);
}

/** The i-th positional (present by the caller's earlier count check). */
export function pos(args: ParsedArgs, i: number): string {
  return args.positionals[i] as string;
}
