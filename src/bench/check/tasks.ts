/**
 * The check of environment-only (Harbor) tasks before they are used for verdicts, task by task:
 * for each requirement the oracle (`solution/solve.sh`) must reach a full reward and the
 * untouched working directory must not. Each control runs once (the without-skill arm: no skill
 * matters to either), through the same `executeRun` as every scored run, in the same sandbox,
 * image and limits; its run is stored, and the lines that decide it (the end of solve.sh's output,
 * the verifier's error) are kept with whose fault it is. A task whose image cannot be built is
 * `environment-failure` and the next task is checked: one bad task never stops the suite.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { formatTag } from "../../core/format-tag.js";
import { formatTagSchema, readingOlderTags } from "../../core/format-tag-schema.js";
import { writeFileAtomic } from "../../core/fs.js";
import { parseJsonResult } from "../../core/parse.js";
import { type PreparedBase, type SandboxV1, treeDigest } from "../../env/index.js";
import { type ExecutionContext, executeRun } from "../run/execute.js";
import type { PlannedRun } from "../run/plan.js";
import { harnessesFor, preparedBases } from "../run/prepare.js";
import { missingTaskImages } from "../run/task-environment.js";
import type { RunResult } from "../store/results.js";
import { loadSuiteSelection } from "../suite/load.js";
import type { Configuration } from "../suite/schema.js";
import type { ExcludedPart, Suite, SuiteRequirement, SuiteSkill } from "../suite/types.js";
import { decisiveLines, type TaskFault, taskFault } from "./task-fault.js";

export type { TaskFault } from "./task-fault.js";

export interface TaskControl {
  readonly passRatio: number;
  readonly flags: readonly string[];
  readonly status: string;
  /** The verifier's evidence lines (where the reward came from, why it is missing). */
  readonly evidence: readonly string[];
  /** The lines that decide the outcome: solve.sh's last output when it failed, the verifier's errors. */
  readonly decisive?: readonly string[];
  /** Where the control's full run (agent output, verifier output) is stored. */
  readonly runFile?: string;
}

/** `environment-failure`: the task's image could not be built or found; nothing ran. */
export type TaskCheckStatus = "ok" | "broken" | "environment-failure";

export interface TaskCheck {
  readonly skill: string;
  readonly requirement: string;
  readonly status: TaskCheckStatus;
  readonly oracle?: TaskControl;
  /** Absent when the task's environment could not be prepared. */
  readonly untouched?: TaskControl;
  readonly ok: boolean;
  /** Why the task is not usable; empty when `ok`. */
  readonly problems: readonly string[];
  /** Whose fault a failed check is: the task's environment, its oracle, its verifier, or skillsmith. */
  readonly fault?: TaskFault;
  /** True when the check was read from the cache (`cacheChecks`) instead of run. */
  readonly cached?: boolean;
}

export interface CheckTasksOptions {
  readonly suite: Suite | string;
  /**
   * Parts the loader left out (a missing test.sh, a damaged task folder): each becomes its own
   * `broken` result and the rest is checked. Read from the folder when `suite` is a path.
   */
  readonly excluded?: readonly ExcludedPart[];
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
  /** With `cacheChecks`: run the controls again and rewrite the cache instead of reading it. */
  readonly fresh?: boolean;
  /** After each requirement's check, e.g. for progress lines. */
  readonly onCheck?: (check: TaskCheck) => void;
  /** What is being done now (building a task's image, running a control). */
  readonly onActivity?: (activity: string) => void;
}

/** Flags of a control that ended early: its outcome says nothing about the task. */
const UNSETTLED_FLAGS = new Set(["timeout", "agent-timeout", "oom", "process-limit"]);

/**
 * Bumped whenever what a task check measures or holds changes: older cache entries are then
 * ignored (2: status, fault, decisive lines and the stored runs).
 */
const TASK_CHECK_CACHE_FORMAT = 2;

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
        requirement.verifier.user ?? null,
        solution === undefined ? null : [solution.kind, solution.path],
        timeoutSeconds,
        // What a verifier can see differs by backend (unsafe sees the whole machine).
        sandbox.kind,
      ]),
    )
    .digest("hex");
}

const DEFAULT_CONTROL_TIMEOUT_SECONDS = 600;

function control(result: RunResult | undefined, runFile: string | undefined): TaskControl {
  return {
    passRatio: result?.passRatio ?? 0,
    flags: result?.flags ?? [],
    status: result?.status ?? "aborted",
    evidence: result?.verifier?.evidence ?? [],
    decisive: result === undefined ? [] : decisiveLines(result),
    ...(runFile === undefined ? {} : { runFile }),
  };
}

/** A function, not an inline check, so TypeScript does not narrow `aborted` across awaits. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * An error as one line for a problem list: its first line and, when it carries a build log
 * (`env.container-build-failed`) or several lines, the last lines of that, joined by " | ".
 */
function oneLine(error: unknown): string {
  const lines = (text: string) =>
    text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "");
  const [first = "", ...rest] = lines(messageOf(error));
  const log = (error as { data?: { log?: unknown } }).data?.log;
  const tail = (typeof log === "string" ? lines(log) : rest).slice(-6);
  return tail.length === 0 ? first : `${first} — ${tail.join(" | ")}`;
}

/** Check every environment-only task of a suite (skills with a repository are left out). */
export async function checkTasks(options: CheckTasksOptions): Promise<TaskCheck[]> {
  // Controls use no skill: a task imported without one is checked all the same. A task with
  // errors is left out of the suite and reported on its own; it never refuses the others.
  const loaded =
    typeof options.suite === "string"
      ? await loadSuiteSelection(options.suite, {
          controlsOnly: true,
          partial: true,
          keepEmpty: true,
        })
      : { suite: options.suite, excluded: options.excluded ?? [] };
  const suite = loaded.suite;
  const tasks = suite.skills.filter((skill) => skill.repository === undefined);
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_CONTROL_TIMEOUT_SECONDS;
  const context: ExecutionContext = {
    sandbox: options.sandbox,
    baseFor: preparedBases(options.sandbox, options.cacheDir, options.baseImages),
    harnessOf: harnessesFor(suite, undefined, undefined),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const checks: TaskCheck[] = [];
  const emit = (check: TaskCheck) => {
    checks.push(check);
    options.onCheck?.(check);
  };
  for (const check of excludedTaskChecks(loaded.excluded)) emit(check);
  for (const skill of tasks) {
    if (aborted(options.signal)) break;
    const base = await taskBase(skill, context, options);
    if (typeof base === "object" && "failure" in base) {
      for (const requirement of skill.requirements) {
        emit({
          skill: skill.id,
          requirement: requirement.id,
          status: "environment-failure",
          ok: false,
          problems: [base.failure],
          fault: "environment",
        });
      }
      continue;
    }
    for (const requirement of skill.requirements) {
      if (aborted(options.signal)) break;
      emit(await checkRequirement(skill, requirement, base, context, options, timeoutSeconds));
    }
  }
  // In the suite's order of tasks (folder names), not the order they were decided in.
  return checks.sort((left, right) => left.skill.localeCompare(right.skill));
}

/**
 * Whose fault a problem the loader found is, by the part of the task folder it is in (the path
 * below `skills/<task>/`, so a task's own name never decides it): the verifier's folder (test.sh
 * missing), the reference solution's, or the environment's.
 */
function loaderFault(part: ExcludedPart): TaskFault | undefined {
  const inside = (path: string) => {
    const marker = `/skills/${part.skill}/`;
    const index = path.indexOf(marker);
    return index < 0 ? "" : path.slice(index + marker.length);
  };
  const where = (pattern: RegExp) =>
    part.problems.some((problem) => pattern.test(inside(problem.path)));
  if (where(/(^|\/)verifier(\/|\.yaml|$)/)) return "verifier";
  if (where(/(^|\/)solution/)) return "oracle";
  if (where(/(^|\/)environment|dockerfile/i)) return "environment";
  return undefined;
}

/** A task (or one requirement of it) the loader left out: broken, with the loader's reasons. */
export function excludedTaskChecks(excluded: readonly ExcludedPart[]): TaskCheck[] {
  return excluded.flatMap((part) => {
    const requirements =
      part.requirement !== undefined
        ? [part.requirement]
        : (part.requirements ?? []).length > 0
          ? (part.requirements ?? [])
          : [part.skill];
    const fault = loaderFault(part);
    return requirements.map(
      (requirement): TaskCheck => ({
        skill: part.skill,
        requirement,
        status: "broken",
        ok: false,
        problems: part.problems.map(
          (problem) => `${problem.message} (${problem.path}); the task was not run`,
        ),
        ...(fault === undefined ? {} : { fault }),
      }),
    );
  });
}

/** The task's prepared base, or why it cannot be had (its images, its build's last lines). */
async function taskBase(
  skill: SuiteSkill,
  context: ExecutionContext,
  options: CheckTasksOptions,
): Promise<PreparedBase | { failure: string }> {
  const [missing] = await missingTaskImages([skill], options.sandbox, options.baseImages);
  if (missing !== undefined) {
    return {
      failure: `the image cannot be built here: it starts FROM ${missing.images.join(", ")}, not present locally, and no registry is used; map it with ${missing.images.map((image) => `--base-image ${image}=localhost/skillsmith-base:bookworm`).join(" ")}`,
    };
  }
  options.onActivity?.(`${skill.id}: preparing the task's image`);
  try {
    return await context.baseFor(skill);
  } catch (error) {
    if (options.signal?.aborted === true) throw error;
    return { failure: `the task's environment could not be prepared: ${oneLine(error)}` };
  }
}

/** The tag of a cached task check (`<cacheDir>/task-checks/<digest>.json`). */
const TASK_CHECK_FILE_FORMAT = formatTag("task-check", 1);

const taskControlSchema = z.object({
  passRatio: z.number().min(0).max(1),
  flags: z.array(z.string()),
  status: z.string(),
  evidence: z.array(z.string()),
  decisive: z.array(z.string()).exactOptional(),
  runFile: z.string().exactOptional(),
});

/** A cached task check; entries written before the tag have none (the digest keys the rest). */
const cachedTaskCheckSchema = readingOlderTags(
  z.object({
    format: formatTagSchema(TASK_CHECK_FILE_FORMAT),
    skill: z.string(),
    requirement: z.string(),
    status: z.enum(["ok", "broken", "environment-failure"]),
    oracle: taskControlSchema.exactOptional(),
    untouched: taskControlSchema.exactOptional(),
    ok: z.boolean(),
    problems: z.array(z.string()),
    fault: z.enum(["environment", "oracle", "verifier", "skillsmith"]).exactOptional(),
  }),
  TASK_CHECK_FILE_FORMAT,
  [{ style: "none" }],
);

/**
 * The check cached in `cacheFile` for this requirement, or undefined when there is none to
 * trust: missing, unreadable, not JSON, not a task check (a damaged or planted file) or another
 * requirement's. The caller then checks again and rewrites it: the cache only saves time, and a
 * check is never taken from a file its schema refuses.
 */
export async function readCachedTaskCheck(
  cacheFile: string,
  skill: string,
  requirement: string,
): Promise<TaskCheck | undefined> {
  const text = await readFile(cacheFile, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = parseJsonResult(cachedTaskCheckSchema, text);
  if (!parsed.ok) return undefined;
  const { format: _format, ...check } = parsed.value;
  // A verdict that contradicts itself is not a measurement either.
  if (check.ok !== (check.status === "ok") || check.ok !== (check.problems.length === 0))
    return undefined;
  return check.skill === skill && check.requirement === requirement
    ? { ...check, cached: true }
    : undefined;
}

/** Run one control and store its run beside the cache, so its whole output can be read later. */
async function runControl(
  name: "oracle" | "untouched",
  run: PlannedRun,
  context: ExecutionContext,
  runFolder: string,
): Promise<{ control: TaskControl; failure?: string }> {
  let result: RunResult | undefined;
  try {
    result = await executeRun(run, context, 1, new Date().toISOString());
  } catch (error) {
    return {
      control: control(undefined, undefined),
      failure: `the ${name} run could not be carried out: ${messageOf(error)}`,
    };
  }
  let runFile: string | undefined;
  if (result !== undefined) {
    await mkdir(runFolder, { recursive: true });
    runFile = join(runFolder, `${name}.json`);
    await writeFileAtomic(runFile, `${JSON.stringify(result, null, 2)}\n`);
  }
  return { control: control(result, runFile) };
}

async function checkRequirement(
  skill: SuiteSkill,
  requirement: SuiteRequirement,
  base: PreparedBase,
  context: ExecutionContext,
  options: CheckTasksOptions,
  timeoutSeconds: number,
): Promise<TaskCheck> {
  const digest = await taskCheckDigest(base, requirement, timeoutSeconds, options.sandbox);
  const cacheFile = join(options.cacheDir, "task-checks", `${digest}.json`);
  if (options.cacheChecks === true && options.fresh !== true) {
    const cached = await readCachedTaskCheck(cacheFile, skill.id, requirement.id);
    if (cached !== undefined) return cached;
  }
  const runFolder = join(options.cacheDir, "task-checks", "runs", digest);
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
  const limits = { timeoutSeconds };
  options.onActivity?.(`${skill.id}/${requirement.id}: the untouched control`);
  const bare = await runControl(
    "untouched",
    run({ id: "untouched", agent: "none", limits }),
    context,
    runFolder,
  );
  let solved: Awaited<ReturnType<typeof runControl>> | undefined;
  if (requirement.solution !== undefined) {
    options.onActivity?.(`${skill.id}/${requirement.id}: the oracle (solve.sh)`);
    solved = await runControl(
      "oracle",
      run({ id: "oracle", agent: "oracle", limits }),
      context,
      runFolder,
    );
  }
  const problems = controlProblems(bare, solved, requirement.solution !== undefined);
  const fault =
    problems.length === 0
      ? undefined
      : taskFault({
          untouched: bare.control,
          ...(solved === undefined ? {} : { oracle: solved.control }),
          hasSolution: requirement.solution !== undefined,
          workdir: base.workspaceMountPath,
          crashed: bare.failure !== undefined || solved?.failure !== undefined,
        });
  const check: TaskCheck = {
    skill: skill.id,
    requirement: requirement.id,
    status: problems.length === 0 ? "ok" : "broken",
    ...(solved === undefined ? {} : { oracle: solved.control }),
    untouched: bare.control,
    ok: problems.length === 0,
    problems,
    ...(fault === undefined ? {} : { fault }),
  };
  // Only a check whose controls both ran to the end is kept: one that was aborted, timed out,
  // hit a limit or lost its run to infrastructure measured nothing lasting, and is decided
  // again next time rather than holding the task back for good.
  const measured = [bare, ...(solved === undefined ? [] : [solved])].every(
    (each) =>
      each.failure === undefined &&
      each.control.status === "completed" &&
      !each.control.flags.some((flag) => UNSETTLED_FLAGS.has(flag)),
  );
  if (options.cacheChecks === true && measured && options.signal?.aborted !== true) {
    await mkdir(join(options.cacheDir, "task-checks"), { recursive: true });
    await writeFileAtomic(
      cacheFile,
      `${JSON.stringify({ format: TASK_CHECK_FILE_FORMAT, ...check })}\n`,
    );
  }
  return check;
}

type ControlOutcome = { control: TaskControl; failure?: string };

function controlProblems(
  bare: ControlOutcome,
  solved: ControlOutcome | undefined,
  hasSolution: boolean,
): string[] {
  const problems: string[] = [];
  const lines = (outcome: ControlOutcome) =>
    (outcome.control.decisive ?? []).length === 0
      ? ""
      : ` — ${(outcome.control.decisive ?? []).join(" | ")}`;
  if (!hasSolution) {
    problems.push("no reference solution (solution/solve.sh): the oracle cannot run");
  } else if (solved !== undefined) {
    const oracle = solved.control;
    if (solved.failure !== undefined) problems.push(solved.failure);
    else if (oracle.status !== "completed") {
      problems.push(`solve.sh failed (status ${oracle.status})${lines(solved)}`);
    } else if (oracle.flags.includes("reward-missing")) {
      problems.push(
        `the oracle run wrote no reward: ${oracle.evidence.join("; ")}${lines(solved)}`,
      );
    } else if (oracle.passRatio < 1) {
      problems.push(
        `the oracle reaches ${oracle.passRatio}, not 1 (${oracle.flags.join(", ") || "no flags"})${lines(solved)}`,
      );
    }
  }
  if (bare.failure !== undefined) problems.push(bare.failure);
  else if (bare.control.flags.includes("reward-missing")) {
    problems.push(
      `the untouched run wrote no reward: ${bare.control.evidence.join("; ")}${lines(bare)}`,
    );
  } else if (bare.control.passRatio >= 1) {
    problems.push("the untouched working directory already passes: the task tests nothing");
  }
  return problems;
}
