/**
 * The check of environment-only (Harbor) tasks before they are used for verdicts: for each
 * requirement, the oracle (`solution/solve.sh`) must reach a full reward and the untouched
 * working directory must not. A task whose test.sh writes no reward, or whose oracle fails, or
 * which an agent that does nothing already passes, is reported with the reason. Each is run once
 * (the without-skill arm: no skill matters to either control), through the same `executeRun` as
 * every scored run, in the same sandbox, image and limits.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../core/fs.js";
import { type PreparedBase, type SandboxV1, treeDigest } from "../../env/index.js";
import { loadSuite } from "../suite/load.js";
import type { Configuration } from "../suite/schema.js";
import type { Suite, SuiteRequirement } from "../suite/types.js";
import { type ExecutionContext, executeRun } from "./execute.js";
import type { PlannedRun } from "./plan.js";
import { harnessesFor, preparedBases } from "./prepare.js";
import { requireTaskImages } from "./task-environment.js";

export interface TaskControl {
  readonly passRatio: number;
  readonly flags: readonly string[];
  readonly status: string;
  /** The verifier's evidence lines (where the reward came from, why it is missing). */
  readonly evidence: readonly string[];
}

export interface TaskCheck {
  readonly skill: string;
  readonly requirement: string;
  readonly oracle?: TaskControl;
  readonly untouched: TaskControl;
  readonly ok: boolean;
  /** Why the task is not usable; empty when `ok`. */
  readonly problems: readonly string[];
  /** True when the check was read from the cache (`cacheChecks`) instead of run. */
  readonly cached?: boolean;
}

export interface CheckTasksOptions {
  readonly suite: Suite | string;
  readonly sandbox: SandboxV1;
  readonly cacheDir: string;
  readonly baseImages?: Readonly<Record<string, string>>;
  /** Wall-time limit of each control run (default 600 s). */
  readonly timeoutSeconds?: number;
  readonly signal?: AbortSignal;
  /**
   * Keep each check in `cacheDir/task-checks/`, keyed by everything that decides it (the task's
   * image and working directory, the requirement's files, the solution, the time limit), and
   * read it from there next time: `bench run`'s gate checks every task on every invocation.
   */
  readonly cacheChecks?: boolean;
  /** After each requirement's check, e.g. for progress lines. */
  readonly onCheck?: (check: TaskCheck) => void;
}

/** Flags of a control that ended early: its outcome says nothing about the task. */
const UNSETTLED_FLAGS = new Set(["timeout", "agent-timeout", "oom", "process-limit"]);

/** Bumped whenever what a task check measures changes: older cache entries are then ignored. */
const TASK_CHECK_CACHE_FORMAT = 1;

/** The cache key of one requirement's check: every input that can change its outcome. */
async function taskCheckDigest(
  base: PreparedBase,
  requirement: SuiteRequirement,
  timeoutSeconds: number,
  sandbox: SandboxV1,
): Promise<string> {
  const solution = requirement.solution;
  return createHash("sha256")
    .update(
      JSON.stringify([
        "skillsmith-task-check",
        TASK_CHECK_CACHE_FORMAT,
        base.key,
        base.digest,
        base.environment?.image ?? "",
        requirement.raw,
        // The verifier and the reference solution live in the requirement's folder.
        await treeDigest(requirement.folder),
        requirement.verifier.command,
        solution === undefined ? null : [solution.kind, solution.path],
        timeoutSeconds,
        // What a verifier can see differs by backend (unsafe sees the whole machine).
        sandbox.kind,
      ]),
    )
    .digest("hex");
}

const DEFAULT_CONTROL_TIMEOUT_SECONDS = 600;

function control(result: Awaited<ReturnType<typeof executeRun>>): TaskControl {
  return {
    passRatio: result?.passRatio ?? 0,
    flags: result?.flags ?? [],
    status: result?.status ?? "aborted",
    evidence: result?.verifier?.evidence ?? [],
  };
}

/** Check every environment-only task of a suite (skills with a repository are left out). */
export async function checkTasks(options: CheckTasksOptions): Promise<TaskCheck[]> {
  const suite = typeof options.suite === "string" ? await loadSuite(options.suite) : options.suite;
  const tasks = suite.skills.filter((skill) => skill.repository === undefined);
  await requireTaskImages(tasks, options.sandbox, options.baseImages);
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_CONTROL_TIMEOUT_SECONDS;
  const oracle: Configuration = { id: "oracle", agent: "oracle", limits: { timeoutSeconds } };
  const untouched: Configuration = { id: "untouched", agent: "none", limits: { timeoutSeconds } };
  const context: ExecutionContext = {
    sandbox: options.sandbox,
    baseFor: preparedBases(options.sandbox, options.cacheDir, options.baseImages),
    harnessOf: harnessesFor(suite, undefined, undefined),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const checks: TaskCheck[] = [];
  for (const skill of tasks) {
    for (const requirement of skill.requirements) {
      const cacheFile =
        options.cacheChecks === true
          ? join(
              options.cacheDir,
              "task-checks",
              `${await taskCheckDigest(await context.baseFor(skill), requirement, timeoutSeconds, options.sandbox)}.json`,
            )
          : undefined;
      // A cache entry that is missing or damaged is checked again and rewritten: the cache only
      // saves time, and a check is never taken from a file that does not parse.
      const cached =
        cacheFile === undefined
          ? undefined
          : await readFile(cacheFile, "utf8")
              .then((text) => JSON.parse(text) as TaskCheck)
              .catch(() => undefined);
      if (
        cached !== undefined &&
        cached.skill === skill.id &&
        cached.requirement === requirement.id &&
        typeof cached.ok === "boolean" &&
        Array.isArray(cached.problems)
      ) {
        const check = { ...cached, cached: true };
        checks.push(check);
        options.onCheck?.(check);
        continue;
      }
      const run = (configuration: Configuration): PlannedRun => ({
        key: {
          config: configuration.id,
          skill: skill.id,
          requirement: requirement.id,
          arm: "without",
          repeat: 1,
        },
        configuration,
        skill,
        requirement,
      });
      const problems: string[] = [];
      const startedAt = new Date().toISOString();
      const bare = control(await executeRun(run(untouched), context, 1, startedAt));
      let solved: TaskControl | undefined;
      if (requirement.solution === undefined) {
        problems.push("no reference solution (solution/solve.sh): the oracle cannot run");
      } else {
        solved = control(await executeRun(run(oracle), context, 1, startedAt));
        if (solved.flags.includes("reward-missing")) {
          problems.push(`the oracle run wrote no reward: ${solved.evidence.join("; ")}`);
        } else if (solved.passRatio < 1) {
          problems.push(
            `the oracle reaches ${solved.passRatio}, not 1 (status ${solved.status}; ${solved.flags.join(", ") || "no flags"})`,
          );
        }
      }
      if (bare.flags.includes("reward-missing")) {
        problems.push(`the untouched run wrote no reward: ${bare.evidence.join("; ")}`);
      } else if (bare.passRatio >= 1) {
        problems.push("the untouched working directory already passes: the task tests nothing");
      }
      const check: TaskCheck = {
        skill: skill.id,
        requirement: requirement.id,
        ...(solved === undefined ? {} : { oracle: solved }),
        untouched: bare,
        ok: problems.length === 0,
        problems,
      };
      // Only a check whose controls both ran to the end is kept: one that was aborted, timed out,
      // hit a limit or lost its run to infrastructure measured nothing lasting, and is decided
      // again next time rather than holding the task back for good.
      const measured = [bare, ...(solved === undefined ? [] : [solved])].every(
        (each) =>
          each.status === "completed" && !each.flags.some((flag) => UNSETTLED_FLAGS.has(flag)),
      );
      if (cacheFile !== undefined && measured && options.signal?.aborted !== true) {
        await mkdir(join(options.cacheDir, "task-checks"), { recursive: true });
        await writeFileAtomic(cacheFile, `${JSON.stringify(check)}\n`);
      }
      checks.push(check);
      options.onCheck?.(check);
    }
  }
  return checks;
}
