/**
 * Control runs: configurations whose harness is registered as a control (`HarnessFacts.control`:
 * `none`, the untouched working directory; `oracle`, the task's reference solution). Neither
 * reads a skill, so comparing their arms says nothing about one: their runs check the task
 * instead (the oracle must reach 1, the untouched directory 0) and the report shows them as
 * controls — never a Golden / Harmful / Ineffective class, never a member of the BH family.
 *
 * The untouched directory's 0 holds for a task scored by a reward (Harbor) or by checks that all
 * fail without a change. A SWE-style verifier scores a pass ratio over tests the untouched
 * repository partly passes already (regression tests): there `none` must score what the verifier
 * check measured on the untouched repository (the manifest's `untouchedScores`) — the same number
 * twice says the runs measure what the check measured; another says the verifier is not
 * deterministic, or the run path scores differently from the check.
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
): Map<string, ControlExpectation> {
  const controls = new Map<string, ControlExpectation>();
  for (const configuration of manifest?.configurations ?? []) {
    const control = harnessFacts(configuration.agent).control;
    if (control !== undefined)
      controls.set(configuration.id, { agent: configuration.agent, ...control });
  }
  return controls;
}

/** A control configuration's harness and what its registration says it must reach. */
interface ControlExpectation {
  readonly agent: string;
  readonly expectedScore: 0 | 1;
  readonly means: string;
  readonly untouched?: boolean;
}

/** Scores are ratios of small counts: equal when they agree to well below one check in a million. */
const SCORE_TOLERANCE = 1e-9;

/**
 * What a control must reach on one requirement: the untouched score the verifier check
 * measured, for a control that leaves the directory untouched and a requirement the check
 * measured; the registration's score otherwise.
 */
function expectationFor(
  control: ControlExpectation,
  untouchedScore: number | undefined,
): Pick<ControlOutcome, "expectedScore" | "expectedFrom" | "means"> {
  if (control.untouched !== true || untouchedScore === undefined) {
    return { expectedScore: control.expectedScore, expectedFrom: "control", means: control.means };
  }
  return {
    expectedScore: untouchedScore,
    expectedFrom: "untouched-check",
    means: `the untouched repository must score what it scored in the verifier check (${formatScore(untouchedScore)})`,
  };
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
  untouchedScores: Readonly<Record<string, number>> = {},
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
    const expectation = expectationFor(control, untouchedScores[`${skill}/${requirement}`]);
    const expected = expectation.expectedScore;
    const met =
      failures.length === 0 &&
      scores.every((value) => Math.abs(value - expected) <= SCORE_TOLERANCE);
    const subject = control.agent;
    // A pass-ratio verifier with no check measurement (--no-check): say where the baseline is.
    const hint =
      control.untouched === true && expectation.expectedFrom === "control"
        ? " (no verifier check of this requirement is recorded in this run: a verifier whose tests the untouched repository partly passes is compared with the check's measurement; run without --no-check)"
        : "";
    outcomes.push({
      config,
      agent: control.agent,
      skill,
      requirement,
      ...expectation,
      score: failures.length === 0 ? score : null,
      status: failures.length > 0 ? "unmeasured" : met ? "as-expected" : "not-as-expected",
      says:
        failures.length > 0
          ? `${subject} could not be measured: ${failures.join("; ")}`
          : met
            ? `${subject} reaches ${formatScore(expected)} as it must (${expectation.means})`
            : `${subject} reaches ${formatScore(score)}, not ${formatScore(expected)}: ${expectation.means}${hint}`,
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
