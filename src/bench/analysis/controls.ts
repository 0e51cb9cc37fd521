/**
 * Control runs: configurations whose harness is registered as a control (`HarnessFacts.control`:
 * `none`, the untouched working directory; `oracle`, the task's reference solution). Neither
 * reads a skill, so comparing their arms says nothing about one: their runs check the task
 * instead (the oracle must reach 1, the untouched directory 0) and the report shows them as
 * controls — never a Golden / Harmful / Ineffective class, never a member of the BH family.
 */
import { harnessFacts } from "../../agents/registry.js";
import { flagDefinition } from "../../env/verifier/flags.js";
import type { RunManifest } from "../store/manifest.js";
import type { RunResult } from "../store/results.js";
import { firstLine } from "./excerpt.js";
import { groupBy, runDetail } from "./profile.js";
import type { ControlOutcome, RunDetail } from "./report-types.js";

/** What a control configuration is expected to show, by configuration id (controls only). */
export function controlConfigurations(
  manifest: RunManifest | undefined,
): Map<string, { agent: string; expectedScore: 0 | 1; means: string }> {
  const controls = new Map<string, { agent: string; expectedScore: 0 | 1; means: string }>();
  for (const configuration of manifest?.configurations ?? []) {
    const control = harnessFacts(configuration.agent).control;
    if (control !== undefined)
      controls.set(configuration.id, { agent: configuration.agent, ...control });
  }
  return controls;
}

/**
 * Why a run says nothing, or undefined when it measured something: the control agent failed
 * (exited non-zero, timed out) or a flag left it unmeasured (no reward, broken environment).
 */
function controlFailure(run: RunDetail, error: string | undefined): string | undefined {
  if (run.status === "agent_error")
    return `the control agent failed${error === undefined ? "" : `: ${error}`}`;
  if (run.status === "timeout" || run.flags.includes("agent-timeout"))
    return "the control agent hit its time limit";
  const failing = run.flags.filter((flag) => flagDefinition(flag).effect !== "note");
  if (failing.length > 0) return failing.map((flag) => flagDefinition(flag).label).join(", ");
  return undefined;
}

/** The error a stored trajectory carries, first line; undefined when none. */
function trajectoryError(result: RunResult): string | undefined {
  const trajectory = result.trajectory as { error?: unknown; notRun?: unknown } | null;
  const error = trajectory?.error ?? trajectory?.notRun;
  return typeof error === "string" && error !== "" ? firstLine(error) : undefined;
}

/** One row per control configuration × task (skill) × requirement, with what it says. */
export function controlOutcomes(
  results: readonly RunResult[],
  controls: ReturnType<typeof controlConfigurations>,
): ControlOutcome[] {
  const groups = groupBy(results, (run) =>
    JSON.stringify([run.config, run.skill, run.requirement]),
  );
  const outcomes: ControlOutcome[] = [];
  for (const [key, runs] of groups) {
    const [config, skill, requirement] = JSON.parse(key) as [string, string, string];
    const control = controls.get(config);
    if (control === undefined) continue;
    const ordered = [...runs].sort(
      (left, right) => left.arm.localeCompare(right.arm) || left.repeat - right.repeat,
    );
    const details = ordered.map(runDetail);
    const failures = ordered.flatMap((run, index) => {
      const reason = controlFailure(details[index] as RunDetail, trajectoryError(run));
      return reason === undefined ? [] : [`${details[index]?.key}: ${reason}`];
    });
    const scores = details.map((run) => run.score);
    const score = scores.reduce((sum, value) => sum + value, 0) / scores.length;
    const met = failures.length === 0 && scores.every((value) => value === control.expectedScore);
    const subject = control.agent;
    outcomes.push({
      config,
      agent: control.agent,
      skill,
      requirement,
      expectedScore: control.expectedScore,
      means: control.means,
      score: failures.length === 0 ? score : null,
      status: failures.length > 0 ? "unmeasured" : met ? "as-expected" : "not-as-expected",
      says:
        failures.length > 0
          ? `${subject} could not be measured: ${failures.join("; ")}`
          : met
            ? `${subject} reaches ${control.expectedScore} as it must (${control.means})`
            : `${subject} reaches ${formatScore(score)}, not ${control.expectedScore}: ${control.means}`,
      runs: details,
    });
  }
  return outcomes.sort(
    (left, right) =>
      left.config.localeCompare(right.config) ||
      left.skill.localeCompare(right.skill) ||
      left.requirement.localeCompare(right.requirement, "en", { numeric: true }),
  );
}

function formatScore(score: number): string {
  return String(Math.round(score * 1000) / 1000);
}
