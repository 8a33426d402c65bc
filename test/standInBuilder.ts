/**
 * A stand-in for today's BAZINGA prompt builder, for tests that cannot run the real one: a Python
 * script that reproduces the formats ../shared/bazinga-today.md gives (checked against the real
 * builder), never a simplified one:
 *   - stdout: the result as one JSON document over several lines (`json.dumps(result, indent=2)`),
 *     with the nested `budget` object; on failure `success` false, `prompt_file` null, `error`;
 *   - stderr: an `[INFO]` line, a `WARNING:` line, the `[PROMPT_METADATA]` block of key=value lines,
 *     then `PROMPT_FILE=<absolute path>`;
 *   - the prompt: its components joined by one blank line, in the builder's order: `## Context from
 *     Prior Work` (left out when empty; `### Relevant Context` with `**[PRIORITY]** path` and `> `
 *     the summary cut at 200 characters, `### Prior Agent Reasoning` for reviewers with each content
 *     cut at 300 characters, `### Known Error Patterns` with the signature cut at 100), the
 *     `## SPECIALIZATION GUIDANCE (Advisory)` section when the group has specializations (well over a
 *     hundred lines), `## Skills Checklist`, the reasoning-save block opening with `---`, the agent's
 *     definition file as it is (frontmatter first), the task opening with a blank line and `---`,
 *     and the feedback sections of a retry;
 *   - paths: the params file and output_file relative to the project root (its own folder's, links
 *     resolved), which it changes to; its token estimate is characters ÷ 3.85 plus 2 %, and
 *     BAZINGA_PROMPT_FILE_LIMIT sets the file-read limit (its budget: 92 % of it);
 *   - BUILDER_TRIM=1 in the environment drops the skills and reasoning-save blocks and cuts the
 *     context section short, as the builder's file-read budget does.
 */
import fs from 'node:fs';
import path from 'node:path';

export const BUILDER_PATH = '.claude/skills/prompt-builder/scripts/prompt_builder.py';
export const BUILD = (params: string) => `python3 ${BUILDER_PATH} --params-file "${params}"`;

const SCRIPT = String.raw`import json, os, sqlite3, sys
root = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), '..', '..', '..', '..'))
limit = int(os.environ.get('BAZINGA_PROMPT_FILE_LIMIT', 25000))
os.chdir(root)
args = sys.argv[1:]
params_path = os.path.join(root, args[args.index('--params-file') + 1])
def fail(msg):
    print(json.dumps({"success": False, "error": msg, "prompt_file": None, "tokens_estimate": 0, "lines": 0, "markers_ok": False, "missing_markers": []}, indent=2))
    sys.exit(1)
if not os.path.exists(params_path):
    fail("Params file not found: " + params_path)
p = json.load(open(params_path))
agent, session, group = p['agent_type'], p['session_id'], p.get('group_id', '')
db = sqlite3.connect('bazinga/bazinga.db')
trim = os.environ.get('BUILDER_TRIM') == '1'
print('[INFO] Using params file ' + params_path, file=sys.stderr)
components = []
if agent != 'project_manager':
    sections = []
    rows = db.execute("SELECT priority, file_path, summary FROM context_packages WHERE session_id = ? AND (group_id = ? OR group_id IS NULL OR group_id = '') ORDER BY CASE priority WHEN 'critical' THEN 1 WHEN 'high' THEN 2 WHEN 'medium' THEN 3 ELSE 4 END, created_at DESC LIMIT 5", (session, group)).fetchall()
    if rows:
        s = "### Relevant Context\n\n"
        for pr, fp, summ in rows:
            s += "**[%s]** %s\n> %s\n\n" % (pr.upper(), fp, summ[:200] + "..." if len(summ) > 200 else summ)
        sections.append(s)
    if agent in ('qa_expert', 'tech_lead', 'senior_software_engineer', 'investigator'):
        rs = db.execute("SELECT agent_type, reasoning_phase, content FROM orchestration_logs WHERE session_id = ? AND (group_id = ? OR group_id = 'global') AND log_type = 'reasoning' ORDER BY timestamp DESC, id DESC LIMIT 5", (session, group)).fetchall()
        if rs:
            s = "### Prior Agent Reasoning\n\n"
            for a, ph, c in rs:
                s += "**[%s] %s:** %s\n\n" % (a, ph, (c or '')[:300])
            sections.append(s)
    es = db.execute("SELECT signature_json, solution FROM error_patterns WHERE confidence > 0.7 ORDER BY confidence DESC LIMIT 3").fetchall()
    if es:
        s = "### Known Error Patterns\n\n"
        for sig, sol in es:
            s += "**Known Issue**: %s\n> **Solution**: %s\n\n" % ((sig or '')[:100], (sol or '')[:200])
        sections.append(s)
    if sections:
        context = "## Context from Prior Work\n\n" + "\n".join(sections)
        components.append(context[:240] if trim else context)
    specs = db.execute("SELECT specializations FROM task_groups WHERE session_id = ? AND id = ?", (session, group)).fetchone()
    if specs and specs[0] and json.loads(specs[0]):
        guide = ["## SPECIALIZATION GUIDANCE (Advisory)", "", "> This guidance is supplementary.", ""]
        for spec in json.loads(specs[0]):
            guide += ["# " + spec, "", "## Patterns to Follow", ""] + ["- rule %d of %s" % (i, spec) for i in range(70)] + ["", "---", ""]
        components.append("\n".join(guide))
    if not trim:
        components.append("## Skills Checklist\n\n**MUST invoke before completion:**\n- [ ] lint-check")
        components.append("---\n\n## 🔴 MANDATORY REASONING SAVES (Pre-filled for this session)\n\nsave-reasoning \"%s\" \"%s\" \"%s\" \"understanding\"\n\n---" % (session, group or 'global', agent))
for d in ('.claude/agents', 'agents'):
    f = os.path.join(d, agent + '.md')
    if os.path.exists(f):
        components.append(open(f).read())
        break
components.append("\n---\n\n## Current Task Assignment\n\n**SESSION:** %s\n**GROUP:** %s\n\n**TASK:** %s\n\n**REQUIREMENTS:**\n%s\n" % (session, group or 'N/A', p.get('task_title', ''), p.get('task_requirements', '')))
if p.get('qa_feedback'):
    components.append("## Previous QA Feedback (FIX THESE ISSUES)\n\n" + p['qa_feedback'])
if p.get('tl_feedback'):
    components.append("## Tech Lead Feedback (ADDRESS THESE CONCERNS)\n\n" + p['tl_feedback'])
if trim:
    print("WARNING: [FILE_READ_BUDGET] Trimmed context block", file=sys.stderr)
text = "\n\n".join(components)
out = os.path.join(root, p['output_file'])
os.makedirs(os.path.dirname(out), exist_ok=True)
with open(out, 'w') as fh:
    fh.write(text)
lines, tokens = len(text.splitlines()), int(len(text) / 3.85 * 1.02)
print("[PROMPT_METADATA]", file=sys.stderr)
for k, v in (("agent_type", agent), ("project_root", root), ("lines", lines), ("tokens_estimate", tokens), ("sections_trimmed", 0), ("markers_validated", "true")):
    print("%s=%s" % (k, v), file=sys.stderr)
print("PROMPT_FILE=" + out, file=sys.stderr)
print(json.dumps({"success": True, "prompt_file": out, "tokens_estimate": tokens, "lines": lines, "markers_ok": True, "missing_markers": [], "error": None,
                  "budget": {"file_read_limit": limit, "effective_budget": int(limit * 0.92), "used": tokens, "remaining": limit - tokens}}, indent=2))
`;

/** An agent definition as BAZINGA installs it: YAML frontmatter, then the body. */
export function agentDefinition(agent: string): string {
  return `---\nname: ${agent}\ndescription: the ${agent} agent\nmodel: sonnet\n---\n\n# ${agent}\n\nYou are the ${agent}.\n`;
}

/** Lays the builder, its skill and the agents' definitions into a project (as BAZINGA's installer does). */
export function installStandInBuilder(root: string): void {
  fs.mkdirSync(path.join(root, path.dirname(BUILDER_PATH)), { recursive: true });
  fs.writeFileSync(path.join(root, BUILDER_PATH), SCRIPT);
  fs.writeFileSync(path.join(root, '.claude/skills/prompt-builder/SKILL.md'), '---\nname: prompt-builder\ndescription: builds agent prompts\n---\n');
  fs.mkdirSync(path.join(root, '.claude/agents'), { recursive: true });
  for (const agent of ['developer', 'qa_expert', 'tech_lead', 'senior_software_engineer', 'investigator', 'requirements_engineer', 'project_manager']) {
    fs.writeFileSync(path.join(root, '.claude/agents', `${agent}.md`), agentDefinition(agent));
  }
}
