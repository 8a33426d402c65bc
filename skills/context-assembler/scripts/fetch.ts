#!/usr/bin/env -S npx tsx
/**
 * fetch.ts: prints a context package's artifact on demand (the block shows ids, not bodies),
 * redacted, and optionally shortened to a token budget (beginning and end kept, middle marked).
 * Refuses any path that resolves outside the project's bazinga/artifacts/ folder, symlinks included.
 *
 * Usage:  tsx fetch.ts <package_id> [--max-tokens N] [--format text|json] [--db PATH] [--project-root DIR] [--config PATH]
 * Output: the artifact text (default), or {id, file_path, content, truncated, omitted_lines, tokens}
 * Exit:   0; 1 when the package or its file is missing or the path is refused; 2 for invalid parameters.
 */
import { runFetch } from './lib/fetchArtifact.ts';
import { mainWith } from './lib/main.ts';

mainWith(runFetch);
