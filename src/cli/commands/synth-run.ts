/** `skillsmith synth run`: every method over a split, with score and cost per method. */
import { resolve } from "node:path";
import { type Command, Option } from "commander";
import { UsageError } from "../../core/errors.js";
import { redactedJsonFile, writeRedactedFile } from "../../model/index.js";
import {
  type ComparisonReport,
  compareMethods,
  defaultTopK,
  LibraryStore,
  type Method,
  type MethodResult,
  methods,
  type PoolEntry,
  type RoleModelChoices,
  readPool,
  renderComparison,
  retrievalMethodOf,
  runMethod,
  type SlotLibrary,
  type Split,
  SYNTH_RUN_FORMAT,
  synthSettings,
  type TaskFamilyV1,
} from "../../synth/index.js";
import { type CliIo, type CommandContext, log, printJson, printLines } from "../context.js";

import {
  addCommon,
  type CommonFlags,
  closingCaches,
  defaultStore,
  embeddingOption,
  integer,
  manifestPathOf,
  openFamily,
  openModel,
  openRoleModels,
  parseSplit,
  retrievalOf,
  selectTasks,
  splitSeedOf,
} from "./synth-shared.js";

export function registerSynthRun(synth: Command, context: CommandContext): void {
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
  ).action(closingCaches((flags: RunFlags) => runSynth(flags, context)));
}

/** The flags of `synth run`, as commander hands them over. */
type RunFlags = CommonFlags & {
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
};

/** The run: every chosen method over the split, then the comparison, its manifest and output. */
async function runSynth(flags: RunFlags, context: CommandContext): Promise<void> {
  const { io } = context;
  const { samples, sampleTemperature } = sampleSettingsOf(flags);
  // Resolved (and its client built) before any model call, so a bad spec costs nothing.
  const { retrieval, embedding, topK } = retrievalOf(flags, io);
  const family = await openFamily(flags, io);
  const split = parseSplit(flags.split);
  const tasks = await selectTasks(family, split, flags);
  const { poolPath, pool } = await readRunPool(flags, family, split, methodsOf(flags), io);
  const store = new LibraryStore(resolve(io.cwd, flags.store ?? defaultStore(family.name)));
  const library = await store.load(flags.library ?? (await store.current()));
  const { chosen, skilloptLibrary } = await skilloptOf(flags, store, methodsOf(flags), io);
  const model = openModel(flags, io);
  const roles = openRoleModels(flags, io, model);
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
        models: roles.models,
        tasks,
        pool,
        method,
        library: method === "skillopt" && skilloptLibrary !== undefined ? skilloptLibrary : library,
        retrieval,
        samples,
        sampleTemperature,
        concurrency: integer(flags.concurrency, "--concurrency", 1),
        logPath,
        onProgress: (line) => log(io, line),
      }),
    );
  }
  const report = compareMethods(
    {
      family: family.name,
      split,
      model: flags.model,
      models: roles.specs,
      taskCount: tasks.length,
      retrieval: retrievalMethodOf(retrieval),
      settings: synthSettings({
        splitSeed: splitSeedOf(flags),
        topK,
        ...(family.trainShare === undefined ? {} : { trainShare: family.trainShare }),
      }),
      poolTasks: new Set(pool.map((entry) => entry.taskId)).size,
      ...(roles.prices === undefined ? {} : { price: roles.prices }),
    },
    results,
  );
  await reportRun(io, {
    flags,
    family,
    poolPath,
    storeDirectory: store.directory,
    libraryVersion: library.version,
    chosen,
    samples,
    sampleTemperature,
    logPath,
    roleModels: roles.choices,
    report,
    results,
  });
}

/** `--samples` and `--sample-temperature` of best-of-n, checked before anything is run. */
function sampleSettingsOf(flags: RunFlags): { samples: number; sampleTemperature: number } {
  const samples = integer(flags.samples, "--samples", 1);
  const sampleTemperature = Number(flags.sampleTemperature);
  if (!Number.isFinite(sampleTemperature) || sampleTemperature <= 0 || sampleTemperature > 2)
    throw new UsageError(
      "cli.temperature",
      `--sample-temperature: expected a number in (0, 2], got "${flags.sampleTemperature}"`,
    );
  return { samples, sampleTemperature };
}

/** Every method, or zero-shot (the baseline of the relative cost) and the one asked for. */
function methodsOf(flags: RunFlags): Method[] {
  return flags.method === undefined
    ? [...methods]
    : flags.method === "zero-shot"
      ? ["zero-shot"]
      : ["zero-shot", flags.method];
}

/**
 * The family's attempts of the pool, refused when a chosen method needs them and there are none,
 * or when a test run's pool holds attempts on test tasks.
 */
async function readRunPool(
  flags: RunFlags,
  family: TaskFamilyV1,
  split: Split,
  chosen: readonly Method[],
  io: CliIo,
): Promise<{ poolPath: string; pool: PoolEntry[] }> {
  const poolPath = resolve(io.cwd, flags.pool ?? `${defaultStore(family.name)}/pool.jsonl`);
  const pool = (await readPool(poolPath)).filter((entry) => entry.family === family.name);
  if (pool.length === 0 && chosen.some((method) => method !== "zero-shot"))
    throw new UsageError(
      "cli.synth-pool-empty",
      `the pool ${poolPath} holds no ${family.name} attempts: run "skillsmith synth pool --family ${flags.family} --split train --model <spec>" first`,
    );
  if (split === "test") {
    // Test tasks stay held out (protocol C): a pool built on another split would let
    // retrieval hand the synthesiser attempts (and scores) of the very tasks under test.
    const testIds = new Set(
      family.split(await family.loadTasks(), "test", splitSeedOf(flags)).map((task) => task.id),
    );
    const leaked = [...new Set(pool.map((entry) => entry.taskId))].filter((id) => testIds.has(id));
    if (leaked.length > 0)
      throw new UsageError(
        "cli.synth-pool-test-tasks",
        `the pool ${poolPath} holds attempts on ${leaked.length} task(s) of the test split (split seed ${splitSeedOf(flags)}), e.g. ${leaked.slice(0, 3).join(", ")}: build the pool on the training split with the same --split-seed`,
      );
  }
  return { poolPath, pool };
}

/**
 * The SkillOpt library when skillopt is chosen. Without an optimisation, skillopt asked for alone
 * is refused; among all methods it is skipped with a note.
 */
async function skilloptOf(
  flags: RunFlags,
  store: LibraryStore,
  methodsChosen: Method[],
  io: CliIo,
): Promise<{ chosen: Method[]; skilloptLibrary: SlotLibrary | undefined }> {
  let chosen = methodsChosen;
  const skilloptStore = new LibraryStore(
    resolve(io.cwd, flags.skilloptStore ?? `${store.directory}/skillopt`),
  );
  if (chosen.includes("skillopt") && (await skilloptStore.patches()).length === 0) {
    const hint = `no SkillOpt optimisation in ${skilloptStore.directory}: run "skillsmith synth optimise --family ${flags.family} --target skillopt --model <spec>" first`;
    if (flags.method === "skillopt") throw new UsageError("cli.synth-skillopt-missing", hint);
    log(io, `skillopt skipped: ${hint}`);
    chosen = chosen.filter((method) => method !== "skillopt");
  }
  const skilloptLibrary = chosen.includes("skillopt")
    ? await skilloptStore.load(await skilloptStore.current())
    : undefined;
  return { chosen, skilloptLibrary };
}

/** What a finished run leaves: its manifest beside the run log, and the comparison printed. */
interface FinishedRun {
  readonly flags: RunFlags;
  readonly family: TaskFamilyV1;
  readonly poolPath: string;
  readonly storeDirectory: string;
  readonly libraryVersion: string;
  readonly chosen: readonly Method[];
  readonly samples: number;
  readonly sampleTemperature: number;
  readonly logPath: string;
  readonly roleModels: RoleModelChoices;
  readonly report: ComparisonReport;
  readonly results: readonly MethodResult[];
}

async function reportRun(io: CliIo, run: FinishedRun): Promise<void> {
  const manifestPath = manifestPathOf(run.logPath);
  // The run's manifest quotes the comparison report (solver outputs): redacted on write.
  await writeRedactedFile(
    manifestPath,
    redactedJsonFile({
      format: SYNTH_RUN_FORMAT,
      createdAt: new Date().toISOString(),
      family: run.flags.family,
      ...(run.family.settings === undefined ? {} : { familySettings: run.family.settings }),
      pool: run.poolPath,
      store: run.storeDirectory,
      library: run.libraryVersion,
      methods: run.chosen,
      samples: run.samples,
      sampleTemperature: run.sampleTemperature,
      log: run.logPath,
      // Each role's model and where it came from (flag, environment, config, --model).
      roleModels: run.roleModels,
      report: run.report,
    }),
  );
  if (run.flags.json === true)
    printJson(io, {
      ...run.report,
      log: run.logPath,
      manifest: manifestPath,
      records: run.results.flatMap((result) => result.records),
    });
  else
    printLines(io, [
      ...renderComparison(run.report),
      "",
      `run log: ${run.logPath}`,
      `manifest: ${manifestPath}`,
    ]);
}
