/**
 * `skillsmith bench check | check-tasks`: verifiers on the untouched repository (and the
 * reference solution), and environment-only tasks' oracle, before any agent time is spent.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import {
  checkJson,
  checkSuite,
  checkTasks,
  excludedTaskChecks,
  loadSuiteSelection,
  openSandbox,
  renderCheckText,
  renderTaskChecks,
  type SuiteCheck,
  skillEnvironments,
  type TaskCheck,
  taskCheckLine,
} from "../../bench/index.js";
import { createSandbox, defaultCacheDir, parseBaseImageMap } from "../../env/index.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";
import {
  collect,
  positiveInteger,
  sandboxKindHelp,
  sandboxKindOf,
  selectionOf,
  setupNetworkOf,
  weakThresholdOf,
  withSelectionOptions,
  withSetupNetworkOptions,
} from "./bench-options.js";

interface CheckOptions {
  skill?: string[];
  requirement?: string[];
  json?: boolean;
  sandbox: string;
  unsafeNoSandbox?: boolean;
  weakThreshold?: string;
  setupNetwork?: boolean;
  fresh?: boolean;
  concurrency?: number;
}

export function registerCheck(bench: Command, context: CommandContext): void {
  const { io } = context;
  const command = bench
    .command("check")
    .description(
      "Prepare each skill's environment and run every verifier on the untouched repository (and on the reference solution): each requirement ok, weak or broken (exit 1 when any is weak or broken)",
    )
    .argument("<suite>", "the suite folder");
  withSelectionOptions(command, "check")
    .option("--sandbox <kind>", sandboxKindHelp(), "local")
    .option("--unsafe-no-sandbox", "run verifiers without isolation (same as --sandbox unsafe)")
    .option(
      "--weak-threshold <share>",
      "a verifier passing at least this share of its checks untouched is weak (default 0.5; SKILLSMITH_WEAK_THRESHOLD)",
    );
  withSetupNetworkOptions(command)
    .option("--fresh", "measure again instead of reusing cached measurements")
    .option(
      "--concurrency <n>",
      "verifier runs at the same time (default 1)",
      positiveInteger("--concurrency"),
    )
    .option(
      "--json",
      'print {"requirements":[{"skill","requirement","status","untouchedPassRatio","reason"}]}',
    )
    .action(async (suitePath: string, options: CheckOptions) => {
      const sandboxKind = sandboxKindOf(options);
      const weakThreshold = weakThresholdOf(options.weakThreshold, io.env);
      const setupNetwork = setupNetworkOf(options.setupNetwork, io.env);
      const loaded = await loadSuiteSelection(resolve(io.cwd, suitePath), {
        ...selectionOf(options),
        partial: true,
      });
      for (const part of loaded.excluded) {
        log(
          io,
          `left out ${part.requirement === undefined ? `skill ${part.skill}` : `${part.skill}/${part.requirement}`}: ${part.problems.map((problem) => problem.message).join("; ")}`,
        );
      }
      const sandbox = await openSandbox(sandboxKind, (message) => log(io, message));
      const cacheDir = defaultCacheDir(io.env);
      const started = performance.now();
      let check: SuiteCheck;
      try {
        check = await checkSuite({
          suite: loaded.suite,
          excluded: loaded.excluded,
          environmentFor: skillEnvironments({
            sandbox,
            cacheDir,
            setupNetwork,
            onLog: (line) => log(io, line),
          }),
          cacheDir,
          weakThreshold,
          ...(options.fresh === true ? { fresh: true } : {}),
          ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
          onProgress: (progress) => {
            const last = progress.last;
            if (last === undefined) return;
            log(
              io,
              `[${progress.done}/${progress.total} ${Math.round((performance.now() - started) / 1000)}s] ${last.skill}/${last.requirement}: ${last.status}${last.untouchedPassRatio === null ? "" : ` (${Math.round(last.untouchedPassRatio * 1000) / 10}% untouched)`}${last.cached ? " [cached]" : ""}`,
            );
          },
        });
      } finally {
        await sandbox.dispose?.();
      }
      if (options.json === true) printJson(io, checkJson(check));
      else printLines(io, renderCheckText(check));
      if (check.requirements.some((requirement) => requirement.status !== "ok")) context.exit(1);
    });
}

interface CheckTasksCliOptions {
  baseImage?: string[];
  skill?: string[];
  task?: string[];
  requirement?: string[];
  json?: boolean;
  fresh?: boolean;
}

export function registerCheckTasks(bench: Command, context: CommandContext): void {
  const { io } = context;
  const command = bench
    .command("check-tasks")
    .description(
      "Check environment-only (Harbor) tasks in the container sandbox, task by task: the oracle's solve.sh must reach reward 1, the untouched working directory must not; a task whose image cannot be built is environment-failure and the rest go on (exit 1 when any task is not ok)",
    )
    .argument("<suite>", "the suite folder (e.g. from bench import harbor)");
  withSelectionOptions(command, "check")
    .option("--task <id>", "check only this task (a skill id of the suite; repeatable)", collect)
    .option(
      "--base-image <image=local>",
      "build FROM <image> from a local image instead (repeatable)",
      collect,
    )
    .option("--fresh", "run the controls again instead of reusing cached checks")
    .option(
      "--json",
      "print [{skill, requirement, status, ok, fault, problems, oracle, untouched}] as JSON",
    )
    .action(async (suitePath: string, options: CheckTasksCliOptions) => {
      const baseImages = parseBaseImageMap(options.baseImage ?? []);
      const skills = [...(options.skill ?? []), ...(options.task ?? [])];
      // A task the loader leaves out (no test.sh, say) is its own broken result, never a
      // reason to refuse the rest of the suite.
      const loaded = await loadSuiteSelection(resolve(io.cwd, suitePath), {
        ...selectionOf({ ...options, ...(skills.length === 0 ? {} : { skill: skills }) }),
        partial: true,
        controlsOnly: true,
        keepEmpty: true,
      });
      const runnable = loaded.suite.skills
        .filter((skill) => skill.repository === undefined)
        .reduce((sum, skill) => sum + skill.requirements.length, 0);
      const excluded = excludedTaskChecks(loaded.excluded);
      const total = runnable + excluded.length;
      const started = performance.now();
      let done = 0;
      const onCheck = (check: TaskCheck) => {
        done += 1;
        log(
          io,
          `[${done}/${total} ${Math.round((performance.now() - started) / 1000)}s] ${taskCheckLine(check)}`,
        );
      };
      let checks: TaskCheck[];
      if (runnable === 0) {
        // Nothing to run needs no container engine: the excluded tasks are still reported.
        checks = excluded;
        for (const check of checks) onCheck(check);
      } else {
        const sandbox = await createSandbox({ kind: "container" });
        try {
          checks = await checkTasks({
            suite: loaded.suite,
            excluded: loaded.excluded,
            sandbox,
            cacheDir: defaultCacheDir(io.env),
            baseImages,
            cacheChecks: true,
            ...(options.fresh === true ? { fresh: true } : {}),
            onActivity: (activity) => log(io, `… ${activity}`),
            onCheck,
          });
        } finally {
          await sandbox.dispose?.();
        }
      }
      if (options.json === true) printJson(io, checks);
      else printLines(io, renderTaskChecks(checks));
      const failing = checks.filter((check) => !check.ok).length;
      if (failing > 0) {
        log(io, `${failing} of ${checks.length} task requirement(s) cannot be scored`);
        context.exit(1);
      }
    });
}
