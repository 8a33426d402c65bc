/** The command table of bazinga-db: every supported command, in help order. */
import { learningCommands } from './learning.ts';
import { memoryCommands } from './memory.ts';
import { packageCommands } from './packages.ts';
import { sessionCommands } from './sessions.ts';
import type { Command } from './types.ts';
import { utilityCommands } from './utilities.ts';

export const COMMANDS: readonly Command[] = [...sessionCommands, ...packageCommands, ...learningCommands, ...memoryCommands, ...utilityCommands];

export const COMMANDS_BY_NAME: ReadonlyMap<string, Command> = new Map(COMMANDS.map((c) => [c.name, c]));

/** The original's commands this layer deliberately does not implement. */
export const UNSUPPORTED_COMMANDS: ReadonlySet<string> = new Set([
  'update-session', 'complete-session', 'log-interaction', 'stream-logs', 'save-state', 'get-state',
  'dashboard-snapshot', 'log-tokens', 'token-summary', 'save-skill-output', 'get-skill-output',
  'get-skill-output-all', 'check-skill-evidence', 'update-task-group', 'save-development-plan',
  'get-development-plan', 'update-plan-progress', 'save-success-criteria', 'get-success-criteria',
  'update-success-criterion', 'reasoning-timeline', 'check-mandatory-phases', 'recover-db',
  'diagnose-group-ids', 'save-event', 'get-events', 'save-investigation-iteration',
]);

export type { Command, CommandContext } from './types.ts';
