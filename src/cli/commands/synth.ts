import { resolve } from "node:path";
import { type Command, Option } from "commander";
import { UsageError } from "../../core/errors.js";
import { createSandbox, defaultCacheDir, type SandboxV1 } from "../../env/index.js";
import {
  createEmbeddingClient,
  loadModelConfig,
  ModelCallCache,
  ModelClient,
  priceFor,
  redactedJsonFile,
  writeRedactedFile,
} from "../../model/index.js";
import {
  BuiltinTaskFamily,
  buildPool,
  compareMethods,
  defaultEpochs,
  defaultOptimiseSeed,
  defaultSampleShare,
  defaultSplitSeed,
  defaultTopK,
  defaultTrainShare,
  type FamilyTask,
  HumanEvalTaskFamily,
  humanEvalPathOf,
  LibraryStore,
  type Method,
  type MethodResult,
  methods,
  type OptimiseTarget,
  optimiseLibrary,
  optimiseTargets,
  type RetrievalOptions,
  readPool,
  renderComparison,
  renderCostTable,
  resolveEmbeddingModel,
  retrievalMethodOf,
  runMethod,
  type Split,
  SuiteTaskFamily,
  synthFormatVersion,
  synthSettings,
  type TaskFamilyV1,
  type TokenPrice,
} from "../../synth/index.js";
import { type CliIo, type CommandContext, log, printJson, printLines } from "../context.js";

interface CommonFlags {
  family: string;
  familyDir?: string;
  model: string;
  tasks?: string;
  limit?: string;
  splitSeed: string;
  concurrency: string;
  unsafeNoSandbox?: boolean;
  cache?: string;
  maxTurns?: string;
  python?: string;
  taskTimeout?: string;
  json?: boolean;
}

function integer(value: string, flag: string, minimum: number): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < minimum)
    throw new UsageError(
      "cli.integer",
      `${flag}: expected an integer ≥ ${minimum}, got "${value}"`,
    );
  return number;
}

function share(value: string, flag: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0 || number > 1)
    throw new UsageError("cli.share", `${flag}: expected a number in (0, 1], got "${value}"`);
  return number;
}

function addCommon(command: Command): Command {
  return command
    .option(
      "--family <name>",
      "task family: builtin; suite:<suite-dir> (each requirement of a bench suite is a task, solved by the builtin coding agent); humaneval:<HumanEval.jsonl[.gz] or its folder>",
      "builtin",
    )
    .option(
      "--family-dir <dir>",
      "folder holding the family's tasks.yaml (default: the shipped one)",
    )
    .requiredOption("--model <spec>", "model spec, e.g. anthropic:claude-haiku-4-5")
    .option("--tasks <ids>", "comma-separated task ids: only these tasks of the split")
    .option("--limit <n>", "only the first n tasks of the split")
    .option("--split-seed <n>", "seed of the train/test split", String(defaultSplitSeed))
    .option("--concurrency <n>", "tasks in flight at once", "2")
    .option(
      "--unsafe-no-sandbox",
      "run hidden tests (and a suite family's agent commands) on the host without isolation",
    )
    .option("--max-turns <n>", "suite family: agent turns per attempt", "30")
    .option(
      "--python <path>",
      "humaneval: the interpreter of the hidden checks and the solver's own scripts (default /usr/bin/python3)",
    )
    .option("--task-timeout <seconds>", "humaneval: time limit of one task's hidden check", "10")
    .option("--cache <file.sqlite>", "reuse identical model calls from this call cache")
    .option("--json", "print a JSON document instead of text");
}

async function openFamily(flags: CommonFlags, io: CliIo): Promise<TaskFamilyV1> {
  const suitePath = flags.family.startsWith("suite:") ? flags.family.slice(6) : undefined;
  const humanEvalPath = humanEvalPathOf(flags.family);
  if (
    flags.family !== "builtin" &&
    (suitePath === undefined || suitePath === "") &&
    (humanEvalPath === undefined || humanEvalPath === "")
  )
    throw new UsageError(
      "synth.family.unknown",
      `--family: unknown task family "${flags.family}" (available: builtin, suite:<suite-dir>, humaneval:<path>)`,
    );
  if (flags.familyDir !== undefined && flags.family !== "builtin")
    throw new UsageError(
      "synth.family.dir",
      "--family-dir is for the builtin family; suite and humaneval families name their path: --family suite:<dir>, --family humaneval:<path>",
    );
  const sandbox: SandboxV1 = await createSandbox(
    flags.unsafeNoSandbox === true ? { kind: "unsafe" } : { kind: "local" },
  );
  if (humanEvalPath !== undefined)
    return new HumanEvalTaskFamily({
      path: resolve(io.cwd, humanEvalPath),
      sandbox,
      ...(flags.python === undefined ? {} : { python: flags.python }),
      taskTimeoutMs: integer(flags.taskTimeout ?? "10", "--task-timeout", 1) * 1000,
      // Earlier runs' answers and scores live here: an answer must not read them either.
      hiddenPaths: [resolve(io.cwd, ".skillsmith")],
    });
  if (suitePath !== undefined) {
    return new SuiteTaskFamily({
      directory: resolve(io.cwd, suitePath),
      sandbox,
      cacheDir: defaultCacheDir(io.env),
      maxTurns: integer(flags.maxTurns ?? "30", "--max-turns", 1),
    });
  }
  return new BuiltinTaskFamily({
    sandbox,
    ...(flags.familyDir === undefined ? {} : { directory: resolve(io.cwd, flags.familyDir) }),
  });
}

async function selectTasks(
  family: TaskFamilyV1,
  split: Split,
  flags: CommonFlags,
): Promise<readonly FamilyTask[]> {
  let tasks = family.split(await family.loadTasks(), split, splitSeedOf(flags));
  if (flags.tasks !== undefined) {
    const wanted = flags.tasks.split(",").map((id) => id.trim());
    const known = new Set(tasks.map((task) => task.id));
    const unknown = wanted.filter((id) => !known.has(id));
    if (unknown.length > 0)
      throw new UsageError(
        "synth.tasks.unknown",
        `--tasks: not in the ${split} split: ${unknown.join(", ")}`,
      );
    tasks = tasks.filter((task) => wanted.includes(task.id));
  }
  if (flags.limit !== undefined) tasks = tasks.slice(0, integer(flags.limit, "--limit", 1));
  return tasks;
}

const splitSeedOf = (flags: CommonFlags): number => integer(flags.splitSeed, "--split-seed", 0);

/** The model's list price (config override, else the built-in table); undefined when unknown. */
function priceOf(model: ModelClient, io: CliIo): TokenPrice | undefined {
  const prices = loadModelConfig({ cwd: io.cwd, env: io.env }).config.prices ?? {};
  return priceFor(model.spec, prices);
}

const embeddingOption = [
  "--embedding-model <spec>",
  "retrieve by embedding similarity, e.g. openai:text-embedding-3-small (default: $SKILLSMITH_EMBEDDING_MODEL, else synth.embeddingModel of the config, else BM25)",
] as const;

/**
 * Retrieval as the flags ask: top-k and, when an embedding model is configured, its client —
 * resolved (and built) before any model call, so a bad spec costs nothing.
 */
function retrievalOf(
  flags: { readonly topK: string; readonly embeddingModel?: string },
  io: CliIo,
): {
  retrieval: RetrievalOptions;
  embedding: ReturnType<typeof resolveEmbeddingModel>;
  topK: number;
} {
  const embedding = resolveEmbeddingModel(flags.embeddingModel, io);
  const topK = integer(flags.topK, "--top-k", 1);
  return {
    embedding,
    topK,
    retrieval: {
      k: topK,
      ...(embedding === undefined
        ? {}
        : { embedding: createEmbeddingClient({ spec: embedding.spec, env: io.env, cwd: io.cwd }) }),
    },
  };
}

/** Where a run log's manifest goes: beside it, `.jsonl` replaced by `.manifest.json`. */
const manifestPathOf = (logPath: string): string =>
  `${logPath.endsWith(".jsonl") ? logPath.slice(0, -".jsonl".length) : logPath}.manifest.json`;

function parseSplit(value: string): Split {
  if (value !== "train" && value !== "test")
    throw new UsageError("synth.split", `--split: expected train or test, got "${value}"`);
  return value;
}

/** Call caches opened by the running command; closed when its action ends. */
const openCaches: ModelCallCache[] = [];

function openModel(flags: CommonFlags, io: CliIo): ModelClient {
  if (flags.cache === undefined)
    return new ModelClient({ spec: flags.model, env: io.env, cwd: io.cwd });
  const cache = ModelCallCache.open(resolve(io.cwd, flags.cache));
  openCaches.push(cache);
  return new ModelClient({ spec: flags.model, env: io.env, cwd: io.cwd, cache, cacheMode: "use" });
}

function closingCaches<A extends unknown[]>(
  action: (...args: A) => Promise<void>,
): (...args: A) => Promise<void> {
  return async (...args) => {
    try {
      await action(...args);
    } finally {
      for (const cache of openCaches.splice(0)) cache.close();
    }
  };
}

const defaultStore = (family: string) => `.skillsmith/synth/${family}`;

/** `skillsmith synth ...`: trajectory pool, synthesis runs and meta-prompt optimisation. */
export function registerSynth(program: Command, context: CommandContext): void {
  const synth = program
    .command("synth")
    .description("Test-time skill synthesis: pool, run, optimise");

  addCommon(
    synth
      .command("pool")
      .description(
        "Run the zero-shot solver over a split and append attempts to the pool (resumable)",
      )
      .option("--split <split>", "train or test", "train")
      .option("--out <pool.jsonl>", "pool file (default .skillsmith/synth/<family>/pool.jsonl)"),
  ).action(
    closingCaches(async (flags: CommonFlags & { split: string; out?: string }) => {
      const { io } = context;
      const family = await openFamily(flags, io);
      const split = parseSplit(flags.split);
      const tasks = await selectTasks(family, split, flags);
      const path = resolve(io.cwd, flags.out ?? `${defaultStore(family.name)}/pool.jsonl`);
      const model = openModel(flags, io);
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
    }),
  );

  addCommon(
    synth
      .command("run")
      .description(
        "Run the solver over a split with zero-shot, rag, static-skill, synth and the baselines react, skillopt, best-of-n; report score and cost",
      )
      .addHelpText(
        "after",
        "\nWith --method, zero-shot runs as well: it is the baseline of the relative cost\n(I + 2·O) / (I₀ + 2·O₀). The skill of each task is kept in the run log (--log).",
      )
      .option("--split <split>", "train or test", "test")
      .addOption(new Option("--method <method>", "one method (default: all)").choices(methods))
      .option("--top-k <n>", "retrieved pool entries per task", String(defaultTopK))
      .option("--samples <n>", "best-of-n: samples per task (N)", "4")
      .option("--sample-temperature <t>", "best-of-n: temperature of the samples", "0.8")
      .option(
        "--skillopt-store <dir>",
        "skillopt: the store of the library optimised with synth optimise --target skillopt (default <store>/skillopt)",
      )
      .option("--pool <pool.jsonl>", "pool file (default .skillsmith/synth/<family>/pool.jsonl)")
      .option("--store <dir>", "slot library store (default .skillsmith/synth/<family>)")
      .option("--library <version>", "slot library version (default: the store's current)")
      .option(
        "--log <file.jsonl>",
        "run log: every task's record, skill included (default .skillsmith/synth/<family>/runs/<time>.jsonl)",
      )
      .option(...embeddingOption),
  ).action(
    closingCaches(
      async (
        flags: CommonFlags & {
          split: string;
          method?: Method;
          pool?: string;
          store?: string;
          library?: string;
          log?: string;
          embeddingModel?: string;
          topK: string;
          samples: string;
          sampleTemperature: string;
          skilloptStore?: string;
        },
      ) => {
        const { io } = context;
        const samples = integer(flags.samples, "--samples", 1);
        const sampleTemperature = Number(flags.sampleTemperature);
        if (!Number.isFinite(sampleTemperature) || sampleTemperature <= 0 || sampleTemperature > 2)
          throw new UsageError(
            "cli.temperature",
            `--sample-temperature: expected a number in (0, 2], got "${flags.sampleTemperature}"`,
          );
        // Resolved (and its client built) before any model call, so a bad spec costs nothing.
        const { retrieval, embedding, topK } = retrievalOf(flags, io);
        const family = await openFamily(flags, io);
        const split = parseSplit(flags.split);
        const tasks = await selectTasks(family, split, flags);
        let chosen: Method[] =
          flags.method === undefined
            ? [...methods]
            : flags.method === "zero-shot"
              ? ["zero-shot"]
              : ["zero-shot", flags.method];
        const poolPath = resolve(io.cwd, flags.pool ?? `${defaultStore(family.name)}/pool.jsonl`);
        const pool = (await readPool(poolPath)).filter((entry) => entry.family === family.name);
        if (pool.length === 0 && chosen.some((method) => method !== "zero-shot"))
          throw new UsageError(
            "synth.pool.empty",
            `the pool ${poolPath} holds no ${family.name} attempts: run "skillsmith synth pool --family ${flags.family} --split train --model <spec>" first`,
          );
        if (split === "test") {
          // Test tasks stay held out (protocol C): a pool built on another split would let
          // retrieval hand the synthesiser attempts (and scores) of the very tasks under test.
          const testIds = new Set(
            family
              .split(await family.loadTasks(), "test", splitSeedOf(flags))
              .map((task) => task.id),
          );
          const leaked = [...new Set(pool.map((entry) => entry.taskId))].filter((id) =>
            testIds.has(id),
          );
          if (leaked.length > 0)
            throw new UsageError(
              "synth.pool.test-tasks",
              `the pool ${poolPath} holds attempts on ${leaked.length} task(s) of the test split (split seed ${splitSeedOf(flags)}), e.g. ${leaked.slice(0, 3).join(", ")}: build the pool on the training split with the same --split-seed`,
            );
        }
        const store = new LibraryStore(resolve(io.cwd, flags.store ?? defaultStore(family.name)));
        const library = await store.load(flags.library ?? (await store.current()));
        const skilloptStore = new LibraryStore(
          resolve(io.cwd, flags.skilloptStore ?? `${store.directory}/skillopt`),
        );
        if (chosen.includes("skillopt") && (await skilloptStore.patches()).length === 0) {
          const hint = `no SkillOpt optimisation in ${skilloptStore.directory}: run "skillsmith synth optimise --family ${flags.family} --target skillopt --model <spec>" first`;
          if (flags.method === "skillopt") throw new UsageError("synth.skillopt.missing", hint);
          log(io, `skillopt skipped: ${hint}`);
          chosen = chosen.filter((method) => method !== "skillopt");
        }
        const skilloptLibrary = chosen.includes("skillopt")
          ? await skilloptStore.load(await skilloptStore.current())
          : undefined;
        const model = openModel(flags, io);
        const logPath = resolve(
          io.cwd,
          flags.log ??
            `${defaultStore(family.name)}/runs/${new Date().toISOString().replaceAll(":", "-")}.jsonl`,
        );
        log(io, `run log: ${logPath}`);
        log(
          io,
          `retrieval: ${retrievalMethodOf(retrieval)}${embedding === undefined ? "" : ` (from the ${embedding.from})`}`,
        );
        const results: MethodResult[] = [];
        for (const method of chosen) {
          log(
            io,
            `running ${method} on ${tasks.length} ${split} tasks${method === "best-of-n" ? ` (N = ${samples} samples at temperature ${sampleTemperature})` : ""}`,
          );
          results.push(
            await runMethod({
              family,
              model,
              tasks,
              pool,
              method,
              library:
                method === "skillopt" && skilloptLibrary !== undefined ? skilloptLibrary : library,
              retrieval,
              samples,
              sampleTemperature,
              concurrency: integer(flags.concurrency, "--concurrency", 1),
              logPath,
              onProgress: (line) => log(io, line),
            }),
          );
        }
        const price = priceOf(model, io);
        const report = compareMethods(
          {
            family: family.name,
            split,
            model: flags.model,
            taskCount: tasks.length,
            retrieval: retrievalMethodOf(retrieval),
            settings: synthSettings({
              splitSeed: splitSeedOf(flags),
              topK,
              ...(family.trainShare === undefined ? {} : { trainShare: family.trainShare }),
            }),
            poolTasks: new Set(pool.map((entry) => entry.taskId)).size,
            ...(price === undefined ? {} : { price }),
          },
          results,
        );
        const manifestPath = manifestPathOf(logPath);
        // The run's manifest quotes the comparison report (solver outputs): redacted on write.
        await writeRedactedFile(
          manifestPath,
          redactedJsonFile({
            formatVersion: synthFormatVersion,
            kind: "synth-run",
            createdAt: new Date().toISOString(),
            family: flags.family,
            ...(family.settings === undefined ? {} : { familySettings: family.settings }),
            pool: poolPath,
            store: store.directory,
            library: library.version,
            methods: chosen,
            samples,
            sampleTemperature,
            log: logPath,
            report,
          }),
        );
        if (flags.json === true)
          printJson(io, {
            ...report,
            log: logPath,
            manifest: manifestPath,
            records: results.flatMap((result) => result.records),
          });
        else
          printLines(io, [
            ...renderComparison(report),
            "",
            `run log: ${logPath}`,
            `manifest: ${manifestPath}`,
          ]);
      },
    ),
  );

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
  ).action(
    closingCaches(
      async (
        flags: CommonFlags & {
          epochs: string;
          sample: string;
          seed: string;
          topK: string;
          embeddingModel?: string;
          target: OptimiseTarget;
          pool?: string;
          store?: string;
        },
      ) => {
        const { io } = context;
        const { retrieval, embedding } = retrievalOf(flags, io);
        const family = await openFamily(flags, io);
        const trainTasks = await selectTasks(family, "train", flags);
        const poolPath = resolve(io.cwd, flags.pool ?? `${defaultStore(family.name)}/pool.jsonl`);
        const pool = (await readPool(poolPath)).filter((entry) => entry.family === family.name);
        if (pool.length === 0)
          throw new UsageError(
            "synth.pool.empty",
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
        const price = priceOf(model, io);
        const report = await optimiseLibrary({
          family,
          model,
          trainTasks,
          pool,
          store,
          splitSeed: splitSeedOf(flags),
          retrieval,
          ...(price === undefined ? {} : { price }),
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
      },
    ),
  );
}
