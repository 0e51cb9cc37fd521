/**
 * Suites for the real agent CLIs (Claude Code, Codex) driven by the scripted model server: one
 * requirement asking for `result.txt` holding good, whose verifier also checks which key the
 * agent's shell saw (it must be the per-run dummy), and a script whose one tool call runs a given
 * shell command with the CLI's own shell tool.
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { type ScriptedServer, startScriptedServer } from "../../src/model/scripted/server.js";
import { tinyRepository, writeAlphaSkill, writeRequirement } from "./suites.js";

/** Checks: the result says good; the key the agent's shell saved in seen-key.txt is a dummy. */
export const KEY_CHECK_SCRIPT = `file="$SKILLSMITH_WORKSPACE/result.txt"
seen=$(cat "$SKILLSMITH_WORKSPACE/seen-key.txt" 2>/dev/null | tr -d '<>&"')
{
  echo '<testsuite name="r">'
  if [ "$(cat "$file" 2>/dev/null)" = good ]; then echo '<testcase classname="r" name="good"/>'; else echo '<testcase classname="r" name="good"><failure message="not good"/></testcase>'; fi
  case "$seen" in
    skillsmith-run-*) echo '<testcase classname="r" name="dummy-key"/>' ;;
    *) echo "<testcase classname=\\"r\\" name=\\"dummy-key\\"><failure message=\\"saw: $seen\\"/></testcase>" ;;
  esac
  echo '</testsuite>'
} > junit.xml
`;

/**
 * A suite named `name` in a fresh folder under `root` with the given `configurations:` block
 * (YAML lines), skill alpha and requirement r1 scored by `checkScript`; returns its folder.
 */
export async function writeCliSuite(
  root: string,
  name: string,
  configurations: string,
  checkScript: string = KEY_CHECK_SCRIPT,
): Promise<string> {
  const base = await mkdtemp(join(root, `${name}-`));
  const { repo, commit } = await tinyRepository(base);
  const suite = join(base, "suite");
  const skill = await writeAlphaSkill(suite, {
    suiteYaml: `format: skillsmith-suite/1\nname: ${name}\nconfigurations:\n${configurations}`,
    skillYaml: `repository:\n  path: ${repo}\n  commit: ${commit}\n  name: tiny\n`,
    skillMarkdown:
      "---\nname: alpha\ndescription: Writes result files. Use when a task asks for a result file.\n---\n\n# Alpha\n\nWrite good.\n",
  });
  await writeRequirement(skill, "r1", {
    requirementMarkdown:
      "## Requirement\n\nWrite the word good into result.txt.\n\n## File Operations\n\n- `result.txt`\n\n## Acceptance Criteria\n\n- it says good\n",
    checkScript,
    verifierYaml: "command: sh check.sh\nfiles: [check.sh]\njunit: junit.xml\ntimeoutSeconds: 60\n",
  });
  return suite;
}

/**
 * A scripted model server whose one tool call runs `command` with the CLI's shell tool (`Bash`
 * for Claude Code, `exec_command` for Codex) when the task names result.txt, then finishes;
 * pushed onto `servers` for the caller to close.
 */
export async function shellCommandServer(
  servers: ScriptedServer[],
  tool: "Bash" | "exec_command",
  command: string,
): Promise<string> {
  const server = await startScriptedServer({
    script: {
      rules: [
        { match: { toolResult: "[\\s\\S]*" }, reply: { text: "Done." } },
        {
          match: { lastUserMessage: "result\\.txt" },
          reply: {
            toolCalls: [{ name: tool, input: tool === "Bash" ? { command } : { cmd: command } }],
          },
        },
      ],
      fallback: { text: "Nothing to do." },
    },
  });
  servers.push(server);
  return server.url;
}
