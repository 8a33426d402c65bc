/**
 * The commands Claude Code runs for the prompt hook: registered by `install-skills --wire` in a
 * project's `.claude/settings.json`, and by the plugin's `hooks/hooks.json`. Claude Code matches a
 * hook on the tool's name only, so the hook runs after every Bash call of the session; the shell
 * reads the event and starts Node only when it names the prompt builder. Any other Bash call costs
 * a shell and a `cat`, about a millisecond, instead of a Node start.
 */

/** The builder's script, relative to the project root (the plugin's hook acts only where it is). */
export const PROMPT_BUILDER = '.claude/skills/prompt-builder/scripts/prompt_builder.py';

/** The command that runs `launcher`'s prompt-hook on the event when the event names the prompt builder. */
function guarded(launcher: string, args = ''): string {
  return `i=$(cat); case "$i" in *prompt_builder.py*) printf '%s' "$i" | node ${launcher} prompt-hook${args};; esac`;
}

/** Registered in `.claude/settings.json` by `install-skills --wire` (Claude Code sets CLAUDE_PROJECT_DIR for hooks). */
export const WIRED_HOOK_COMMAND = guarded('"$CLAUDE_PROJECT_DIR/.claude/skills/context-assembler/bin/context-assembler.cjs"');

/** The plugin's (hooks/hooks.json): `--plugin` makes it step aside where the project's own wiring serves the spawns. */
export const PLUGIN_HOOK_COMMAND = guarded('"${CLAUDE_PLUGIN_ROOT}/skills/context-assembler/bin/context-assembler.cjs"', ' --plugin');

/** What an earlier version registered with --wire (Node on every Bash call); --wire replaces it, --unwire removes it. */
export const EARLIER_WIRED_HOOK_COMMANDS: readonly string[] = [
  'node "$CLAUDE_PROJECT_DIR/.claude/skills/context-assembler/bin/context-assembler.cjs" prompt-hook',
];

/** Whether a hook command is this product's wired prompt hook (this version's or an earlier one's). */
export function isWiredHookCommand(command: unknown): boolean {
  return command === WIRED_HOOK_COMMAND || EARLIER_WIRED_HOOK_COMMANDS.includes(command as string);
}

/**
 * Claude Code's `if` rule on the hook (permission-rule syntax): the client starts no hook process
 * for a Bash call that does not match, so most calls cost nothing. Clients without `if` run the
 * command, and its shell test decides.
 */
export const BUILDER_IF = 'Bash(*prompt_builder.py*)';
