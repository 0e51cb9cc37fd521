/** `skillsmith synth run`: every method over a split, with score and cost per method. */
import { resolve } from "node:path";
import { type Command, Option } from "commander";
import { UsageError } from "../../core/errors.js";
import { redactedJsonFile, writeRedactedFile } from "../../model/index.js";
import {
  compareMethods,
  defaultTopK,
  LibraryStore,
  type Method,
  type MethodResult,
  methods,
  readPool,
  renderComparison,
  retrievalMethodOf,
  runMethod,
  synthFormatVersion,
  synthSettings,
} from "../../synth/index.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";

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
  priceOf,
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
            // Each role's model and where it came from (flag, environment, config, --model).
            roleModels: roles.choices,
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
}
