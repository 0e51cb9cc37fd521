/**
 * The check of environment-only (Harbor) tasks before they are used for verdicts: for each
 * requirement, the oracle (`solution/solve.sh`) must reach a full reward and the untouched
 * working directory must not. A task whose test.sh writes no reward, or whose oracle fails, or
 * which an agent that does nothing already passes, is reported with the reason. Each is run once
 * (the without-skill arm: no skill matters to either control), through the same `executeRun` as
 * every scored run, in the same sandbox, image and limits.
 */
import type { SandboxV1 } from "../../env/index.js";
import { loadSuite } from "../suite/load.js";
import type { Configuration } from "../suite/schema.js";
import type { Suite } from "../suite/types.js";
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
}

export interface CheckTasksOptions {
  readonly suite: Suite | string;
  readonly sandbox: SandboxV1;
  readonly cacheDir: string;
  readonly baseImages?: Readonly<Record<string, string>>;
  /** Wall-time limit of each control run (default 600 s). */
  readonly timeoutSeconds?: number;
  readonly signal?: AbortSignal;
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
      checks.push({
        skill: skill.id,
        requirement: requirement.id,
        ...(solved === undefined ? {} : { oracle: solved }),
        untouched: bare,
        ok: problems.length === 0,
        problems,
      });
    }
  }
  return checks;
}
