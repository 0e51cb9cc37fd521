/**
 * `skillsmith bench run`: every configuration × skill × requirement × arm not yet stored, run
 * here or on a Redis queue, then the verdicts. Its flags are recorded (`commandLineOptions`) in
 * the run's manifest, so the file keeps the flags and the record of them together.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { harnessFacts } from "../../agents/registry.js";
import {
  AGENT_KINDS,
  createProgressRenderer,
  defaultRunDir,
  endpointFromEnvironment,
  estimateSuiteCost,
  loadSuiteSelection,
  parseRateLimit,
  parseVariantOptions,
  type RateLimit,
  type RunEvent,
  redactRedisUrl,
  renderReportText,
  renderSuiteEstimate,
  reportRunDir,
  runSuite,
  runSuiteOnQueue,
  type SandboxKind,
  unmeasuredRunsOf,
  type VariantOption,
  withDistractors,
  withVariants,
} from "../../bench/index.js";
import { definedFields } from "../../core/defined.js";
import { UsageError } from "../../core/errors.js";
import { defaultCacheDir, parseBaseImageMap } from "../../env/index.js";
import { loadModelConfig } from "../../model/index.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";
import { interruptGracefully } from "../interrupt.js";
import {
  agentKindOf,
  budgetUsdOf,
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
  distractor?: string[];
  reuse?: string[];
  freshBaseline?: boolean;
  skill?: string[];
  requirement?: string[];
  check?: boolean;
  weakThreshold?: string;
  setupNetwork?: boolean;
  baseImage?: string[];
}

export function registerRun(bench: Command, context: CommandContext): void {
  runOptions(bench.command("run")).action((suitePath: string, options: RunOptions) =>
    runCommand(suitePath, options, context),
  );
}

/** The options of `bench run`. */
function runOptions(run: Command): Command {
  const command = run
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
    .option("--sandbox <kind>", sandboxKindHelp(), "local")
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
    );
  withSelectionOptions(command, "run")
    .option(
      "--no-check",
      "skip the verifier check before the runs (broken verifiers then cost agent time)",
    )
    .option(
      "--weak-threshold <share>",
      "a verifier passing at least this share of its checks untouched is weak (default 0.5)",
    );
  return withSetupNetworkOptions(command)
    .option(
      "--variant <[skill:]name=dir[,dir...]>",
      "also run this version of the skill (one or more Agent Skills folders, all installed together) as its own arm; the report compares every pair of arms (repeatable)",
      collect,
    )
    .option(
      "--distractor <dir>",
      "install this Agent Skills folder in every arm of every skill, the without arm included (repeatable; a distractor named like a skill under test is refused)",
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
    .option("--json", "print {run, report} as JSON on stdout");
}

/** One `bench run`: the runs, then the report, the summary and the exit code. */
async function runCommand(
  suitePath: string,
  options: RunOptions,
  context: CommandContext,
): Promise<void> {
  const { io } = context;
  // Every flag is checked before the suite is read: a typo is reported as such.
  const flags = flagSettings(options, io);
  const selection = selectionOf(options);
  // Skills and requirements with broken files are left out and reported; the rest runs.
  // A control agent (`none`, `oracle`) never reads a skill: a suite of tasks without skills runs.
  const controlsOnly =
    flags.agentOverride !== undefined && harnessFacts(flags.agentOverride).control !== undefined;
  const loaded = await loadSuiteSelection(resolve(io.cwd, suitePath), {
    ...selection,
    partial: true,
    ...(controlsOnly ? { controlsOnly } : {}),
  });
  const variants = (options.variant ?? []).flatMap((text) => parseVariantOptions(text, io.cwd));
  const distractors = (options.distractor ?? []).map((folder) => resolve(io.cwd, folder));
  const suite = await withDistractors(await withVariants(loaded.suite, variants), distractors);
  const runDir =
    options.out === undefined ? defaultRunDir(io.cwd, suite) : resolve(io.cwd, options.out);
  const terminal = io.stderrIsTerminal === true;
  const progress = createProgressRenderer(io.stderr, terminal && options.json !== true);
  log(io, `run directory: ${runDir}`);
  // What the whole suite would cost, before anything is spent.
  const estimate = estimateSuiteCost(suite, {
    ...(options.repeats === undefined ? {} : { repeats: options.repeats }),
    prices: loadModelConfig({ cwd: io.cwd, env: io.env }).config.prices ?? {},
    ...definedFields({ agentOverride: flags.agentOverride, modelOverride: options.model }),
  });
  for (const line of renderSuiteEstimate(estimate)) log(io, line);
  const common = runSuiteOptions(suitePath, loaded, options, io, flags, {
    runDir,
    variants,
    distractors,
    progress,
  });
  // Ctrl-C stops scheduling, ends the runs in flight and still says what was stored.
  const interrupt = new AbortController();
  const release = interruptGracefully(() => interrupt.abort());
  let summary: RunSummary;
  try {
    if (options.queue === undefined) {
      summary = await runSuite({ ...common, signal: interrupt.signal });
    } else {
      log(
        io,
        `queue: ${redactRedisUrl(options.queue)} (start workers with: skillsmith worker --queue <url>)`,
      );
      summary = await runSuiteOnQueue({
        ...common,
        signal: interrupt.signal,
        queue: options.queue,
        rateLimits: flags.rateLimits,
        ...(options.pollInterval === undefined ? {} : { pollIntervalMs: options.pollInterval }),
      });
    }
  } finally {
    release();
    progress.finish();
  }
  const report = await reportRunDir(runDir);
  if (summary.aborted) {
    const stored = report.completeness;
    log(
      io,
      `interrupted: ${stored === undefined ? `${summary.executed} runs scored now` : `${stored.stored} of ${stored.planned} runs stored`} in ${runDir}; the runs in flight were stopped and are not scored. Resume with: ${resumeCommand(suitePath, options, runDir)}`,
    );
    // 130, the shell's status for SIGINT: whatever else is said below, a script sees the run
    // did not finish.
    context.exit(130);
  }
  const unmeasured = unmeasuredRunsOf(report);
  if (options.json === true) printJson(io, { run: summary, report });
  else
    printLines(io, [
      ...renderReportText(report),
      "",
      ...summaryLines(summary, runDir),
      ...(unmeasured === undefined ? [] : [unmeasured.line]),
    ]);
  if (summary.stoppedByBudget) {
    log(
      io,
      `budget reached ($${summary.costUsd.toFixed(2)} ≥ $${common.budgetUsd}): ${summary.notScheduled} runs not started; raise --budget-usd and re-run to continue`,
    );
  }
  // Runs that measured nothing (and skills that could not be measured at all) are findings:
  // said above, and in the exit code, whatever the store held before this invocation.
  if (unmeasured !== undefined && options.json === true) log(io, unmeasured.line);
  if ((summary.environmentFailures ?? []).length > 0 || unmeasured !== undefined) context.exit(1);
  if (summary.failed.length > 0) {
    for (const failure of summary.failed) {
      log(
        io,
        `failed after ${failure.attempts} attempts: ${failure.key.config}/${failure.key.skill}/${failure.key.requirement}/${failure.key.arm}#${failure.key.repeat}: ${failure.error}`,
      );
    }
    context.exit(3);
  }
}

type RunSummary = Awaited<ReturnType<typeof runSuite>>;

/** `--rate-limit` parsed, by provider:model group. */
function rateLimitsOf(options: RunOptions): Record<string, RateLimit> {
  const rateLimits: Record<string, RateLimit> = {};
  for (const text of options.rateLimit ?? []) {
    const { group, limit } = parseRateLimit(text);
    rateLimits[group] = limit;
  }
  return rateLimits;
}

/** The flags whose values need parsing, parsed (a bad one is a usage error). */
function flagSettings(options: RunOptions, io: CommandContext["io"]) {
  if (options.queue === undefined) {
    for (const [flag, value] of [
      ["--rate-limit", options.rateLimit],
      ["--poll-interval", options.pollInterval],
    ] as const) {
      if (value !== undefined) throw new UsageError("cli.option-invalid", `${flag} needs --queue`);
    }
  }
  return {
    agentOverride: options.agent === undefined ? undefined : agentKindOf(options.agent),
    budgetUsd: budgetUsdOf(options.budgetUsd),
    sandbox: sandboxKindOf(options) as SandboxKind,
    weakThreshold: weakThresholdOf(options.weakThreshold, io.env),
    setupNetwork: setupNetworkOf(options.setupNetwork, io.env),
    baseImages: parseBaseImageMap(options.baseImage ?? []),
    rateLimits: rateLimitsOf(options),
  };
}

/** What `runSuite` (and `runSuiteOnQueue`) are asked for, from the flags and the environment. */
function runSuiteOptions(
  suitePath: string,
  loaded: Awaited<ReturnType<typeof loadSuiteSelection>>,
  options: RunOptions,
  io: CommandContext["io"],
  flags: ReturnType<typeof flagSettings>,
  run: {
    readonly runDir: string;
    readonly variants: readonly VariantOption[];
    readonly distractors: readonly string[];
    readonly progress: ReturnType<typeof createProgressRenderer>;
  },
) {
  const { agentOverride, budgetUsd, baseImages } = flags;
  const { progress } = run;
  return {
    // Loaded once, by the command: the run reports the parts left out as if it had loaded the folder.
    suite: loaded,
    runDir: run.runDir,
    selection: selectionOf(options),
    ...(run.variants.length === 0 ? {} : { variants: run.variants }),
    ...(run.distractors.length === 0 ? {} : { distractors: run.distractors }),
    ...(options.check === false ? { check: false } : {}),
    weakThreshold: flags.weakThreshold,
    setupNetwork: flags.setupNetwork,
    // Progress rewrites its line; every other event ends it and prints a line of its own.
    onEvent: (event: RunEvent) => {
      if (event.type === "progress") return progress.update(event.progress);
      const line =
        event.type === "warning"
          ? event.message
          : event.type === "log"
            ? event.line
            : event.type === "connection"
              ? event.message
              : undefined;
      if (line === undefined) return;
      progress.finish();
      log(io, line);
    },
    ...definedFields({
      configs: options.config,
      agentOverride,
      modelOverride: options.model,
      concurrency: options.concurrency,
      repeats: options.repeats,
      budgetUsd,
    }),
    ...(options.predictions === undefined
      ? {}
      : { predictions: resolve(io.cwd, options.predictions) }),
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
    ...(options.resume === true ? { resume: true } : {}),
    ...(options.reuse === undefined
      ? {}
      : { reuse: options.reuse.map((dir) => resolve(io.cwd, dir)) }),
    ...(options.freshBaseline === true ? { freshBaseline: true } : {}),
    sandbox: flags.sandbox,
    // This invocation's environment, not the process's (they differ when run in-process).
    cacheDir: defaultCacheDir(io.env),
    ...(Object.keys(baseImages).length === 0 ? {} : { baseImages }),
    modelEndpoint: endpointFromEnvironment(io.env),
    // The config's price overrides: Codex and builtin runs cost their tokens at these prices.
    prices: loadModelConfig({ cwd: io.cwd, env: io.env }).config.prices ?? {},
    commandLine: ["skillsmith", "bench", "run", suitePath, ...commandLineOptions(options)],
  };
}

/** The lines after the report: the check, failed environments, and what this invocation did. */
function summaryLines(summary: RunSummary, runDir: string): string[] {
  const check = summary.check;
  const counts = { ok: 0, weak: 0, broken: 0 };
  for (const requirement of check?.requirements ?? []) counts[requirement.status] += 1;
  // A broken requirement of a skill whose environment failed is stored as that failure.
  const failedSkills = new Set((summary.environmentFailures ?? []).map((entry) => entry.skill));
  const brokenBySetup = (check?.requirements ?? []).filter(
    (requirement) => requirement.status === "broken" && failedSkills.has(requirement.skill),
  ).length;
  const brokenParts = [
    ...(counts.broken - brokenBySetup > 0 || brokenBySetup === 0
      ? [`${counts.broken - brokenBySetup} flagged broken-verifier`]
      : []),
    ...(brokenBySetup > 0 ? [`${brokenBySetup} flagged environment-failure`] : []),
  ];
  return [
    ...(check === undefined
      ? ["verifier check skipped (--no-check)"]
      : [
          `verifier check: ${counts.ok} ok, ${counts.weak} weak (run, flagged weak-verifier), ${counts.broken} broken (not run: ${brokenParts.join(", ")})`,
        ]),
    ...(summary.environmentFailures ?? []).map(
      (failure) => `environment of ${failure.skill} failed (not run): ${failure.reason}`,
    ),
    `${summary.executed} run${summary.executed === 1 ? "" : "s"} scored now${(summary.reused ?? 0) === 0 ? "" : ` (${summary.reused} unassisted reused from --reuse)`}, ${summary.unmeasured ?? 0} stored unmeasured, ${summary.alreadyDone} already stored, ${summary.failed.length} failed; results in ${runDir}`,
  ];
}

/** The command that continues this run where it stopped (shell-quoted where needed). */
function resumeCommand(suitePath: string, options: RunOptions, runDir: string): string {
  const argv = [
    "skillsmith",
    "bench",
    "run",
    suitePath,
    ...commandLineOptions({ ...options, out: runDir, resume: true }),
  ];
  return argv
    .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`))
    .join(" ");
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
  for (const folder of options.distractor ?? []) argv.push("--distractor", folder);
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
