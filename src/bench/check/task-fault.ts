/**
 * Whose fault a failed task control is, and the few lines of its output that show it: a task
 * that cannot be used is fixed by different people depending on the cause (the image lacks an
 * interpreter: the environment; solve.sh is a stub: the oracle; test.sh writes no reward: the
 * verifier; a folder skillsmith mounted is not writable: skillsmith), and "broken verifier"
 * for all of them sends everyone to the wrong place.
 */
import type { RunResult } from "../store/results.js";

export type TaskFault = "environment" | "oracle" | "verifier" | "skillsmith";

/** Lines that usually carry the reason a script or a verifier failed. */
const ERROR_LINE =
  /error|denied|not found|no such file|traceback|exception|failed|cannot|unable|no module named|missing/i;
const MAX_LINES = 6;
const MAX_LINE_LENGTH = 300;

function tidy(text: string): string[] {
  return (
    text
      .split("\n")
      .map((line) => line.trim())
      // Section markers of the combined output (`--- stderr ---`) say nothing.
      .filter((line) => line !== "" && !/^-+ \w+ -+$/.test(line))
      .map((line) =>
        line.length > MAX_LINE_LENGTH ? `${line.slice(0, MAX_LINE_LENGTH - 3)}...` : line,
      )
  );
}

/** The error lines of `text` (the last few), else its last lines. */
export function pickLines(text: string): string[] {
  const lines = tidy(text);
  const errors = lines.filter((line) => ERROR_LINE.test(line));
  return (errors.length > 0 ? errors : lines).slice(-MAX_LINES);
}

interface TrajectoryShape {
  readonly error?: unknown;
  readonly events?: readonly { type?: unknown; output?: unknown; isError?: unknown }[];
}

/**
 * The decisive lines of a control run: when the agent (solve.sh) failed, its error and the end
 * of its output; then the verifier's error lines when it scored nothing or wrote no reward.
 */
export function decisiveLines(result: RunResult): string[] {
  const lines: string[] = [];
  const trajectory = (result.trajectory ?? {}) as TrajectoryShape;
  if (result.status !== "completed") {
    if (typeof trajectory.error === "string") lines.push(`agent: ${trajectory.error}`);
    const failed = (trajectory.events ?? []).filter(
      (event) => event.type === "tool_result" && event.isError === true,
    );
    const output = failed.at(-1)?.output;
    if (typeof output === "string") {
      lines.push(...pickLines(output).map((line) => `agent: ${line}`));
    }
  }
  if (result.passRatio < 1 || result.flags.includes("reward-missing")) {
    lines.push(...pickLines(result.verifier?.output ?? "").map((line) => `verifier: ${line}`));
  }
  return lines;
}

interface ControlView {
  readonly status: string;
  readonly passRatio: number;
  readonly flags: readonly string[];
  readonly decisive?: readonly string[];
}

export interface FaultInput {
  readonly untouched: ControlView;
  readonly oracle?: ControlView;
  readonly hasSolution: boolean;
  /** The task's working directory: a permission error there is on a folder skillsmith mounts. */
  readonly workdir: string;
  /** A control could not be carried out at all (skillsmith or the engine failed). */
  readonly crashed: boolean;
}

/** Escape a path for a regular expression. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** See the module comment; the first rule that matches decides. */
export function taskFault(input: FaultInput): TaskFault {
  if (input.crashed) return "skillsmith";
  const all = [...(input.untouched.decisive ?? []), ...(input.oracle?.decisive ?? [])];
  // The folders skillsmith provides: the working directory, the reward folder, the tests.
  const ours = new RegExp(
    `(${literal(input.workdir)}|/logs/verifier|/tests|/run/skillsmith)\\S*.*permission denied|permission denied.*(${literal(input.workdir)}|/logs/verifier|/tests|/run/skillsmith)`,
    "i",
  );
  if (all.some((line) => ours.test(line))) return "skillsmith";
  const verifierLines = all.filter((line) => line.startsWith("verifier:"));
  if (
    verifierLines.some((line) =>
      /command not found|: not found|no module named|modulenotfounderror|no such file or directory.*(python|pytest|uv|node)\b/i.test(
        line,
      ),
    )
  ) {
    return "environment";
  }
  const untouchedSilent = input.untouched.flags.includes("reward-missing");
  const oracleSilent = input.oracle?.flags.includes("reward-missing") ?? false;
  if (untouchedSilent && (oracleSilent || input.oracle === undefined)) return "verifier";
  if (!input.hasSolution || input.oracle === undefined) return "oracle";
  if (input.oracle.status !== "completed") {
    const agentLines = all.filter((line) => line.startsWith("agent:"));
    if (
      agentLines.some((line) =>
        /command not found|: not found|no module named|modulenotfounderror/i.test(line),
      )
    ) {
      return "environment";
    }
    return "oracle";
  }
  if (input.oracle.passRatio < 1) return oracleSilent ? "verifier" : "oracle";
  return "verifier";
}
