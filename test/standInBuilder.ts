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
 *   - what the context section selects: the real builder's rules, with its SQL (get_context_packages,
 *     get_prior_reasoning, get_error_patterns, build_context_block): packages of the session in the
 *     group or with no group, whatever their consumer list, the first 5 by priority (critical, high,
 *     medium, low, other) then created_at DESC, those with an empty summary skipped; reasoning only
 *     for qa_expert, tech_lead, senior_software_engineer and investigator, written by the producers
 *     its relevant_agents table names for them, of the group or `global`, the newest 5 by timestamp
 *     (no tie-breaker, as there); error patterns with confidence above 0.7 of every project, by
 *     confidence then occurrences, at most 3. Each line is counted with estimate_tokens and taken
 *     only while the running total stays within the context budget, int(the soft budget of the
 *     params' model (haiku 900, sonnet 1800, opus 2400) × the agent's share (developer 0.35, senior
 *     0.30, QA 0.30, tech lead 0.40, investigator 0.35, others 0.20)); a line that does not fit is
 *     skipped and the next one tried;
 *   - paths: the params file and output_file relative to the project root (its own folder's, links
 *     resolved), which it changes to; its token estimate (estimate_tokens) is characters ÷ 3.85 plus
 *     2 % (under 10 characters: a quarter of them, at least 1), and BAZINGA_PROMPT_FILE_LIMIT sets the
 *     file-read limit (its budget: 92 % of it);
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
agent, session, group = p['agent_type'], p['session_id'], p.get('group_id') or ''
db = sqlite3.connect('bazinga/bazinga.db')
TOKEN_BUDGETS = {"haiku": {"soft": 900, "hard": 1350}, "sonnet": {"soft": 1800, "hard": 2700}, "opus": {"soft": 2400, "hard": 3600}}
CONTEXT_ALLOCATION = {"developer": 0.35, "senior_software_engineer": 0.30, "qa_expert": 0.30, "tech_lead": 0.40, "investigator": 0.35, "project_manager": 0.10, "requirements_engineer": 0.30}
RELEVANT_AGENTS = {'qa_expert': ['developer', 'senior_software_engineer'], 'tech_lead': ['developer', 'senior_software_engineer', 'qa_expert'], 'senior_software_engineer': ['developer'], 'investigator': ['developer', 'senior_software_engineer', 'qa_expert'], 'developer': ['developer', 'qa_expert', 'tech_lead']}
def estimate_tokens(text):
    if not text:
        return 0
    if len(text) < 10:
        return max(1, len(text) // 4)
    return int(len(text) / 3.85 * 1.02)
def query(table, sql, args):
    try:
        return db.execute(sql, args).fetchall()
    except sqlite3.OperationalError as e:
        print("WARNING: DB query failed (%s): %s" % (table, e), file=sys.stderr)
        return []
trim = os.environ.get('BUILDER_TRIM') == '1'
print('[INFO] Using params file ' + params_path, file=sys.stderr)
components = []
if agent != 'project_manager':
    # build_context_block: the real builder's selection, budget and line formats, statement for statement.
    model = p.get('model') or 'sonnet'
    context_budget = int(TOKEN_BUDGETS.get(model, TOKEN_BUDGETS['sonnet'])['soft'] * CONTEXT_ALLOCATION.get(agent, 0.20))
    sections = []
    used = 0
    packages = query("context_packages", """
            SELECT id, file_path, priority, summary, group_id, created_at
            FROM context_packages
            WHERE session_id = ?
            AND (group_id = ? OR group_id IS NULL OR group_id = '')
            ORDER BY
                CASE priority
                    WHEN 'critical' THEN 1
                    WHEN 'high' THEN 2
                    WHEN 'medium' THEN 3
                    WHEN 'low' THEN 4
                    ELSE 5
                END,
                created_at DESC
            LIMIT ?
        """, (session, group, 5))
    if packages:
        s = "### Relevant Context\n\n"
        for pkg_id, fp, pr, summ, pkg_group, created in packages:
            if summ:
                line = "**[%s]** %s\n> %s\n\n" % (pr.upper(), fp, summ[:200] + "..." if len(summ) > 200 else summ)
                if used + estimate_tokens(line) <= context_budget:
                    s += line
                    used += estimate_tokens(line)
        if s != "### Relevant Context\n\n":
            sections.append(s)
    if agent in ('qa_expert', 'tech_lead', 'senior_software_engineer', 'investigator'):
        producers = RELEVANT_AGENTS.get(agent, [])
        rs = query("orchestration_logs", """
            SELECT agent_type, reasoning_phase, content, confidence_level, timestamp
            FROM orchestration_logs
            WHERE session_id = ?
            AND (group_id = ? OR group_id = 'global')
            AND agent_type IN (%s)
            AND log_type = 'reasoning'
            ORDER BY timestamp DESC
            LIMIT 5
        """ % ','.join('?' * len(producers)), (session, group, *producers)) if producers else []
        if rs:
            s = "### Prior Agent Reasoning\n\n"
            for a, ph, c, conf, ts in rs:
                line = "**[%s] %s:** %s\n\n" % (a, ph, c[:300] if c else "")
                if used + estimate_tokens(line) <= context_budget:
                    s += line
                    used += estimate_tokens(line)
            if s != "### Prior Agent Reasoning\n\n":
                sections.append(s)
    es = query("error_patterns", """
            SELECT signature_json, solution, confidence, occurrences
            FROM error_patterns
            WHERE confidence > 0.7
            ORDER BY confidence DESC, occurrences DESC
            LIMIT ?
        """, (3,))
    if es:
        s = "### Known Error Patterns\n\n"
        for sig, sol, conf, occ in es:
            line = "**Known Issue**: %s\n> **Solution**: %s\n\n" % (sig[:100] if sig else "", sol[:200] if sol else "")
            if used + estimate_tokens(line) <= context_budget:
                s += line
                used += estimate_tokens(line)
        if s != "### Known Error Patterns\n\n":
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
lines, tokens = len(text.splitlines()), estimate_tokens(text)
print("[PROMPT_METADATA]", file=sys.stderr)
for k, v in (("agent_type", agent), ("project_root", root), ("lines", lines), ("tokens_estimate", tokens), ("sections_trimmed", 0), ("markers_validated", "true")):
    print("%s=%s" % (k, v), file=sys.stderr)
print("PROMPT_FILE=" + out, file=sys.stderr)
print(json.dumps({"success": True, "prompt_file": out, "tokens_estimate": tokens, "lines": lines, "markers_ok": True, "missing_markers": [], "error": None,
                  "budget": {"file_read_limit": limit, "effective_budget": int(limit * (1 - 0.08)), "used": tokens, "remaining": limit - tokens}}, indent=2))
`;

/** An agent definition as BAZINGA installs it: YAML frontmatter, then the body. */
export function agentDefinition(agent: string): string {
  return `---\nname: ${agent}\ndescription: the ${agent} agent\nmodel: sonnet\n---\n\n# ${agent}\n\nYou are the ${agent}.\n`;
}

/** Writes the stand-in's script at `rel` in a project (its root is four folders above the script, as the real builder's). */
export function writeStandInScript(root: string, rel = BUILDER_PATH): void {
  fs.mkdirSync(path.join(root, path.dirname(rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), SCRIPT);
}

/** Lays the builder, its skill and the agents' definitions into a project (as BAZINGA's installer does). */
export function installStandInBuilder(root: string): void {
  writeStandInScript(root);
  fs.writeFileSync(path.join(root, '.claude/skills/prompt-builder/SKILL.md'), '---\nname: prompt-builder\ndescription: builds agent prompts\n---\n');
  fs.mkdirSync(path.join(root, '.claude/agents'), { recursive: true });
  for (const agent of ['developer', 'qa_expert', 'tech_lead', 'senior_software_engineer', 'investigator', 'requirements_engineer', 'project_manager']) {
    fs.writeFileSync(path.join(root, '.claude/agents', `${agent}.md`), agentDefinition(agent));
  }
}
