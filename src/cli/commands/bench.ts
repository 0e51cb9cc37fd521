import { resolve } from "node:path";
import type { Command } from "commander";
import { generateSuite } from "../../bench/generate/index.js";
import type { ImportResult, SandboxKind } from "../../bench/index.js";
import {
  AGENT_KINDS,
  type AgentKind,
  checkTasks,
  createProgressRenderer,
  defaultRunDir,
  endpointFromEnvironment,
  formatSuiteProblem,
  importHarbor,
  importSweSkillsBench,
  loadSuite,
  parseRateLimit,
  parseVariantOption,
  type RateLimit,
  redactRedisUrl,
  regradeRunDir,
  renderReportText,
  reportRunDir,
  runSuite,
  runSuiteOnQueue,
  validateSuite,
  withVariants,
} from "../../bench/index.js";
import { UsageError } from "../../core/errors.js";
import {
  createSandbox,
  defaultCacheDir,
  parseBaseImageMap,
  SandboxUnavailableError,
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
    if (result.out !== undefined) {
      printLines(io, [`next: skillsmith bench validate-suite ${result.out}`]);
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
    .alias("check")
    .description("Check a suite folder completely and print every problem (exit 1 on errors)")
    .argument("<suite>", "the suite folder")
    .option("--json", "print {valid, errors, warnings, problems} as JSON")
    .action(async (suitePath: string, options: { json?: boolean }) => {
      const validation = await validateSuite(resolve(io.cwd, suitePath));
      const errors = validation.problems.filter((problem) => problem.severity === "error").length;
      const warnings = validation.problems.length - errors;
      const suite = validation.suite;
      if (options.json === true) {
        printJson(io, {
          valid: validation.valid,
          errors,
          warnings,
          problems: validation.problems,
          ...(suite === undefined
            ? {}
            : {
                skills: suite.skills.length,
                requirements: suite.skills.reduce(
                  (total, skill) => total + skill.requirements.length,
                  0,
                ),
                configurations: suite.configurations.map((configuration) => configuration.id),
              }),
        });
      } else {
        printLines(io, validation.problems.map(formatSuiteProblem));
        if (suite !== undefined) {
          const requirements = suite.skills.reduce(
            (total, skill) => total + skill.requirements.length,
            0,
          );
          printLines(io, [
            `suite "${suite.name}" is valid: ${suite.skills.length} skills, ${requirements} requirements, ${suite.configurations.length} configurations${warnings > 0 ? ` (${warnings} warnings)` : ""}`,
          ]);
        } else {
          printLines(io, [
            `${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}: the suite cannot run until the errors are fixed`,
          ]);
        }
      }
      if (!validation.valid) context.exit(1);
    });

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
      const sandboxKind = options.unsafeNoSandbox === true ? "unsafe" : options.sandbox;
      if (!["local", "container", "unsafe"].includes(sandboxKind)) {
        throw new UsageError(
          "option-invalid",
          `--sandbox expects local, container or unsafe (got "${options.sandbox}")`,
        );
      }
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
      const suite = await withVariants(
        await loadSuite(resolve(io.cwd, suitePath)),
        (options.variant ?? []).map((text) => parseVariantOption(text, io.cwd)),
      );
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
        suite,
        runDir,
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
        printLines(io, [
          "",
          `${summary.executed} run${summary.executed === 1 ? "" : "s"} scored now${(summary.reused ?? 0) === 0 ? "" : ` (${summary.reused} unassisted reused from --reuse)`}, ${summary.alreadyDone} already stored, ${summary.failed.length} failed; results in ${runDir}`,
        ]);
      }
      if (summary.stoppedByBudget) {
        log(
          io,
          `budget reached ($${summary.costUsd.toFixed(2)} ≥ $${budgetUsd}): ${summary.notScheduled} runs not started; raise --budget-usd and re-run to continue`,
        );
      }
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
