/** What the `synth` subcommands share: the common flags, the task family, models and their caches. */
import { resolve } from "node:path";
import type { Command } from "commander";
import { UsageError } from "../../core/errors.js";
import { createSandbox, defaultCacheDir, type SandboxV1 } from "../../env/index.js";
import {
  createEmbeddingClient,
  loadModelConfig,
  ModelCallCache,
  ModelClient,
  priceFor,
} from "../../model/index.js";
import {
  BuiltinTaskFamily,
  defaultSplitSeed,
  type FamilyTask,
  HumanEvalTaskFamily,
  humanEvalPathOf,
  type ModelRole,
  modelRoles,
  type RetrievalOptions,
  type RoleModelChoices,
  type RoleModels,
  type RolePrices,
  resolveEmbeddingModel,
  resolveRoleModels,
  roleVariables,
  type Split,
  SuiteTaskFamily,
  type TaskFamilyV1,
  type TokenPrice,
} from "../../synth/index.js";
import type { CliIo } from "../context.js";

export interface CommonFlags {
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
  solverModel?: string;
  synthModel?: string;
  criticModel?: string;
  editorModel?: string;
}

export function integer(value: string, flag: string, minimum: number): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < minimum)
    throw new UsageError(
      "cli.integer",
      `${flag}: expected an integer ≥ ${minimum}, got "${value}"`,
    );
  return number;
}

export function share(value: string, flag: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0 || number > 1)
    throw new UsageError("cli.share", `${flag}: expected a number in (0, 1], got "${value}"`);
  return number;
}

export function addCommon(command: Command): Command {
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
    .requiredOption(
      "--model <spec>",
      "model spec, e.g. anthropic:claude-haiku-4-5: every role's model unless given its own",
    )
    .option(
      "--solver-model <spec>",
      `the solver's model (else $${roleVariables.solver}, else synthModels.solver of the config, else --model)`,
    )
    .option(
      "--synth-model <spec>",
      `the synthesiser's model (else $${roleVariables.synthesiser}, else synthModels.synthesiser, else --model)`,
    )
    .option(
      "--critic-model <spec>",
      `the critic's model (else $${roleVariables.critic}, else synthModels.critic, else --model)`,
    )
    .option(
      "--editor-model <spec>",
      `the editor's model (else $${roleVariables.editor}, else synthModels.editor, else --model)`,
    )
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

export async function openFamily(flags: CommonFlags, io: CliIo): Promise<TaskFamilyV1> {
  const suitePath = flags.family.startsWith("suite:") ? flags.family.slice(6) : undefined;
  const humanEvalPath = humanEvalPathOf(flags.family);
  if (
    flags.family !== "builtin" &&
    (suitePath === undefined || suitePath === "") &&
    (humanEvalPath === undefined || humanEvalPath === "")
  )
    throw new UsageError(
      "cli.synth-family-unknown",
      `--family: unknown task family "${flags.family}" (available: builtin, suite:<suite-dir>, humaneval:<path>)`,
    );
  if (flags.familyDir !== undefined && flags.family !== "builtin")
    throw new UsageError(
      "cli.synth-family-dir",
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

export async function selectTasks(
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
        "cli.synth-tasks-unknown",
        `--tasks: not in the ${split} split: ${unknown.join(", ")}`,
      );
    tasks = tasks.filter((task) => wanted.includes(task.id));
  }
  if (flags.limit !== undefined) tasks = tasks.slice(0, integer(flags.limit, "--limit", 1));
  return tasks;
}

export const splitSeedOf = (flags: CommonFlags): number =>
  integer(flags.splitSeed, "--split-seed", 0);

/** The model's list price (config override, else the built-in table); undefined when unknown. */
export function priceOf(model: ModelClient, io: CliIo): TokenPrice | undefined {
  const prices = loadModelConfig({ cwd: io.cwd, env: io.env }).config.prices ?? {};
  return priceFor(model.spec, prices);
}

export const embeddingOption = [
  "--embedding-model <spec>",
  "retrieve by embedding similarity, e.g. openai:text-embedding-3-small (default: $SKILLSMITH_EMBEDDING_MODEL, else synth.embeddingModel of the config, else BM25)",
] as const;

/**
 * Retrieval as the flags ask: top-k and, when an embedding model is configured, its client —
 * resolved (and built) before any model call, so a bad spec costs nothing.
 */
export function retrievalOf(
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
export const manifestPathOf = (logPath: string): string =>
  `${logPath.endsWith(".jsonl") ? logPath.slice(0, -".jsonl".length) : logPath}.manifest.json`;

export function parseSplit(value: string): Split {
  if (value !== "train" && value !== "test")
    throw new UsageError("cli.synth-split", `--split: expected train or test, got "${value}"`);
  return value;
}

/** Call caches opened by the running command; closed when its action ends. */
export const openCaches: ModelCallCache[] = [];

export function openModel(flags: CommonFlags, io: CliIo): ModelClient {
  if (flags.cache === undefined)
    return new ModelClient({ spec: flags.model, env: io.env, cwd: io.cwd });
  const cache = ModelCallCache.open(resolve(io.cwd, flags.cache));
  openCaches.push(cache);
  return new ModelClient({ spec: flags.model, env: io.env, cwd: io.cwd, cache, cacheMode: "use" });
}

/**
 * The model of every role: flag > environment > config > `--model`. A role on the run's model
 * shares its client (one ledger, one cache); each other spec gets its own client, built before
 * any call so a bad spec costs nothing. Prices per role when every role's model has one.
 */
export function openRoleModels(
  flags: CommonFlags,
  io: CliIo,
  model: ModelClient,
): {
  models: RoleModels;
  specs: Record<ModelRole, string>;
  choices: RoleModelChoices;
  prices?: RolePrices;
} {
  const choices = resolveRoleModels(
    {
      solver: flags.solverModel,
      synthesiser: flags.synthModel,
      critic: flags.criticModel,
      editor: flags.editorModel,
    },
    flags.model,
    io,
  );
  const clients = new Map<string, ModelClient>([[flags.model, model]]);
  const models: RoleModels = {};
  const specs = {} as Record<ModelRole, string>;
  const prices: RolePrices = {};
  let priced = true;
  for (const role of modelRoles) {
    const { spec } = choices[role];
    let client = clients.get(spec);
    if (client === undefined) {
      client = openModel({ ...flags, model: spec }, io);
      clients.set(spec, client);
    }
    models[role] = client;
    specs[role] = spec;
    const price = priceOf(client, io);
    if (price === undefined) priced = false;
    else prices[role] = price;
  }
  return { models, specs, choices, ...(priced ? { prices } : {}) };
}

export function closingCaches<A extends unknown[]>(
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

export const defaultStore = (family: string) => `.skillsmith/synth/${family}`;
