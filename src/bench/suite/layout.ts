/** File and folder names of a suite folder (see `README.md` in this folder). */
export const SUITE_FILE = "suite.yaml";
export const SKILLS_FOLDER = "skills";
export const SKILL_FILE = "skill.yaml";
/**
 * Folder holding the Agent Skills folders of a suite skill, each named after its skill (the
 * Agent Skills specification requires a skill's `name` to equal its folder name). Used when
 * `skill.yaml` lists no `skills`.
 */
export const AGENT_SKILLS_FOLDER = "agent-skills";
export const REQUIREMENTS_FOLDER = "requirements";
export const REQUIREMENT_FILE = "requirement.md";
export const VERIFIER_FILE = "verifier.yaml";
export const VERIFIER_FOLDER = "verifier";
export const SOLUTION_PATCH = "solution.patch";
export const SOLUTION_FILES_FOLDER = "solution";
export const SOLUTION_SCRIPT_FOLDER = "solution-script";
export const SOLUTION_SCRIPT_ENTRY = "solve.sh";
/** Verifier files are placed here by default: outside `/workspace/<repo>`, never seen by the agent. */
export const DEFAULT_VERIFIER_MOUNT = "/verifier";
export const WORKSPACE_ROOT = "/workspace";
