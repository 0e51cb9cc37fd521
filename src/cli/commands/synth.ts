/**
 * `skillsmith synth ...`: pool and optimise here, run in `synth-run.ts`, what they share in
 * `synth-shared.ts`.
 */
import { resolve } from "node:path";
import { type Command, Option } from "commander";
import { UsageError } from "../../core/errors.js";
import type { ModelClient } from "../../model/index.js";
import {
  buildPool,
  defaultEpochs,
  defaultOptimiseSeed,
  defaultSampleShare,
  defaultTopK,
  defaultTrainShare,
  LibraryStore,
  modelsLine,
  type OptimiseTarget,
  optimiseLibrary,
  optimiseTargets,
  readPool,
  renderCostTable,
} from "../../synth/index.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";
import { registerSynthRun } from "./synth-run.js";
import {
  addCommon,
  type CommonFlags,
  closingCaches,
  defaultStore,
  embeddingOption,
  integer,
  openFamily,
  openModel,
  openRoleModels,
  parseSplit,
  retrievalOf,
  selectTasks,
  share,
  splitSeedOf,
} from "./synth-shared.js";

/** `skillsmith synth ...`: trajectory pool, synthesis runs and meta-prompt optimisation. */
export function registerSynth(program: Command, context: CommandContext): void {
  const synth = program
    .command("synth")
    .description("Test-time skill synthesis: pool, run, optimise");
  registerPool(synth, context);
  registerSynthRun(synth, context);
  registerOptimise(synth, context);
}

/** The flags of `synth pool`. */
type PoolFlags = CommonFlags & { split: string; out?: string };

/** `synth pool`: the solver's zero-shot attempts over a split, appended to the pool. */
function registerPool(synth: Command, context: CommandContext): void {
  addCommon(
    synth
      .command("pool")
      .description(
        "Run the zero-shot solver over a split and append attempts to the pool (resumable)",
      )
      .option("--split <split>", "train or test", "train")
      .option("--out <pool.jsonl>", "pool file (default .skillsmith/synth/<family>/pool.jsonl)"),
  ).action(closingCaches((flags: PoolFlags) => runPoolCommand(flags, context)));
}

async function runPoolCommand(flags: PoolFlags, context: CommandContext): Promise<void> {
  const { io } = context;
  const family = await openFamily(flags, io);
  const split = parseSplit(flags.split);
  const tasks = await selectTasks(family, split, flags);
  const path = resolve(io.cwd, flags.out ?? `${defaultStore(family.name)}/pool.jsonl`);
  // The pool is the solver's zero-shot trajectories: it runs on the solver's model.
  const model = openRoleModels(flags, io, openModel(flags, io)).models.solver as ModelClient;
  const splitSeed = splitSeedOf(flags);
  const result = await buildPool({
    family,
    model,
    tasks,
    split,
    splitSeed,
    path,
    concurrency: integer(flags.concurrency, "--concurrency", 1),
    onProgress: (line) => log(io, line),
  });
  const added = result.entries.slice(result.entries.length - result.added);
  const summary = {
    pool: path,
    family: family.name,
    split,
    splitSeed,
    trainShare: family.trainShare ?? defaultTrainShare,
    added: result.added,
    skipped: result.skipped,
    meanScoreAdded:
      added.length === 0
        ? null
        : added.reduce((sum, entry) => sum + entry.outcome.score, 0) / added.length,
    usage: model.ledger.byRole(),
    // The pool is the zero-shot solver itself: its relative cost is 1 by definition.
    relativeCost: 1,
  };
  if (flags.json === true) printJson(io, summary);
  else
    printLines(io, [
      `pool ${path}: ${result.added} added, ${result.skipped} already present`,
      `solver tokens: ${model.ledger.totals().inputTokens} in / ${model.ledger.totals().outputTokens} out (relative cost 1.00x: the pool is the zero-shot run)`,
      ...(summary.meanScoreAdded === null
        ? []
        : [`mean score of the added attempts: ${summary.meanScoreAdded.toFixed(3)}`]),
    ]);
}

/** The flags of `synth optimise`. */
type OptimiseFlags = CommonFlags & {
  epochs: string;
  sample: string;
  seed: string;
  topK: string;
  embeddingModel?: string;
  target: OptimiseTarget;
  pool?: string;
  store?: string;
};

/** `synth optimise`: meta-prompt optimisation of a slot library over the training split. */
function registerOptimise(synth: Command, context: CommandContext): void {
  addCommon(
    synth
      .command("optimise")
      .description(
        "Meta-prompt optimisation: bounded, audited slot-library patches kept only when they score better",
      )
      .option("--epochs <n>", "epochs", String(defaultEpochs))
      .option(
        "--sample <share>",
        "share of the training split run per epoch",
        String(defaultSampleShare),
      )
      .option(
        "--seed <n>",
        "seed of the epoch samples and case sampling",
        String(defaultOptimiseSeed),
      )
      .option("--top-k <n>", "retrieved pool entries per task", String(defaultTopK))
      .option(...embeddingOption)
      .addOption(
        new Option(
          "--target <target>",
          "synth: the library that writes each task's skill (MPO); skillopt: the library that writes the one static skill applied to every task",
        )
          .choices(optimiseTargets)
          .default("synth"),
      )
      .option("--pool <pool.jsonl>", "pool file (default .skillsmith/synth/<family>/pool.jsonl)")
      .option(
        "--store <dir>",
        "slot library store (default .skillsmith/synth/<family>, and <that>/skillopt for --target skillopt)",
      ),
  ).action(closingCaches((flags: OptimiseFlags) => runOptimiseCommand(flags, context)));
}

async function runOptimiseCommand(flags: OptimiseFlags, context: CommandContext): Promise<void> {
  const { io } = context;
  const { retrieval, embedding } = retrievalOf(flags, io);
  const family = await openFamily(flags, io);
  const trainTasks = await selectTasks(family, "train", flags);
  const poolPath = resolve(io.cwd, flags.pool ?? `${defaultStore(family.name)}/pool.jsonl`);
  const pool = (await readPool(poolPath)).filter((entry) => entry.family === family.name);
  if (pool.length === 0)
    throw new UsageError(
      "cli.synth-pool-empty",
      `the pool ${poolPath} holds no ${family.name} attempts: run "skillsmith synth pool" first`,
    );
  const store = new LibraryStore(
    resolve(
      io.cwd,
      flags.store ??
        `${defaultStore(family.name)}${flags.target === "skillopt" ? "/skillopt" : ""}`,
    ),
  );
  const model = openModel(flags, io);
  const roles = openRoleModels(flags, io, model);
  const report = await optimiseLibrary({
    family,
    model,
    models: roles.models,
    modelSpecs: roles.specs,
    trainTasks,
    pool,
    store,
    splitSeed: splitSeedOf(flags),
    retrieval,
    ...(roles.prices === undefined ? {} : { price: roles.prices }),
    target: flags.target,
    epochs: integer(flags.epochs, "--epochs", 1),
    sampleShare: share(flags.sample, "--sample"),
    seed: integer(flags.seed, "--seed", 0),
    concurrency: integer(flags.concurrency, "--concurrency", 1),
    onProgress: (line) => log(io, line),
  });
  const reportPath = await store.saveOptimisation({
    ...report,
    ...(embedding === undefined ? {} : { embeddingFrom: embedding.from }),
  });
  if (flags.json === true) {
    printJson(io, { ...report, reportPath });
    return;
  }
  const lines = [
    `library ${report.startVersion} -> ${report.finalVersion} (target ${report.target}, store ${store.directory})`,
    ...modelsLine(report.models),
    `epochs ${report.settings.optimisation.epochs}, ${report.settings.optimisation.sampleShare * 100}% of ${trainTasks.length} training tasks each, cases ${Object.values(report.settings.optimisation.caseRatio).join(":")}, ≤ ${report.settings.slots.maxSlotsPerPatch} slots per patch, critic/editor at temperature ${report.settings.temperatures.critic}, retrieval ${report.retrieval} (top-k ${report.settings.topK})`,
  ];
  for (const epoch of report.epochs)
    lines.push(
      `epoch ${epoch.epoch}: ${epoch.reference} ${epoch.referenceScore.toFixed(3)} -> ${epoch.libraryVersion} ${epoch.currentScore.toFixed(3)}; transitions ${JSON.stringify(epoch.transitions)}; cases ${epoch.cases.length} (critic input ${epoch.criticInput.characters} characters); patch ${epoch.patch?.number ?? "-"} ${epoch.patch?.status ?? ""}${epoch.patch === undefined ? "" : `: ${epoch.patch.reason}`}`,
    );
  lines.push("", "cost (relative to the zero-shot run of the epoch-1 sample)");
  lines.push(...renderCostTable(report.cost));
  lines.push("", `report: ${reportPath}`);
  printLines(io, lines);
}
