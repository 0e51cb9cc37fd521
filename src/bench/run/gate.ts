/**
 * What happens before any agent runs: each selected skill's environment is prepared once (a
 * failure is recorded once, with its log), the verifier check runs (unless switched off), and
 * every run that could measure nothing is stored at once, flagged, without spending agent time:
 * `environment-failure` for a skill whose environment (or pinned commit) failed, and
 * `broken-verifier` for a requirement whose verifier the check found broken. Those results are
 * decided again by every invocation, so fixing the environment or the verifier and re-running
 * runs them; results that measured something are never touched.
 */
import type { SandboxV1 } from "../../env/index.js";
import { redactSecrets, secretsFromEnvironment } from "../../model/index.js";
import {
  checkSuite,
  DEFAULT_WEAK_THRESHOLD,
  type RequirementCheck,
  type SuiteCheck,
} from "../check/check.js";
import { CHECK_FORMAT } from "../check/measure.js";
import { requirementCheckJson } from "../check/render.js";
import type { RunManifest } from "../store/manifest.js";
import {
  capVerifierOutput,
  type ResultsStore,
  type RunKey,
  type RunResult,
} from "../store/results.js";
import { narrowedSkill } from "../suite/load.js";
import type { Configuration } from "../suite/schema.js";
import type { ExcludedPart, Suite, SuiteSkill } from "../suite/types.js";
import { type EnvironmentOutcome, environmentRecord, skillEnvironments } from "./environments.js";
import {
  type InventoryBatchReport,
  prefetchInventories,
  requirementInventoryTargets,
} from "./inventory-batch.js";
import type { RunSuiteOptions } from "./options.js";
import type { PlannedRun } from "./plan.js";
import { checkTasks } from "./task-check.js";

/** Flags of results stored without running, which each invocation re-decides. */
export const PREPARATION_FLAGS: ReadonlySet<string> = new Set([
  "environment-failure",
  "broken-verifier",
]);

/**
 * The runs to execute when no gate runs here (a queue run with `--no-check`: environments are
 * prepared on the workers): a result an earlier gate stored unmeasured (flagged
 * `environment-failure` or `broken-verifier`) is decided again by running it, as the gate
 * re-decides it on every invocation — fixing the verifier and re-running must not leave it.
 */
export function ungatedPending(
  store: ResultsStore,
  planned: readonly PlannedRun[],
  pending: readonly PlannedRun[],
): PlannedRun[] {
  const redecided = planned.filter(
    (run) => store.flagsOf(run.key)?.some((flag) => PREPARATION_FLAGS.has(flag)) === true,
  );
  for (const run of redecided) store.deleteResult(run.key);
  return [...pending, ...redecided];
}

export interface Gate {
  /** The runs to execute, in plan order. */
  readonly pending: readonly PlannedRun[];
  /** `skill/requirement` of weak verifiers: their results carry `weak-verifier`. */
  readonly weak: ReadonlySet<string>;
  readonly check?: SuiteCheck;
  readonly environmentFor: (skill: SuiteSkill) => Promise<EnvironmentOutcome>;
  readonly environmentFailures: readonly { readonly skill: string; readonly reason: string }[];
  /** Runs stored flagged by this invocation. */
  readonly unmeasured: number;
  /** What the manifest records of it. */
  readonly manifest: Pick<
    RunManifest,
    "environments" | "check" | "selection" | "setupNetwork" | "untouchedScores"
  >;
}

export interface GateOptions {
  readonly suite: Suite;
  readonly excluded: readonly ExcludedPart[];
  readonly store: ResultsStore;
  readonly planned: readonly PlannedRun[];
  readonly configurations: readonly Configuration[];
  readonly repeats: number;
  readonly sandbox: SandboxV1;
  readonly cacheDir: string;
  readonly options: RunSuiteOptions;
  /** Keeps a result in the store (the runner's `storeRunResult`). */
  readonly record: (result: RunResult) => Promise<unknown>;
}

export async function gateRuns(gate: GateOptions): Promise<Gate> {
  const { store, options } = gate;
  const log = (line: string) => options.onLog?.(line);
  const environmentFor = skillEnvironments({
    sandbox: gate.sandbox,
    cacheDir: gate.cacheDir,
    ...(options.setupNetwork === undefined ? {} : { setupNetwork: options.setupNetwork }),
    ...(options.baseImages === undefined ? {} : { baseImages: options.baseImages }),
    onLog: log,
  });
  const skillsWithRuns = skillsToDecide(gate);
  const check =
    options.check === false
      ? undefined
      : await checkVerifiers(skillsWithRuns, environmentFor, gate);
  const outcomes = new Map<string, EnvironmentOutcome>();
  for (const skill of skillsWithRuns) outcomes.set(skill.id, await environmentFor(skill));
  if (check === undefined) {
    // Without the check (which takes them ahead itself), the runs' inventories in batches.
    const entries = skillsWithRuns.flatMap((skill) => {
      const outcome = outcomes.get(skill.id);
      if (outcome?.ok !== true || skill.repository === undefined) return [];
      return skill.requirements.map((requirement) => ({
        skill,
        requirement,
        sandbox: outcome.sandbox,
        base: outcome.base,
      }));
    });
    logInventories(
      options,
      await prefetchInventories(await requirementInventoryTargets(entries, options.signal)),
    );
  }
  const taskProblems =
    options.check === false
      ? new Map<string, string>()
      : await checkTaskControls(
          skillsWithRuns.filter(
            (skill) => skill.repository === undefined && outcomes.get(skill.id)?.ok === true,
          ),
          gate,
        );

  const checks = new Map<string, RequirementCheck>();
  for (const requirement of check?.requirements ?? []) {
    checks.set(`${requirement.skill}/${requirement.requirement}`, requirement);
  }
  const weak = new Set(
    [...checks.values()]
      .filter((requirement) => requirement.status === "weak")
      .map((requirement) => `${requirement.skill}/${requirement.requirement}`),
  );
  const unmeasuredNow = unmeasuredKeys(gate, outcomes, checks, taskProblems);
  const unmeasured = await storeUnmeasured(gate, unmeasuredNow);
  const pending: PlannedRun[] = [];
  for (const run of gate.planned) {
    if (unmeasuredNow.has(keyText(run.key))) continue;
    const stored = store.flagsOf(run.key);
    if (stored?.some((flag) => PREPARATION_FLAGS.has(flag))) {
      // Measured nothing before; measurable now (the environment or verifier was fixed).
      store.deleteResult(run.key);
      pending.push(run);
    } else if (stored === undefined) {
      pending.push(run);
    }
  }
  const environmentFailures = [...outcomes.values()]
    .filter((outcome): outcome is Extract<EnvironmentOutcome, { ok: false }> => !outcome.ok)
    .map((outcome) => ({ skill: outcome.skill, reason: outcome.reason }));
  for (const failure of environmentFailures) {
    options.onWarning?.(
      `skill ${failure.skill} not run: ${failure.reason} (its runs are stored flagged environment-failure; the rest run)`,
    );
  }
  return {
    pending,
    weak,
    ...(check === undefined ? {} : { check }),
    environmentFor,
    environmentFailures,
    unmeasured,
    manifest: gateManifest(options, outcomes, check),
  };
}

/**
 * The skills with runs still to decide, each with only those requirements: a resumed run whose
 * results are all stored checks nothing again.
 */
function skillsToDecide(gate: GateOptions): SuiteSkill[] {
  const toDecide = (run: PlannedRun) => {
    const stored = gate.store.flagsOf(run.key);
    return stored === undefined || stored.some((flag) => PREPARATION_FLAGS.has(flag));
  };
  const open = new Set(
    gate.planned.filter(toDecide).map((run) => `${run.skill.id}/${run.requirement.id}`),
  );
  return gate.suite.skills
    .map((skill) =>
      narrowedSkill(skill, (requirement) => open.has(`${skill.id}/${requirement.id}`)),
    )
    .filter((skill) => skill.requirements.length > 0);
}

/** How the inventories were taken ahead, and each verifier left to be taken alone with why. */
function logInventories(options: RunSuiteOptions, report: InventoryBatchReport): void {
  options.onLog?.(
    `inventories: ${report.batched} taken in ${report.batches} batch(es), ${report.known} already known, ${report.alone.length} to take alone`,
  );
  for (const entry of report.alone) {
    options.onLog?.(`inventory taken alone: ${entry.verifier} (${entry.reason})`);
  }
}

/** The verifier check of the requirements still to run, its progress told line by line. */
async function checkVerifiers(
  skillsWithRuns: readonly SuiteSkill[],
  environmentFor: (skill: SuiteSkill) => Promise<EnvironmentOutcome>,
  gate: GateOptions,
): Promise<SuiteCheck> {
  const { options } = gate;
  const count = skillsWithRuns.reduce((sum, skill) => sum + skill.requirements.length, 0);
  options.onLog?.(
    `checking the verifiers of ${count} requirement(s) first (--no-check skips this)`,
  );
  return await checkSuite({
    // Environment-only tasks have no untouched repository: `bench check-tasks` checks them.
    suite: {
      ...gate.suite,
      skills: skillsWithRuns.filter((skill) => skill.repository !== undefined),
    },
    excluded: gate.excluded,
    environmentFor,
    cacheDir: gate.cacheDir,
    ...(options.weakThreshold === undefined ? {} : { weakThreshold: options.weakThreshold }),
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    onInventories: (report) => logInventories(options, report),
    onProgress: (progress) => {
      if (progress.activity !== undefined) return;
      const last = progress.last;
      if (last === undefined) return;
      options.onLog?.(
        `check ${progress.done}/${progress.total} ${last.skill}/${last.requirement}: ${last.status}${last.untouchedPassRatio === null ? "" : ` (${Math.round(last.untouchedPassRatio * 1000) / 10}% untouched)`}${last.cached ? " [cached]" : ""}${last.status === "ok" ? "" : ` — ${last.reason}`}`,
      );
    },
  });
}

/** A key that measures nothing now, with its flag and what to store as evidence. */
interface UnmeasuredEntry {
  readonly key: RunKey;
  readonly flag: string;
  readonly reason: string;
  readonly output: string;
  readonly exitCode: number | null;
}

function keyText(key: RunKey): string {
  return `${key.config}/${key.skill}/${key.requirement}/${key.arm}/${key.repeat}`;
}

/** Every key that measures nothing now: failed environments, failed task controls, broken verifiers. */
function unmeasuredKeys(
  gate: GateOptions,
  outcomes: ReadonlyMap<string, EnvironmentOutcome>,
  checks: ReadonlyMap<string, RequirementCheck>,
  taskProblems: ReadonlyMap<string, string>,
): Map<string, UnmeasuredEntry> {
  const unmeasuredNow = new Map<string, UnmeasuredEntry>();
  for (const run of gate.planned) {
    const outcome = outcomes.get(run.skill.id);
    const id = `${run.skill.id}/${run.requirement.id}`;
    const requirementCheck = checks.get(id);
    const taskProblem = taskProblems.get(id);
    if (outcome !== undefined && !outcome.ok) {
      unmeasuredNow.set(keyText(run.key), {
        key: run.key,
        flag: "environment-failure",
        reason: outcome.reason,
        output: outcome.log,
        exitCode: null,
      });
    } else if (taskProblem !== undefined) {
      unmeasuredNow.set(keyText(run.key), {
        key: run.key,
        flag: "broken-verifier",
        reason: `bench check-tasks: ${taskProblem}`,
        output: "",
        exitCode: null,
      });
    } else if (requirementCheck?.status === "broken") {
      unmeasuredNow.set(keyText(run.key), {
        key: run.key,
        flag: "broken-verifier",
        reason: requirementCheck.reason,
        output: requirementCheck.untouched?.output ?? "",
        exitCode: requirementCheck.untouched?.exitCode ?? null,
      });
    }
  }
  // Requirements left out of the suite for missing files: stored too, so reports show them.
  const inSuite = new Set(gate.planned.map((run) => `${run.skill.id}/${run.requirement.id}`));
  for (const requirementCheck of checks.values()) {
    const id = `${requirementCheck.skill}/${requirementCheck.requirement}`;
    if (
      inSuite.has(id) ||
      requirementCheck.status !== "broken" ||
      requirementCheck.requirement === "*"
    )
      continue;
    for (const configuration of gate.configurations) {
      for (let repeat = 1; repeat <= gate.repeats; repeat += 1) {
        for (const arm of ["without", "with"] as const) {
          const key: RunKey = {
            config: configuration.id,
            skill: requirementCheck.skill,
            requirement: requirementCheck.requirement,
            arm,
            repeat,
          };
          unmeasuredNow.set(keyText(key), {
            key,
            flag: "broken-verifier",
            reason: requirementCheck.reason,
            output: "",
            exitCode: null,
          });
        }
      }
    }
  }
  return unmeasuredNow;
}

/**
 * Store each unmeasured key (replacing an earlier unmeasured result, never a measured one);
 * returns how many were stored.
 */
async function storeUnmeasured(
  gate: GateOptions,
  unmeasuredNow: ReadonlyMap<string, UnmeasuredEntry>,
): Promise<number> {
  const { store } = gate;
  const now = new Date().toISOString();
  let unmeasured = 0;
  for (const entry of unmeasuredNow.values()) {
    const stored = store.flagsOf(entry.key);
    if (stored !== undefined && !stored.some((flag) => PREPARATION_FLAGS.has(flag))) continue;
    if (stored !== undefined) store.deleteResult(entry.key);
    await gate.record(unmeasuredResult(entry, now, store.attemptCount(entry.key) + 1));
    unmeasured += 1;
  }
  return unmeasured;
}

/** What the manifest records of the gate: environments, the check, the selection. */
function gateManifest(
  options: RunSuiteOptions,
  outcomes: ReadonlyMap<string, EnvironmentOutcome>,
  check: SuiteCheck | undefined,
): Gate["manifest"] {
  const selection = options.selection;
  return {
    environments: [...outcomes.values()].map((outcome) => ({ ...environmentRecord(outcome) })),
    check:
      check === undefined
        ? {
            format: CHECK_FORMAT,
            weakThreshold: options.weakThreshold ?? DEFAULT_WEAK_THRESHOLD,
            skipped: true,
            requirements: [],
          }
        : {
            format: check.format,
            weakThreshold: check.weakThreshold,
            requirements: check.requirements.map((requirement) => ({
              ...requirementCheckJson(requirement),
              ...(requirement.digest === undefined ? {} : { digest: requirement.digest }),
              cached: requirement.cached,
            })),
          },
    ...(selection === undefined ||
    ((selection.skills ?? []).length === 0 && (selection.requirements ?? []).length === 0)
      ? {}
      : {
          selection: {
            ...(selection.skills === undefined ? {} : { skills: [...selection.skills] }),
            ...(selection.requirements === undefined
              ? {}
              : { requirements: [...selection.requirements] }),
          },
        }),
    setupNetwork: options.setupNetwork ?? "auto",
    ...untouchedScoresOf(check),
  };
}

/**
 * What the untouched repository scored per requirement in the check: what the `none` control
 * must score (a pass-ratio verifier may pass some checks untouched; see `controls.ts`).
 */
function untouchedScoresOf(check: SuiteCheck | undefined): Pick<RunManifest, "untouchedScores"> {
  const scores: Record<string, number> = {};
  for (const requirement of check?.requirements ?? []) {
    if (requirement.untouchedPassRatio === null || requirement.requirement === "*") continue;
    scores[`${requirement.skill}/${requirement.requirement}`] = requirement.untouchedPassRatio;
  }
  return Object.keys(scores).length === 0 ? {} : { untouchedScores: scores };
}

/**
 * Environment-only tasks have no untouched repository for the verifier check; their controls
 * run instead (`checkTasks`: the oracle must reach reward 1, the untouched working directory
 * must not), cached per task and requirement. A task failing them could only yield a verdict
 * that measures nothing (both arms failing alike reads as "Ineffective"), so its runs are
 * stored `broken-verifier`. Returns the problems by `skill/requirement`.
 */
async function checkTaskControls(
  tasks: readonly SuiteSkill[],
  gate: GateOptions,
): Promise<Map<string, string>> {
  const problems = new Map<string, string>();
  if (tasks.length === 0) return problems;
  const { options } = gate;
  const count = tasks.reduce((sum, task) => sum + task.requirements.length, 0);
  options.onLog?.(
    `checking ${count} environment-only task requirement(s): the oracle must pass, the untouched working directory must not (--no-check skips this)`,
  );
  const checks = await checkTasks({
    suite: { ...gate.suite, skills: [...tasks] },
    sandbox: gate.sandbox,
    cacheDir: gate.cacheDir,
    cacheChecks: true,
    ...(options.baseImages === undefined ? {} : { baseImages: options.baseImages }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    onCheck: (check) =>
      options.onLog?.(
        `check-tasks ${check.skill}/${check.requirement}: ${check.ok ? "ok" : `broken — ${check.problems.join("; ")}`}${check.cached === true ? " [cached]" : ""}`,
      ),
  });
  for (const check of checks) {
    if (!check.ok) problems.set(`${check.skill}/${check.requirement}`, check.problems.join("; "));
  }
  return problems;
}

/** A result stored without running: nothing measured, the flag and its evidence kept. */
function unmeasuredResult(entry: UnmeasuredEntry, now: string, attempt: number): RunResult {
  return {
    ...entry.key,
    // No agent ran; the flag (effect `unmeasured`) keeps the pair out of the verdict.
    status: "completed",
    passRatio: 0,
    passed: 0,
    total: 0,
    checks: [],
    flags: [entry.flag],
    trajectory: { notRun: entry.reason },
    skillActivated: null,
    workspaceDigest: "",
    requiredFiles: {},
    usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, costUsd: 0 },
    agentMs: 0,
    verifierMs: 0,
    totalMs: 0,
    startedAt: now,
    finishedAt: now,
    attempts: attempt,
    verifier: {
      output: capVerifierOutput(redactSecrets(entry.output, secretsFromEnvironment(process.env))),
      exitCode: entry.exitCode,
      durationMs: 0,
      source: entry.flag === "environment-failure" ? "setup" : "check",
      evidence: [entry.reason],
    },
  };
}
