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
  loadSuiteSelection,
  openSandbox,
  renderCheckText,
  type SuiteCheck,
  skillEnvironments,
} from "../../bench/index.js";
import { createSandbox, defaultCacheDir, parseBaseImageMap } from "../../env/index.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";
import {
  collect,
  positiveInteger,
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
    .option("--sandbox <kind>", "local (bubblewrap) | container | unsafe", "local")
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

export function registerCheckTasks(bench: Command, context: CommandContext): void {
  const { io } = context;
  bench
    .command("check-tasks")
    .description(
      "Check environment-only (Harbor) tasks in the container sandbox: the oracle's solve.sh must reach reward 1, the untouched working directory must not (exit 1 otherwise)",
    )
    .argument("<suite>", "the suite folder (e.g. from bench import harbor)")
    .option(
      "--base-image <image=local>",
      "build FROM <image> from a local image instead (repeatable)",
      collect,
    )
    .option("--json", "print [{skill, requirement, oracle, untouched, ok, problems}] as JSON")
    .action(async (suitePath: string, options: { baseImage?: string[]; json?: boolean }) => {
      const baseImages = parseBaseImageMap(options.baseImage ?? []);
      const sandbox = await createSandbox({ kind: "container" });
      let checks: Awaited<ReturnType<typeof checkTasks>>;
      try {
        checks = await checkTasks({
          suite: resolve(io.cwd, suitePath),
          sandbox,
          cacheDir: defaultCacheDir(io.env),
          baseImages,
        });
      } finally {
        await sandbox.dispose?.();
      }
      if (options.json === true) printJson(io, checks);
      else {
        printLines(
          io,
          checks.map(
            (check) =>
              `${check.ok ? "ok  " : "FAIL"} ${check.skill}/${check.requirement}: oracle ${check.oracle?.passRatio ?? "-"}, untouched ${check.untouched.passRatio}${check.problems.length === 0 ? "" : ` — ${check.problems.join("; ")}`}`,
          ),
        );
        if (checks.length === 0) printLines(io, ["no environment-only tasks in this suite"]);
      }
      if (checks.some((check) => !check.ok)) context.exit(1);
    });
}
