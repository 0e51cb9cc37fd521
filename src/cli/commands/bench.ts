import { resolve } from "node:path";
import type { Command } from "commander";
import { generateSuite } from "../../bench/generate/index.js";
import type { ImportResult, SandboxKind } from "../../bench/index.js";
import {
  AGENT_KINDS,
  type AgentKind,
  checkJson,
  checkSuite,
  checkTasks,
  createProgressRenderer,
  DEFAULT_WEAK_THRESHOLD,
  defaultRunDir,
  endpointFromEnvironment,
  formatSuiteProblem,
  importHarbor,
  importSweSkillsBench,
  loadSuiteSelection,
  openSandbox,
  parseRateLimit,
  parseVariantOption,
  type RateLimit,
  redactRedisUrl,
  regradeRunDir,
  renderCheckText,
  renderReportText,
  reportRunDir,
  runSuite,
  runSuiteOnQueue,
  type SuiteCheck,
  type SuiteSelection,
  skillEnvironments,
  validateSuite,
  withVariants,
} from "../../bench/index.js";
import { UsageError } from "../../core/errors.js";
import {
  createSandbox,
  defaultCacheDir,
  parseBaseImageMap,
  SandboxUnavailableError,
  type SetupNetworkChoice,
  UnsafeSandbox,
} from "../../env/index.js";
import { loadModelConfig, ModelClient, writeRedactedFile } from "../../model/index.js";
import { renderHtmlReport } from "../../report/index.js";
import { type CliIo, type CommandContext, log, printJson, printLines } from "../context.js";

/** Exit code when an import produced nothing (a usage or input problem, as documented). */
const NOTHING_IMPORTED_EXIT = 2;

function report(
  result: ImportResult,
  json: boolean,
  layout: string,
  io: CliIo,
  context: CommandContext,
): void {
  for (const note of result.notes) log(io, `note: ${note}`);
  if (json) {
    printJson(io, {
      skills: result.skills,
      requirements: result.requirements,
      problems: result.problems.map(({ path, message }) => ({ path, message })),
      ...(result.copied === undefined ? {} : { copied: result.copied }),
    });
  } else {
    if (result.out !== undefined) {
      printLines(io, [
        `imported ${result.skills} skill${result.skills === 1 ? "" : "s"} and ${result.requirements} requirement${result.requirements === 1 ? "" : "s"} into ${result.out}`,
      ]);
    }
    if (result.problems.length > 0) {
      printLines(io, [
        `${result.problems.length} problem${result.problems.length === 1 ? "" : "s"} (not imported, or imported incompletely):`,
        ...result.problems.map((problem) => `  ${problem.path}: ${problem.message}`),
      ]);
    }
    if ((result.copied ?? []).length > 0) {
      printLines(io, [
        `${result.copied?.length} helper file${result.copied?.length === 1 ? "" : "s"} copied beside the verifiers that import them (${[...new Set((result.copied ?? []).map((helper) => helper.path))].join(", ")})`,
      ]);
    }
    if (result.out !== undefined) {
      printLines(io, [
        `next: skillsmith bench validate-suite ${result.out}`,
        `then: skillsmith bench check ${result.out}   (environments and verifiers on the untouched repositories)`,
      ]);
    }
  }
  if (result.skills === 0) {
    log(io, `error: nothing could be imported from the ${layout} input (see the problems above)`);
    context.exit(NOTHING_IMPORTED_EXIT);
  }
}

/**
 * `skillsmith bench ...`: suites of skills × requirements × verifiers, their validation, and
 * importers of public benchmark layouts.
 */
export function registerBench(program: Command, context: CommandContext): void {
  const { io } = context;
  const bench = program
    .command("bench")
    .description("Evaluate whether a skill helps an agent: suites, imports, validation");

  const importCommand = bench
    .command("import")
    .description("Create a suite from a public benchmark layout");

  importCommand
    .command("swe-skills-bench")
    .description(
      "Import the SWE-Skills-Bench layout (config/benchmark_config.yaml, skills/, tasks/batchN/, tests/batchN/)",
    )
    .argument("<dir>", "the benchmark folder")
    .requiredOption("--out <suite>", "suite folder to create (must not exist or be empty)")
    .option(
      "--repo-root <dir>",
      "folder holding local clones, <dir>/<repo-name>, used instead of remote URLs when present",
    )
    .option("--json", "print {skills, requirements, problems} as JSON")
    .action(
      async (directory: string, options: { out: string; repoRoot?: string; json?: boolean }) => {
        const result = await importSweSkillsBench(resolve(io.cwd, directory), {
          out: resolve(io.cwd, options.out),
          ...(options.repoRoot === undefined
            ? {}
            : { repoRoot: resolve(io.cwd, options.repoRoot) }),
        });
        report(result, options.json === true, "SWE-Skills-Bench", io, context);
      },
    );

  importCommand
    .command("harbor")
    .description(
      "Import Harbor / Terminal-Bench / SkillsBench task folders (instruction.md, task.toml, environment/, tests/, solution/)",
    )
    .argument("<task-dir...>", "task folders, or folders of task folders")
    .requiredOption("--out <suite>", "suite folder to create (must not exist or be empty)")
    .option("--skill <dir>", "Agent Skills folder for tasks that ship no skills of their own")
    .option("--json", "print {skills, requirements, problems} as JSON")
    .action(
      async (directories: string[], options: { out: string; skill?: string; json?: boolean }) => {
        const result = await importHarbor(
          directories.map((directory) => resolve(io.cwd, directory)),
          {
            out: resolve(io.cwd, options.out),
            ...(options.skill === undefined ? {} : { skill: resolve(io.cwd, options.skill) }),
          },
        );
        report(result, options.json === true, "Harbor", io, context);
      },
    );

  bench
    .command("validate-suite")
    .description(
      "Check a suite folder completely — files, schemas, pinned commits — and print every problem (exit 1 on errors)",
    )
    .argument("<suite>", "the suite folder")
    .option("--skill <id>", "check only this skill (repeatable)", collect)
    .option(
      "--requirement <id>",
      "check only this requirement: batch1, or skill/batch1 (repeatable)",
      collect,
    )
    .option(
      "--no-commits",
      "do not check that pinned commits exist (reads local repositories and bundles)",
    )
    .option("--json", "print {valid, errors, warnings, problems} as JSON")
    .action(
      async (
        suitePath: string,
        options: { json?: boolean; skill?: string[]; requirement?: string[]; commits?: boolean },
      ) => {
        const validation = await validateSuite(resolve(io.cwd, suitePath), {
          ...selectionOf(options),
          checkCommits: options.commits !== false,
        });
        const errors = validation.problems.filter((problem) => problem.severity === "error").length;
        const warnings = validation.problems.length - errors;
        const suite = validation.suite ?? validation.runnable;
        const counts =
          suite === undefined
            ? {}
            : {
                skills: suite.skills.length,
                requirements: suite.skills.reduce(
                  (total, skill) => total + skill.requirements.length,
                  0,
                ),
                configurations: suite.configurations.map((configuration) => configuration.id),
              };
        if (options.json === true) {
          printJson(io, {
            valid: validation.valid,
            errors,
            warnings,
            problems: validation.problems,
            ...(validation.valid ? counts : {}),
            ...(validation.runnable !== undefined && !validation.valid
              ? { runnable: counts, excluded: validation.excluded }
              : {}),
          });
        } else {
          printLines(io, validation.problems.map(formatSuiteProblem));
          if (validation.suite !== undefined) {
            printLines(io, [
              `suite "${validation.suite.name}" is valid: ${counts.skills} skills, ${counts.requirements} requirements, ${validation.suite.configurations.length} configurations${warnings > 0 ? ` (${warnings} warnings)` : ""}`,
            ]);
          } else {
            printLines(io, [
              `${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}${
                validation.runnable === undefined
                  ? ": the suite cannot run until the errors are fixed"
                  : `: ${counts.requirements} requirement${counts.requirements === 1 ? "" : "s"} of ${counts.skills} skill${counts.skills === 1 ? "" : "s"} can run; bench check and bench run leave out (and report) the ${validation.excluded.length} part${validation.excluded.length === 1 ? "" : "s"} with errors`
              }`,
            ]);
          }
        }
        if (!validation.valid) context.exit(1);
      },
    );

  registerCheck(bench, context);
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

  registerRunAndReport(bench, context);
  registerRegrade(bench, context);
  registerGenerate(bench, context);
}

/** A commander parser for `flag`'s value: a whole number ≥ 1, else a `UsageError`. */
export function positiveInteger(flag: string): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 1) {
      throw new UsageError("option-invalid", `${flag} expects a positive integer (got "${value}")`);
    }
    return parsed;
  };
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function selectionOf(options: { skill?: string[]; requirement?: string[] }): SuiteSelection {
  return {
    ...(options.skill === undefined ? {} : { skills: options.skill }),
    ...(options.requirement === undefined ? {} : { requirements: options.requirement }),
  };
}

/** `--setup-network` / `--no-setup-network`, else SKILLSMITH_SETUP_NETWORK, else auto. */
function setupNetworkOf(
  flag: boolean | undefined,
  env: Readonly<Record<string, string | undefined>>,
): SetupNetworkChoice {
  if (flag === true) return "on";
  if (flag === false) return "off";
  const fromEnv = env.SKILLSMITH_SETUP_NETWORK;
  if (fromEnv === undefined || fromEnv === "") return "auto";
  if (fromEnv === "auto" || fromEnv === "on" || fromEnv === "off") return fromEnv;
  throw new UsageError(
    "option-invalid",
    `SKILLSMITH_SETUP_NETWORK expects auto, on or off (got "${fromEnv}")`,
  );
}

/** `--weak-threshold`, else SKILLSMITH_WEAK_THRESHOLD, else the default (½). */
function weakThresholdOf(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): number {
  const text = flag ?? env.SKILLSMITH_WEAK_THRESHOLD;
  if (text === undefined || text === "") return DEFAULT_WEAK_THRESHOLD;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || value > 1) {
    throw new UsageError(
      "option-invalid",
      `${flag === undefined ? "SKILLSMITH_WEAK_THRESHOLD" : "--weak-threshold"} expects a share of checks in (0, 1], e.g. 0.5 (got "${text}")`,
    );
  }
  return value;
}

function sandboxKindOf(options: { sandbox: string; unsafeNoSandbox?: boolean }): SandboxKind {
  const kind = options.unsafeNoSandbox === true ? "unsafe" : options.sandbox;
  if (!["local", "container", "unsafe"].includes(kind)) {
    throw new UsageError(
      "option-invalid",
      `--sandbox expects local, container or unsafe (got "${options.sandbox}")`,
    );
  }
  return kind as SandboxKind;
}

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

function registerCheck(bench: Command, context: CommandContext): void {
  const { io } = context;
  bench
    .command("check")
    .description(
      "Prepare each skill's environment and run every verifier on the untouched repository (and on the reference solution): each requirement ok, weak or broken (exit 1 when any is weak or broken)",
    )
    .argument("<suite>", "the suite folder")
    .option("--skill <id>", "check only this skill (repeatable)", collect)
    .option(
      "--requirement <id>",
      "check only this requirement: batch1, or skill/batch1 (repeatable)",
      collect,
    )
    .option("--sandbox <kind>", "local (bubblewrap) | container | unsafe", "local")
    .option("--unsafe-no-sandbox", "run verifiers without isolation (same as --sandbox unsafe)")
    .option(
      "--weak-threshold <share>",
      "a verifier passing at least this share of its checks untouched is weak (default 0.5; SKILLSMITH_WEAK_THRESHOLD)",
    )
    .option(
      "--setup-network",
      "let setup use the network (default: when the package index answers)",
    )
    .option("--no-setup-network", "prepare environments offline, from what is already present")
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

interface RunOptions {
  agent?: string;
  model?: string;
  config?: string[];
  concurrency?: number;
  repeats?: number;
  budgetUsd?: string;
  out?: string;
  predictions?: string;
  sandbox: string;
  unsafeNoSandbox?: boolean;
  maxAttempts?: number;
  resume?: boolean;
  json?: boolean;
  queue?: string;
  rateLimit?: string[];
  pollInterval?: number;
  variant?: string[];
  reuse?: string[];
  freshBaseline?: boolean;
  skill?: string[];
  requirement?: string[];
  check?: boolean;
  weakThreshold?: string;
  setupNetwork?: boolean;
  baseImage?: string[];
}

function registerRunAndReport(bench: Command, context: CommandContext): void {
  const { io } = context;
  bench
    .command("run")
    .description(
      "Run every configuration × skill × requirement × arm (without, with) not yet stored, and print the verdicts; re-running resumes",
    )
    .argument("<suite>", "the suite folder")
    .option(
      "--agent <name>",
      `replace the agent of every configuration (${AGENT_KINDS.join(", ")})`,
    )
    .option(
      "--model <spec>",
      "replace the model of every configuration (e.g. anthropic:claude-sonnet-4-5)",
    )
    .option("--config <id>", "run only this configuration (repeatable)", collect)
    .option(
      "--concurrency <n>",
      "runs at the same time (default 1)",
      positiveInteger("--concurrency"),
    )
    .option(
      "--repeats <n>",
      "runs per requirement and arm (default 1)",
      positiveInteger("--repeats"),
    )
    .option("--budget-usd <x>", "stop scheduling new runs once the recorded cost reaches this")
    .option("--out <run-dir>", "run directory (default runs/<suite name>)")
    .option("--predictions <file>", "recorded patches for the replay agent (JSONL)")
    .option("--sandbox <kind>", "local (bubblewrap) | container | unsafe", "local")
    .option(
      "--unsafe-no-sandbox",
      "run agents and verifiers without isolation (same as --sandbox unsafe)",
    )
    .option(
      "--max-attempts <n>",
      "attempts per run before an infrastructure failure gives up (default 3)",
      positiveInteger("--max-attempts"),
    )
    .option(
      "--resume",
      "continue the run in --out (it must exist); re-running without it resumes too",
    )
    .option(
      "--queue <url>",
      "enqueue the runs on Redis (redis://host:port/db, rediss://:password@host:port/db) for `skillsmith worker` processes, and collect their results here",
    )
    .option(
      "--rate-limit <model=runs/secs>",
      "with --queue: at most <runs> runs of a provider:model start per <secs> seconds over all workers, e.g. anthropic:claude-sonnet-4-5=30/60s (repeatable)",
      collect,
    )
    .option(
      "--poll-interval <ms>",
      "with --queue: how often finished jobs are collected (default 1000)",
      positiveInteger("--poll-interval"),
    )
    .option("--skill <id>", "run only this skill (repeatable)", collect)
    .option(
      "--requirement <id>",
      "run only this requirement: batch1, or skill/batch1 (repeatable)",
      collect,
    )
    .option(
      "--no-check",
      "skip the verifier check before the runs (broken verifiers then cost agent time)",
    )
    .option(
      "--weak-threshold <share>",
      "a verifier passing at least this share of its checks untouched is weak (default 0.5)",
    )
    .option(
      "--setup-network",
      "let setup use the network (default: when the package index answers)",
    )
    .option("--no-setup-network", "prepare environments offline, from what is already present")
    .option(
      "--variant <[skill:]name=dir>",
      "also run this version of the skill (an Agent Skills folder) as its own arm; the report compares every pair of arms (repeatable)",
      collect,
    )
    .option(
      "--reuse <run-dir>",
      "copy unassisted runs from this earlier run directory when everything that determines them is the same (repeatable)",
      collect,
    )
    .option("--fresh-baseline", "run every unassisted run afresh, even with --reuse")
    .option(
      "--base-image <image=local>",
      "build environment-only (Harbor) tasks whose Dockerfile starts FROM <image> from a local image instead, e.g. ubuntu:24.04=localhost/skillsmith-base:bookworm (repeatable; recorded in the manifest)",
      collect,
    )
    .option("--json", "print {run, report} as JSON on stdout")
    .action(async (suitePath: string, options: RunOptions) => {
      if (
        options.agent !== undefined &&
        !(AGENT_KINDS as readonly string[]).includes(options.agent)
      ) {
        throw new UsageError(
          "option-invalid",
          `--agent expects one of ${AGENT_KINDS.join(", ")} (got "${options.agent}")`,
        );
      }
      const sandboxKind = sandboxKindOf(options);
      const weakThreshold = weakThresholdOf(options.weakThreshold, io.env);
      const setupNetwork = setupNetworkOf(options.setupNetwork, io.env);
      const selection = selectionOf(options);
      let budgetUsd: number | undefined;
      if (options.budgetUsd !== undefined) {
        budgetUsd = Number(options.budgetUsd);
        if (!Number.isFinite(budgetUsd) || budgetUsd < 0) {
          throw new UsageError(
            "option-invalid",
            `--budget-usd expects a number ≥ 0 (got "${options.budgetUsd}")`,
          );
        }
      }
      // Skills and requirements with broken files are left out and reported; the rest runs.
      const { suite: selected } = await loadSuiteSelection(resolve(io.cwd, suitePath), {
        ...selection,
        partial: true,
      });
      const variants = (options.variant ?? []).map((text) => parseVariantOption(text, io.cwd));
      const suite = await withVariants(selected, variants);
      if (options.queue !== undefined && (options.variant ?? []).length > 0) {
        throw new UsageError(
          "option-invalid",
          "--variant with --queue: workers load the suite from disk and would not see the command line's variants; declare them in skill.yaml (variants:)",
        );
      }
      if (options.queue !== undefined && (options.reuse ?? []).length > 0) {
        throw new UsageError("option-invalid", "--reuse is not supported with --queue yet");
      }
      const runDir =
        options.out === undefined ? defaultRunDir(io.cwd, suite) : resolve(io.cwd, options.out);
      const terminal = io.stderrIsTerminal === true;
      const progress = createProgressRenderer(io.stderr, terminal && options.json !== true);
      log(io, `run directory: ${runDir}`);
      if (options.queue === undefined) {
        for (const [flag, value] of [
          ["--rate-limit", options.rateLimit],
          ["--poll-interval", options.pollInterval],
        ] as const) {
          if (value !== undefined) throw new UsageError("option-invalid", `${flag} needs --queue`);
        }
      }
      const rateLimits: Record<string, RateLimit> = {};
      for (const text of options.rateLimit ?? []) {
        const { group, limit } = parseRateLimit(text);
        rateLimits[group] = limit;
      }
      const baseImages = parseBaseImageMap(options.baseImage ?? []);
      let summary: Awaited<ReturnType<typeof runSuite>>;
      const common = {
        suite: resolve(io.cwd, suitePath),
        runDir,
        selection,
        ...(variants.length === 0 ? {} : { variants }),
        ...(options.check === false ? { check: false } : {}),
        weakThreshold,
        setupNetwork,
        onLog: (line: string) => {
          progress.finish();
          log(io, line);
        },
        ...(options.config === undefined ? {} : { configs: options.config }),
        ...(options.agent === undefined ? {} : { agentOverride: options.agent as AgentKind }),
        ...(options.model === undefined ? {} : { modelOverride: options.model }),
        ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
        ...(options.repeats === undefined ? {} : { repeats: options.repeats }),
        ...(budgetUsd === undefined ? {} : { budgetUsd }),
        ...(options.predictions === undefined
          ? {}
          : { predictions: resolve(io.cwd, options.predictions) }),
        ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
        ...(options.resume === true ? { resume: true } : {}),
        ...(options.reuse === undefined
          ? {}
          : { reuse: options.reuse.map((dir) => resolve(io.cwd, dir)) }),
        ...(options.freshBaseline === true ? { freshBaseline: true } : {}),
        sandbox: sandboxKind as SandboxKind,
        ...(Object.keys(baseImages).length === 0 ? {} : { baseImages }),
        modelEndpoint: endpointFromEnvironment(io.env),
        // The config's price overrides: Codex and builtin runs cost their tokens at these prices.
        prices: loadModelConfig({ cwd: io.cwd, env: io.env }).config.prices ?? {},
        commandLine: ["skillsmith", "bench", "run", suitePath, ...commandLineOptions(options)],
        onProgress: progress.update,
        onWarning: (message: string) => {
          progress.finish();
          log(io, message);
        },
      };
      try {
        if (options.queue === undefined) {
          summary = await runSuite(common);
        } else {
          log(
            io,
            `queue: ${redactRedisUrl(options.queue)} (start workers with: skillsmith worker --queue <url>)`,
          );
          summary = await runSuiteOnQueue({
            ...common,
            queue: options.queue,
            rateLimits,
            ...(options.pollInterval === undefined ? {} : { pollIntervalMs: options.pollInterval }),
            onConnectionEvent: (message: string) => {
              progress.finish();
              log(io, message);
            },
          });
        }
      } finally {
        progress.finish();
      }
      const report = await reportRunDir(runDir);
      if (options.json === true) {
        printJson(io, { run: summary, report });
      } else {
        printLines(io, renderReportText(report));
        const check = summary.check;
        const counts = { ok: 0, weak: 0, broken: 0 };
        for (const requirement of check?.requirements ?? []) counts[requirement.status] += 1;
        // A broken requirement of a skill whose environment failed is stored as that failure.
        const failedSkills = new Set(
          (summary.environmentFailures ?? []).map((entry) => entry.skill),
        );
        const brokenBySetup = (check?.requirements ?? []).filter(
          (requirement) => requirement.status === "broken" && failedSkills.has(requirement.skill),
        ).length;
        const brokenParts = [
          ...(counts.broken - brokenBySetup > 0 || brokenBySetup === 0
            ? [`${counts.broken - brokenBySetup} flagged broken-verifier`]
            : []),
          ...(brokenBySetup > 0 ? [`${brokenBySetup} flagged environment-failure`] : []),
        ];
        printLines(io, [
          "",
          ...(check === undefined
            ? ["verifier check skipped (--no-check)"]
            : [
                `verifier check: ${counts.ok} ok, ${counts.weak} weak (run, flagged weak-verifier), ${counts.broken} broken (not run: ${brokenParts.join(", ")})`,
              ]),
          ...(summary.environmentFailures ?? []).map(
            (failure) => `environment of ${failure.skill} failed (not run): ${failure.reason}`,
          ),
          `${summary.executed} run${summary.executed === 1 ? "" : "s"} scored now${(summary.reused ?? 0) === 0 ? "" : ` (${summary.reused} unassisted reused from --reuse)`}, ${summary.unmeasured ?? 0} stored unmeasured, ${summary.alreadyDone} already stored, ${summary.failed.length} failed; results in ${runDir}`,
        ]);
      }
      if (summary.stoppedByBudget) {
        log(
          io,
          `budget reached ($${summary.costUsd.toFixed(2)} ≥ $${budgetUsd}): ${summary.notScheduled} runs not started; raise --budget-usd and re-run to continue`,
        );
      }
      // Skills that could not be measured at all are findings: said above, and in the exit code.
      if ((summary.environmentFailures ?? []).length > 0) context.exit(1);
      if (summary.failed.length > 0) {
        for (const failure of summary.failed) {
          log(
            io,
            `failed after ${failure.attempts} attempts: ${failure.key.config}/${failure.key.skill}/${failure.key.requirement}/${failure.key.arm}#${failure.key.repeat}: ${failure.error}`,
          );
        }
        context.exit(3);
      }
    });

  bench
    .command("report")
    .description("Print the verdicts of a run directory: utility profiles, pooled figures, pairs")
    .argument("<run-dir>", "a run directory written by `bench run`")
    .option(
      "--skill <id>",
      "report only this skill (repeatable); its verdict covers the selected runs only",
      collect,
    )
    .option(
      "--requirement <id>",
      "report only this requirement, by id or skill/requirement (repeatable)",
      collect,
    )
    .option(
      "--detect-effect <points>",
      "effect (points) the design recommendation is for (default 10)",
      positiveReal("--detect-effect", Number.POSITIVE_INFINITY),
    )
    .option(
      "--target-power <p>",
      "power the design recommendation aims at, between 0 and 1 (default 0.8)",
      positiveReal("--target-power", 1),
    )
    .option("--json", "print the report data as JSON")
    .option("--html <file>", "also write a self-contained HTML report (charts, tables) to <file>")
    .action(async (runDir: string, options: ReportOptions) => {
      const directory = resolve(io.cwd, runDir);
      const report = await reportRunDir(directory, {
        ...(options.detectEffect === undefined ? {} : { detectEffect: options.detectEffect }),
        ...(options.targetPower === undefined ? {} : { targetPower: options.targetPower }),
        filter: {
          ...(options.skill === undefined ? {} : { skills: options.skill }),
          ...(options.requirement === undefined ? {} : { requirements: options.requirement }),
        },
      });
      if (options.html !== undefined) {
        const target = resolve(io.cwd, options.html);
        // Built from the redacted store; redacted again where it is written, so a field added
        // to the report later cannot carry a key into the file.
        await writeRedactedFile(target, renderHtmlReport(report, { source: directory }), io.env);
        log(io, `wrote the HTML report to ${target}`);
      }
      if (options.json === true) printJson(io, report);
      else if (options.html === undefined) printLines(io, renderReportText(report));
    });
}

/** A number in (0, below) — `below` itself excluded unless it is infinite. */
function positiveReal(flag: string, below: number): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed <= 0 || parsed >= below) {
      throw new UsageError(
        "option-invalid",
        `${flag} expects a number above 0${Number.isFinite(below) ? ` and below ${below}` : ""} (got "${value}")`,
      );
    }
    return parsed;
  };
}

interface ReportOptions {
  readonly detectEffect?: number;
  readonly targetPower?: number;
  readonly json?: boolean;
  readonly html?: string;
  readonly skill?: string[];
  readonly requirement?: string[];
}

function commandLineOptions(options: RunOptions): string[] {
  const argv: string[] = [];
  if (options.agent !== undefined) argv.push("--agent", options.agent);
  if (options.model !== undefined) argv.push("--model", options.model);
  for (const config of options.config ?? []) argv.push("--config", config);
  if (options.concurrency !== undefined) argv.push("--concurrency", String(options.concurrency));
  if (options.repeats !== undefined) argv.push("--repeats", String(options.repeats));
  if (options.budgetUsd !== undefined) argv.push("--budget-usd", options.budgetUsd);
  if (options.out !== undefined) argv.push("--out", options.out);
  if (options.predictions !== undefined) argv.push("--predictions", options.predictions);
  argv.push("--sandbox", options.unsafeNoSandbox === true ? "unsafe" : options.sandbox);
  if (options.resume === true) argv.push("--resume");
  // The URL without its password: the manifest is shared with readers of the results.
  if (options.queue !== undefined) argv.push("--queue", redactRedisUrl(options.queue));
  for (const limit of options.rateLimit ?? []) argv.push("--rate-limit", limit);
  for (const variant of options.variant ?? []) argv.push("--variant", variant);
  for (const dir of options.reuse ?? []) argv.push("--reuse", dir);
  if (options.freshBaseline === true) argv.push("--fresh-baseline");
  for (const skill of options.skill ?? []) argv.push("--skill", skill);
  for (const requirement of options.requirement ?? []) argv.push("--requirement", requirement);
  if (options.check === false) argv.push("--no-check");
  if (options.weakThreshold !== undefined) argv.push("--weak-threshold", options.weakThreshold);
  if (options.setupNetwork === true) argv.push("--setup-network");
  if (options.setupNetwork === false) argv.push("--no-setup-network");
  for (const mapping of options.baseImage ?? []) argv.push("--base-image", mapping);
  if (options.json === true) argv.push("--json");
  return argv;
}

/** `--repo <url|path>@<commit>`: split at the last `@` whose tail looks like a revision. */
export function parseRepoFlag(value: string): { repository: string; commit: string } {
  const at = value.lastIndexOf("@");
  const repository = at > 0 ? value.slice(0, at) : "";
  const commit = at > 0 ? value.slice(at + 1) : "";
  // `git@host:org/repo` has an `@` too: a revision never contains `/` or `:`.
  if (repository === "" || commit === "" || /[/:\s]/.test(commit)) {
    throw new UsageError(
      "option-invalid",
      `--repo expects <url|path>@<commit> (e.g. ./repo@3f2c1ab), got "${value}"`,
    );
  }
  return { repository, commit };
}

interface GenerateOptions {
  skill: string;
  repo: string;
  out: string;
  model: string;
  requirements?: number;
  minTests?: number;
  maxRounds?: string;
  json?: boolean;
}

function registerGenerate(bench: Command, context: CommandContext): void {
  const { io } = context;
  bench
    .command("generate")
    .description(
      "Write a suite from a skill and a repository: model-written requirements and verifiers, checked on the untouched repository",
    )
    .requiredOption("--skill <dir>", "the Agent Skills folder under evaluation")
    .requiredOption("--repo <url|path>@<commit>", "the repository and the commit to pin")
    .requiredOption("--out <suite>", "suite folder to create (must not exist or be empty)")
    .requiredOption("--model <spec>", "model for both roles (e.g. anthropic:claude-sonnet-4-5)")
    .option(
      "--requirements <n>",
      "requirements to write (default 10)",
      positiveInteger("--requirements"),
    )
    .option(
      "--min-tests <n>",
      "tests per verifier at least (default 8)",
      positiveInteger("--min-tests"),
    )
    .option("--max-rounds <n>", "regenerations of a weak verifier (default 2)")
    .option("--json", "print the generation summary as JSON")
    .action(async (options: GenerateOptions) => {
      const { repository, commit } = parseRepoFlag(options.repo);
      let maxRounds: number | undefined;
      if (options.maxRounds !== undefined) {
        maxRounds = Number(options.maxRounds);
        if (!Number.isInteger(maxRounds) || maxRounds < 0) {
          throw new UsageError(
            "option-invalid",
            `--max-rounds expects an integer ≥ 0 (got "${options.maxRounds}")`,
          );
        }
      }
      const model = new ModelClient({ spec: options.model, env: io.env, cwd: io.cwd });
      let sandbox: Awaited<ReturnType<typeof createSandbox>>;
      try {
        sandbox = await createSandbox({ kind: "local" });
      } catch (error) {
        if (!(error instanceof SandboxUnavailableError)) throw error;
        log(
          io,
          `warning: bubblewrap is unavailable (${error.message}); verifiers are validated WITHOUT isolation`,
        );
        sandbox = new UnsafeSandbox();
      }
      const isLocal = !/^(https?|ssh|git|file):\/\/|^git@/.test(repository);
      const result = await generateSuite({
        skill: resolve(io.cwd, options.skill),
        repository: isLocal ? resolve(io.cwd, repository) : repository,
        commit,
        out: resolve(io.cwd, options.out),
        model,
        sandbox,
        cacheDir: defaultCacheDir(io.env),
        ...(options.requirements === undefined ? {} : { requirements: options.requirements }),
        ...(options.minTests === undefined ? {} : { minTests: options.minTests }),
        ...(maxRounds === undefined ? {} : { maxRounds }),
        onLog: (line) => log(io, line),
      });
      if (options.json === true) {
        printJson(io, result);
      } else {
        const lines = [
          `wrote ${result.out}: ${result.requirements} requirements, ${result.verifiers.length} verifiers, ${result.weak} weak, requirement rounds ${result.requirementRounds}`,
          ...result.requirementFindings.map((finding) => `  requirement finding: ${finding}`),
          ...result.verifiers.map(
            (verifier) =>
              `  ${verifier.requirement}: ${verifier.tests} tests, ${verifier.rounds} round${verifier.rounds === 1 ? "" : "s"}${verifier.weak ? `, WEAK: ${verifier.findings.join("; ")}` : ""}`,
          ),
          ...Object.entries(result.usage).map(
            ([role, totals]) =>
              `  ${role}: ${totals.inputTokens} input + ${totals.outputTokens} output tokens, $${totals.costUsd.toFixed(4)}`,
          ),
          ...result.suiteProblems.map(formatSuiteProblem),
          result.valid
            ? `suite is valid; next: skillsmith bench run ${options.out}`
            : "the written suite does not validate (see the problems above)",
        ];
        printLines(io, lines);
      }
      if (!result.valid || result.weak > 0) context.exit(1);
    });
}

function registerRegrade(bench: Command, context: CommandContext): void {
  const { io } = context;
  bench
    .command("regrade")
    .description(
      "Re-score a run's stored patches with the suite's (new) verifiers, without running any agent; writes a new run directory and shows the changes",
    )
    .argument("<run-dir>", "the run directory to re-grade (left as it is)")
    .requiredOption("--out <run-dir>", "the new run directory")
    .option("--suite <dir>", "a suite with new verifiers (default: the suite the run used)")
    .option("--sandbox <kind>", "local (bubblewrap) | container | unsafe", "local")
    .option("--json", "print {regrade, report} as JSON on stdout")
    .action(
      async (
        runDir: string,
        options: { out: string; suite?: string; sandbox: string; json?: boolean },
      ) => {
        if (!["local", "container", "unsafe"].includes(options.sandbox)) {
          throw new UsageError(
            "option-invalid",
            `--sandbox expects local, container or unsafe (got "${options.sandbox}")`,
          );
        }
        const summary = await regradeRunDir({
          runDir: resolve(io.cwd, runDir),
          outDir: resolve(io.cwd, options.out),
          ...(options.suite === undefined ? {} : { suite: resolve(io.cwd, options.suite) }),
          sandbox: options.sandbox as SandboxKind,
          cacheDir: defaultCacheDir(io.env),
          commandLine: [
            "skillsmith",
            "bench",
            "regrade",
            runDir,
            "--out",
            options.out,
            ...(options.suite === undefined ? [] : ["--suite", options.suite]),
            "--sandbox",
            options.sandbox,
          ],
          onWarning: (message) => log(io, message),
        });
        const report = await reportRunDir(summary.outDir);
        if (options.json === true) {
          printJson(io, { regrade: summary, report });
          return;
        }
        const percent = (value: number) => `${(100 * value).toFixed(0)}%`;
        const changed = summary.requirements.filter((item) => Math.abs(item.delta) > 1e-9);
        printLines(io, [
          `re-graded ${summary.runs.length} runs of ${summary.runDir} with ${summary.suite}: ${summary.rescored} re-scored, ${summary.kept} kept as they were; new run directory ${summary.outDir}`,
          "",
          "per requirement and arm, old → new verifier (mean over repeats):",
          ...summary.requirements.map(
            (item) =>
              `  ${item.config}/${item.skill}/${item.requirement} ${item.arm}: ${percent(item.old)} → ${percent(item.new)} (${item.delta > 0 ? "+" : ""}${item.delta.toFixed(1)} points)`,
          ),
          `${changed.length} of ${summary.requirements.length} changed`,
          "",
          ...renderReportText(report),
        ]);
      },
    );
}
