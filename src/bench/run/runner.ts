/**
 * The paired runner (protocol A.5): for every configuration × skill × requirement × arm ×
 * repeat not yet in the store, materialise a fresh workspace from the skill's prepared base,
 * run the agent (the skill installed only in the `with` arm), run the verifier, and store the
 * pass ratio bound to its trajectory. Infrastructure failures are attempts, retried up to a
 * bound and never scored; timeouts score 0 and are flagged; agent errors score what the
 * verifier finds.
 *
 * `runSuite` schedules in this process; the queue path (`../queue/`) plans with the same
 * `planRun` / `openRunDirectory` and executes on workers with the same `executeWithRetries` /
 * `executeRun`, so a run is executed one way wherever it runs.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import {
  type AgentHarnessV1,
  type AgentModel,
  createHarness,
  findAgentCli,
  pricedUsage,
  type Solution,
  type Trajectory,
} from "../../agents/index.js";
import { isSkillsmithError, UsageError } from "../../core/errors.js";
import { writeFileAtomic } from "../../core/fs.js";
import { packageVersion } from "../../core/paths.js";
import { runProcess } from "../../core/process.js";
import {
  createSandbox,
  DEFAULT_SANDBOX_LIMITS,
  defaultCacheDir,
  diagnoseCollectionError,
  flagForLimit,
  freshWorkspaceDigest,
  type LimitEnforcement,
  materialiseVerified,
  type PreparedBase,
  prepareBase,
  type SandboxKind,
  type SandboxV1,
  type SetupNetworkChoice,
  treeDigest,
  withPreparedRuntime,
} from "../../env/index.js";
import {
  type ModelPrice,
  redactKnownSecrets,
  redactSecrets,
  registerSecret,
  secretsFromEnvironment,
} from "../../model/index.js";
import type { SuiteCheck } from "../check/check.js";
import {
  MANIFEST_FORMAT,
  mergeManifest,
  type RunManifest,
  readManifest,
  writeManifest,
} from "../store/manifest.js";
import {
  ARMS,
  type AttemptRecord,
  capVerifierOutput,
  formatRunKey,
  ResultsStore,
  type RunKey,
  type RunResult,
  TRAJECTORIES_FOLDER,
  variantArm,
} from "../store/results.js";
import { loadSuiteSelection, type SuiteSelection, selectFromSuite } from "../suite/load.js";
import type { AgentKind, Configuration } from "../suite/schema.js";
import type { ExcludedPart, Suite, SuiteRequirement, SuiteSkill } from "../suite/types.js";
import { type VariantOption, withVariants } from "../suite/variants.js";
import { repositorySource, verifiersNeedPython } from "./environments.js";
import { gateRuns } from "./gate.js";
import { captureWorkspacePatch } from "./patch.js";
import { Predictions } from "./predictions.js";
import { BaselineSources, fingerprints, installedFolders } from "./reuse.js";
import { prepareTaskBase, requireTaskImages, taskSandbox } from "./task-environment.js";
import {
  defaultTimeoutMs as defaultVerifierTimeoutMs,
  runSuiteVerifier,
  suiteVerifierInventory,
} from "./verifier.js";

/** A registered sandbox kind (`local`, `container`, `unsafe`, or one added with `registerSandbox`). */
export type { SandboxKind };

export interface ModelEndpoint {
  readonly baseUrl?: string;
  readonly apiKey?: string;
}

function endpointFor(
  configuration: Configuration,
  options: Pick<ExecutionContext, "modelEndpoint">,
): ModelEndpoint | undefined {
  const endpoint = options.modelEndpoint;
  return typeof endpoint === "function" ? endpoint(configuration) : endpoint;
}

/**
 * Model endpoints for agents that talk to one, from the variables their own clients read
 * (`ANTHROPIC_BASE_URL`/`ANTHROPIC_API_KEY`, `OPENAI_BASE_URL`/`OPENAI_API_KEY`).
 */
export function endpointFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): (configuration: Configuration) => ModelEndpoint | undefined {
  return (configuration) => {
    const names =
      configuration.agent === "claude-code" ||
      (configuration.agent === "builtin" && configuration.model?.startsWith("anthropic:") === true)
        ? { baseUrl: "ANTHROPIC_BASE_URL", apiKey: "ANTHROPIC_API_KEY" }
        : configuration.agent === "codex" || configuration.agent === "builtin"
          ? { baseUrl: "OPENAI_BASE_URL", apiKey: "OPENAI_API_KEY" }
          : undefined;
    if (names === undefined) return undefined;
    const baseUrl = env[names.baseUrl];
    const apiKey = env[names.apiKey];
    return {
      ...(baseUrl === undefined || baseUrl === "" ? {} : { baseUrl }),
      ...(apiKey === undefined || apiKey === "" ? {} : { apiKey }),
    };
  };
}

export interface RunProgress {
  /** Runs this invocation has to do (excluding those already stored). */
  readonly total: number;
  /** Runs already stored before this invocation started. */
  readonly alreadyDone: number;
  /** Runs scored by this invocation. */
  readonly done: number;
  readonly running: number;
  /** Runs given up after every attempt failed for infrastructure reasons. */
  readonly failed: number;
  /** Recorded cost in the whole run directory. */
  readonly costUsd: number;
  /** Estimated time to finish, once at least one run has finished. */
  readonly etaMs?: number;
  /** The run that just finished, when this update is about one. */
  readonly last?: RunKey & { readonly status: string; readonly passRatio?: number };
}

/** A run's counters at one moment; `etaMs` is undefined until it can be estimated. */
export type ProgressCounters = Omit<RunProgress, "costUsd" | "etaMs" | "last"> & {
  readonly etaMs: number | undefined;
};

/**
 * The `progress(last?)` function of a run: each call reports the counters read at that moment
 * to `onProgress`, with the cost recorded in the store; nothing is read without a listener.
 */
export function progressReporter(
  options: Pick<RunSuiteOptions, "onProgress">,
  store: ResultsStore,
  counters: () => ProgressCounters,
): (last?: RunProgress["last"]) => void {
  return (last) => {
    if (options.onProgress === undefined) return;
    const { total, alreadyDone, done, running, failed, etaMs } = counters();
    options.onProgress({
      total,
      alreadyDone,
      done,
      running,
      failed,
      costUsd: store.totalCostUsd(),
      ...(etaMs === undefined ? {} : { etaMs }),
      ...(last === undefined ? {} : { last }),
    });
  };
}

export interface RunSuiteOptions {
  /** A loaded suite, or the folder to load it from. */
  readonly suite: Suite | string;
  readonly runDir: string;
  /** Configuration ids to run; all of the suite's when absent. */
  readonly configs?: readonly string[];
  /** Replace the agent of every selected configuration. */
  readonly agentOverride?: AgentKind;
  /** Replace the model of every selected configuration. */
  readonly modelOverride?: string;
  readonly concurrency?: number;
  readonly repeats?: number;
  readonly budgetUsd?: number;
  /**
   * Runs already stored are always skipped; `resume: true` additionally requires the run
   * directory to hold an earlier run (so a typo in `--out` does not start afresh silently).
   */
  readonly resume?: boolean;
  /** The replay agent's recorded patches: a parsed set or a JSONL file path. */
  readonly predictions?: Predictions | string;
  /** A sandbox, or the kind to create (default `local`, i.e. bubblewrap). */
  readonly sandbox?: SandboxV1 | SandboxKind;
  /** Attempts per run key before it is given up (infrastructure failures only). Default 3. */
  readonly maxAttempts?: number;
  /** Where prepared bases and workspaces live; `defaultCacheDir()` when absent. */
  readonly cacheDir?: string;
  /** Endpoint and key for model-backed agents (a local gateway, the scripted server in tests). */
  readonly modelEndpoint?:
    | ModelEndpoint
    | ((configuration: Configuration) => ModelEndpoint | undefined);
  /** Extra environment for agent processes. */
  readonly agentEnv?: Readonly<Record<string, string>>;
  /**
   * Prices that win over the built-in table (`model.prices` of the config): a run whose agent
   * reports tokens but no cost (Codex, builtin) costs its tokens at this price, for the budget.
   */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  /** Build the harness of a configuration (default: `createHarness` with this run's inputs). */
  readonly harnessFor?: (
    configuration: Configuration,
    defaults: () => AgentHarnessV1,
  ) => AgentHarnessV1;
  /**
   * Earlier run directories whose unassisted runs are reused when their fingerprint is this
   * run's (`./reuse.ts`); ignored with `freshBaseline`.
   */
  readonly reuse?: readonly string[];
  /** Run every unassisted run afresh even when `reuse` names sources. */
  readonly freshBaseline?: boolean;
  /** Recorded in the manifest. */
  readonly commandLine?: readonly string[];
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: RunProgress) => void;
  /** Notes worth showing a person (fallbacks, skipped skills). */
  readonly onWarning?: (message: string) => void;
  /** Which skills and requirements to run (`--skill`, `--requirement`); all when absent. */
  readonly selection?: SuiteSelection;
  /** Skill variants to add as arms (`--variant [skill:]name=dir`), beside the suite's own. */
  readonly variants?: readonly VariantOption[];
  /**
   * Run the verifier check first (default true; `--no-check` skips it): broken requirements get
   * no agent time and are stored flagged `broken-verifier`, weak ones run flagged
   * `weak-verifier`.
   */
  readonly check?: boolean;
  /** Share of checks passing untouched from which a verifier is weak (default ½). */
  readonly weakThreshold?: number;
  /** Setup's network: `auto` (default), `on`, `off`. */
  readonly setupNetwork?: SetupNetworkChoice;
  /** Environment preparation and the check, line by line (long work, for stderr). */
  readonly onLog?: (line: string) => void;
  /** `FROM` image → local image, for environment-only tasks' Dockerfiles (`--base-image`). */
  readonly baseImages?: Readonly<Record<string, string>>;
}

export interface RunFailure {
  readonly key: RunKey;
  readonly attempts: number;
  readonly error: string;
}

export interface RunSuiteSummary {
  readonly runDir: string;
  readonly total: number;
  readonly alreadyDone: number;
  readonly executed: number;
  /** Unassisted runs copied from `reuse` sources instead of executed (included in `executed`). */
  readonly reused?: number;
  readonly failed: readonly RunFailure[];
  /** Runs not started because the budget was reached. */
  readonly notScheduled: number;
  /**
   * Runs stored without an agent because nothing could be measured: their skill's environment
   * failed (`environment-failure`) or the check found their verifier broken (`broken-verifier`).
   */
  readonly unmeasured?: number;
  /** Skills whose environment could not be prepared (or whose commit is missing), with why. */
  readonly environmentFailures?: readonly { readonly skill: string; readonly reason: string }[];
  /** The verifier check of this invocation, when it ran. */
  readonly check?: SuiteCheck;
  readonly stoppedByBudget: boolean;
  readonly aborted: boolean;
  readonly costUsd: number;
  readonly wallTimeMs: number;
}

/** Raw logs longer than this go to a file under `trajectories/` instead of the row. */
const INLINE_LOG_LIMIT = 64 * 1024;
const DEFAULT_MODELS: Readonly<Record<string, string>> = {
  "claude-code": "anthropic:claude-sonnet-4-5",
  codex: "openai:gpt-5",
};

/** One run to execute: its key and what the key names in the suite. */
export interface PlannedRun {
  readonly key: RunKey;
  readonly configuration: Configuration;
  readonly skill: SuiteSkill;
  readonly requirement: SuiteRequirement;
}

/** A failure that costs an attempt and is retried: never scored. */
class InfraFailure extends Error {
  constructor(
    message: string,
    readonly costUsd = 0,
  ) {
    super(message);
  }
}

/** A function, not an inline check, so TypeScript does not narrow `aborted` across awaits. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function isUserMistake(error: unknown): boolean {
  return isSkillsmithError(error) && (error.family === "usage" || error.family === "input");
}

/** An error's message, or the thrown value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Where a configuration renamed by `--agent`/`--model` came from; recorded beside it in the
 * manifest (`derivedFrom`).
 */
export interface ConfigurationOrigin {
  /** The suite's configuration id. */
  readonly id: string;
  readonly agent: string;
  readonly model?: string;
  /** The overrides that changed it. */
  readonly overrides: { readonly agent?: string; readonly model?: string };
}

export interface EffectiveConfiguration {
  readonly configuration: Configuration;
  /** Present when the overrides changed what runs, and so the id. */
  readonly derivedFrom?: ConfigurationOrigin;
}

/** Characters a configuration id may hold (`idSchema`); anything else becomes "-". */
function idPart(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[^A-Za-z0-9]+/, "");
}

/**
 * The id of a configuration whose agent or model an override changed, named after what runs:
 * `<agent>.<model>` (the model without its provider prefix or base URL, e.g.
 * `claude-code.claude-sonnet-4-5`), or `<agent>` for agents without a model (`none`, `oracle`).
 * When the suite has several configurations, the suite's id follows (`….<id>`), so two
 * configurations that differ only in their limits stay apart. It depends on the suite and the
 * overrides only, never on which configurations are selected, so a resumed run (and the queue
 * coordinator, which plans the same way) finds the same keys.
 */
export function overriddenConfigurationId(
  configuration: Pick<Configuration, "agent" | "model">,
  original: { readonly id: string; readonly suiteConfigurations: number },
): string {
  const spec = modelSpecOf(configuration as Configuration);
  const model = spec === configuration.agent ? "" : spec.split(":").slice(1).join(":") || spec;
  const modelName = model.split("@")[0] ?? model;
  const parts = [configuration.agent, modelName];
  if (original.suiteConfigurations > 1) parts.push(original.id);
  const id = idPart(parts.filter((part) => part !== "").join("."));
  return (id === "" ? idPart(original.id) : id).slice(0, 128);
}

/**
 * Configurations of this invocation: selected by id, then with the agent/model overrides. An
 * override that changes what runs renames the configuration (`overriddenConfigurationId`) and
 * records where it came from; one that changes nothing keeps it as it is.
 */
export function resolveConfigurations(
  suite: Suite,
  options: Pick<RunSuiteOptions, "configs" | "agentOverride" | "modelOverride">,
): EffectiveConfiguration[] {
  let selected = suite.configurations;
  if (options.configs !== undefined && options.configs.length > 0) {
    const known = new Set(suite.configurations.map((configuration) => configuration.id));
    const unknown = options.configs.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw new UsageError(
        "run-config-unknown",
        `unknown configuration ${unknown.map((id) => `"${id}"`).join(", ")}; the suite has: ${[...known].join(", ")}`,
      );
    }
    selected = selected.filter((configuration) => options.configs?.includes(configuration.id));
  }
  const resolved = selected.map((configuration): EffectiveConfiguration => {
    const agent = options.agentOverride ?? configuration.agent;
    const changedAgent = agent !== configuration.agent;
    const model = options.modelOverride ?? (changedAgent ? undefined : configuration.model);
    const { model: _model, ...rest } = configuration;
    const overridden: Configuration = { ...rest, agent, ...(model === undefined ? {} : { model }) };
    if (!changedAgent && modelSpecOf(overridden) === modelSpecOf(configuration)) {
      return { configuration };
    }
    return {
      configuration: {
        ...overridden,
        id: overriddenConfigurationId(overridden, {
          id: configuration.id,
          suiteConfigurations: suite.configurations.length,
        }),
      },
      derivedFrom: {
        id: configuration.id,
        agent: configuration.agent,
        ...(configuration.model === undefined ? {} : { model: configuration.model }),
        overrides: {
          ...(options.agentOverride === undefined ? {} : { agent: options.agentOverride }),
          ...(options.modelOverride === undefined ? {} : { model: options.modelOverride }),
        },
      },
    };
  });
  const ids = resolved.map((item) => item.configuration.id);
  const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
  if (repeated.length > 0) {
    throw new UsageError(
      "run-config-ambiguous",
      `the overrides give several configurations the id "${repeated[0]}"; select one with --config`,
    );
  }
  return resolved;
}

/** The configurations `resolveConfigurations` gives, without where they came from. */
export function effectiveConfigurations(
  suite: Suite,
  options: Pick<RunSuiteOptions, "configs" | "agentOverride" | "modelOverride">,
): Configuration[] {
  return resolveConfigurations(suite, options).map((item) => item.configuration);
}

async function agentVersions(
  configurations: readonly Configuration[],
): Promise<Record<string, string>> {
  const versions: Record<string, string> = {};
  const binaries = new Set<"claude" | "codex">();
  for (const configuration of configurations) {
    if (configuration.agent === "claude-code") binaries.add("claude");
    if (configuration.agent === "codex") binaries.add("codex");
  }
  for (const binary of binaries) {
    const path = await findAgentCli(binary);
    if (path === undefined) {
      versions[binary] = "not installed";
      continue;
    }
    const result = await runProcess(path, ["--version"], { timeoutMs: 20_000 });
    versions[binary] = result.exitCode === 0 ? result.stdout.trim() : `unknown (${path})`;
  }
  return versions;
}

async function solutionOf(
  requirement: SuiteRequirement,
  skill: SuiteSkill | undefined,
): Promise<Solution | undefined> {
  const solution = requirement.solution;
  if (solution === undefined) return undefined;
  if (solution.kind === "patch") return { diff: await readFile(solution.path, "utf8") };
  if (solution.kind === "files") return { folder: solution.path };
  // A Harbor solve.sh runs in the sandbox; the network only when the task allows the internet.
  return {
    script: solution.path,
    entry: solution.entry,
    network: skill?.environment?.allowInternet === true ? "host" : "none",
  };
}

export function plannedKeys(
  suite: Suite,
  configurations: readonly Configuration[],
  repeats: number,
): PlannedRun[] {
  const runs: PlannedRun[] = [];
  for (const configuration of configurations) {
    for (const skill of suite.skills) {
      for (const requirement of skill.requirements) {
        for (let repeat = 1; repeat <= repeats; repeat += 1) {
          const variants = Object.keys(skill.variants ?? {})
            .sort()
            .map((name) => variantArm(name));
          for (const arm of [...ARMS, ...variants]) {
            runs.push({
              key: {
                config: configuration.id,
                skill: skill.id,
                requirement: requirement.id,
                arm,
                repeat,
              },
              configuration,
              skill,
              requirement,
            });
          }
        }
      }
    }
  }
  return runs;
}

export async function openSandbox(
  kind: SandboxKind,
  onWarning?: (message: string) => void,
  /** Folders and files no workload may see (suite, run, cache, predictions), wherever they are. */
  hiddenPaths: readonly string[] = [],
): Promise<SandboxV1> {
  if (kind === "unsafe") {
    onWarning?.(
      "warning: running agents and verifiers WITHOUT a sandbox (--sandbox unsafe): they can read and write anything this user can",
    );
  }
  return kind === "local" ? createSandbox({ kind, hiddenPaths }) : createSandbox({ kind });
}

/** The inputs of a run, checked, before anything is written or a sandbox is opened. */
export interface RunPlan {
  readonly suite: Suite;
  readonly runDir: string;
  readonly repeats: number;
  readonly concurrency: number;
  readonly maxAttempts: number;
  readonly configurations: readonly Configuration[];
  /** Configurations renamed by the overrides (their id) and where each came from. */
  readonly derivations: ReadonlyArray<readonly [string, ConfigurationOrigin]>;
  readonly predictions: Predictions | undefined;
  readonly existingManifest: RunManifest | undefined;
  /** Skills and requirements of the suite left out because of errors in their files. */
  readonly excluded: readonly ExcludedPart[];
}

/**
 * Load and check what `options` ask for: the suite, the configurations with their overrides,
 * the predictions, the option values. Shared by the in-process runner and the queue coordinator.
 */
export async function planRun(options: RunSuiteOptions): Promise<RunPlan> {
  // A skill or requirement with broken files is left out (and reported), never the whole suite.
  const loaded =
    typeof options.suite === "string"
      ? await loadSuiteSelection(resolve(options.suite), {
          ...options.selection,
          partial: true,
        })
      : { suite: selectFromSuite(options.suite, options.selection ?? {}), excluded: [] };
  // Variants named on the command line join the loaded suite here, so a suite given by path
  // (loaded with its selection and partial errors) gets them as well as a suite object.
  const suite = await withVariants(loaded.suite, options.variants ?? []);
  const runDir = resolve(options.runDir);
  const repeats = options.repeats ?? 1;
  const concurrency = options.concurrency ?? 1;
  const maxAttempts = options.maxAttempts ?? 3;
  for (const [name, value] of [
    ["--repeats", repeats],
    ["--concurrency", concurrency],
    ["max attempts", maxAttempts],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) {
      throw new UsageError(
        "run-option-invalid",
        `${name} must be a positive integer (got ${value})`,
      );
    }
  }
  if (options.budgetUsd !== undefined && !(options.budgetUsd >= 0)) {
    throw new UsageError(
      "run-option-invalid",
      `--budget-usd must be a number ≥ 0 (got ${options.budgetUsd})`,
    );
  }
  const resolved = resolveConfigurations(suite, options);
  const configurations = resolved.map((item) => item.configuration);

  const predictions =
    typeof options.predictions === "string"
      ? await Predictions.read(resolve(options.predictions))
      : options.predictions;
  if (
    predictions === undefined &&
    options.harnessFor === undefined &&
    configurations.some((configuration) => configuration.agent === "replay")
  ) {
    throw new UsageError(
      "run-predictions-missing",
      "the replay agent needs recorded patches: pass --predictions <file.jsonl>",
    );
  }

  const existingManifest = await readManifest(runDir);
  if (options.resume === true && existingManifest === undefined) {
    throw new UsageError(
      "run-nothing-to-resume",
      `--resume: ${runDir} holds no earlier run (no manifest.json); drop --resume to start one`,
    );
  }
  return {
    suite,
    runDir,
    repeats,
    concurrency,
    maxAttempts,
    configurations,
    derivations: resolved.flatMap((item) =>
      item.derivedFrom === undefined ? [] : [[item.configuration.id, item.derivedFrom] as const],
    ),
    predictions,
    existingManifest,
    excluded: loaded.excluded,
  };
}

/** A run directory opened for writing: manifest merged and written, keys still to run. */
export interface OpenRun {
  readonly manifest: RunManifest;
  readonly store: ResultsStore;
  readonly planned: readonly PlannedRun[];
  /** Planned runs without a stored result, in plan order. */
  readonly pending: readonly PlannedRun[];
  readonly alreadyDone: number;
}

/** Merge this invocation into the manifest, open the store and find what is left to run. */
export async function openRunDirectory(
  plan: RunPlan,
  options: RunSuiteOptions,
  sandboxKind: string,
  enforcement?: LimitEnforcement,
): Promise<OpenRun> {
  const { suite, runDir, configurations, predictions, repeats, concurrency, maxAttempts } = plan;
  const now = new Date().toISOString();
  const currentManifest: RunManifest = {
    format: MANIFEST_FORMAT,
    createdAt: now,
    updatedAt: now,
    suite: { path: suite.root, name: suite.name, digest: await treeDigest(suite.root) },
    configurations: configurations.map((configuration) => {
      const derivedFrom = plan.derivations.find(([id]) => id === configuration.id)?.[1];
      return derivedFrom === undefined ? configuration : { ...configuration, derivedFrom };
    }),
    versions: {
      skillsmith: packageVersion(),
      node: process.version,
      agents: await agentVersions(configurations),
    },
    limits: {
      repeats,
      concurrency,
      maxAttempts,
      ...(options.budgetUsd === undefined ? {} : { budgetUsd: options.budgetUsd }),
    },
    sandbox: sandboxKind,
    ...(options.baseImages === undefined || Object.keys(options.baseImages).length === 0
      ? {}
      : { baseImages: { ...options.baseImages } }),
    sandboxLimits: {
      defaults: {
        ...DEFAULT_SANDBOX_LIMITS,
        verifierTimeoutSeconds: defaultVerifierTimeoutMs / 1000,
      },
      ...(enforcement === undefined
        ? {}
        : { enforcement: { ...enforcement, notes: [...enforcement.notes] } }),
    },
    ...(predictions === undefined
      ? {}
      : {
          predictions: {
            path: predictions.file,
            digest: predictions.digest,
          },
        }),
    seeds: {},
    commandLines: options.commandLine === undefined ? [] : [[...options.commandLine]],
  };
  const manifest =
    plan.existingManifest === undefined
      ? currentManifest
      : mergeManifest(plan.existingManifest, currentManifest, runDir);

  const store = ResultsStore.open(runDir);
  try {
    await writeManifest(runDir, manifest);
  } catch (error) {
    store.close();
    throw error;
  }
  const planned = plannedKeys(suite, configurations, repeats);
  const pending = planned.filter((run) => !store.has(run.key));
  return { manifest, store, planned, pending, alreadyDone: planned.length - pending.length };
}

/**
 * Prepared bases of a suite's skills, each prepared once per process on first use; a failed
 * preparation is retried by the next run that needs it.
 */
export function preparedBases(
  sandbox: SandboxV1,
  cacheDir: string,
  baseImages?: Readonly<Record<string, string>>,
): (skill: SuiteSkill) => Promise<PreparedBase> {
  const bases = new Map<string, Promise<PreparedBase>>();
  return (skill) => {
    let promise = bases.get(skill.id);
    if (promise === undefined) {
      const repository = skill.repository;
      // Environment-only tasks (Harbor): the task's image and its working directory.
      promise =
        repository === undefined
          ? prepareTaskBase({
              skill,
              sandbox,
              cacheDir,
              ...(baseImages === undefined ? {} : { baseImages }),
            })
          : prepareBase({
              source: repositorySource(skill),
              commit: repository.commit,
              setup: repository.setupChoice,
              sandbox,
              cacheDir,
              workspaceMountPath: repository.mountPath,
              verifierNeedsPython: verifiersNeedPython(skill),
            });
      bases.set(skill.id, promise);
      promise.catch(() => bases.delete(skill.id));
    }
    return promise;
  };
}

/** The harness of each configuration, built once: `harnessFor` when given, else the default. */
export function harnessesFor(
  suite: Suite,
  predictions: Predictions | undefined,
  harnessFor: RunSuiteOptions["harnessFor"],
  prices?: RunSuiteOptions["prices"],
): (configuration: Configuration) => AgentHarnessV1 {
  const harnesses = new Map<string, AgentHarnessV1>();
  return (configuration) => {
    let harness = harnesses.get(configuration.id);
    if (harness === undefined) {
      const defaults = () => defaultHarness(configuration, suite, predictions, prices);
      harness = harnessFor?.(configuration, defaults) ?? defaults();
      harnesses.set(configuration.id, harness);
    }
    return harness;
  };
}

/** Run every missing run of a suite; see the module comment. */
export async function runSuite(options: RunSuiteOptions): Promise<RunSuiteSummary> {
  const started = performance.now();
  const plan = await planRun(options);
  const { suite, runDir, concurrency, maxAttempts } = plan;

  const ownSandbox = typeof options.sandbox === "string" || options.sandbox === undefined;
  const sandbox =
    typeof options.sandbox === "object"
      ? options.sandbox
      : await openSandbox(options.sandbox ?? "local", options.onWarning, [
          suite.root,
          runDir,
          options.cacheDir ?? defaultCacheDir(),
          ...(plan.predictions === undefined ? [] : [plan.predictions.file]),
        ]);

  // Environment-only tasks whose FROM images are not here: one error naming them all.
  await requireTaskImages(suite.skills, sandbox, options.baseImages).catch(async (error) => {
    if (ownSandbox) await sandbox.dispose?.();
    throw error;
  });
  const enforcement = sandbox.limitEnforcement?.();
  for (const note of enforcement?.notes ?? []) {
    if (note.includes("NOT")) options.onWarning?.(`warning: sandbox limits: ${note}`);
  }
  const opened = await openRunDirectory(plan, options, sandbox.kind, enforcement);
  const { store, planned, alreadyDone } = opened;
  let { manifest } = opened;
  try {
    const cacheDir = options.cacheDir ?? defaultCacheDir();
    // Environments and the verifier check before any agent runs (see gate.ts).
    const gate = await gateRuns({
      suite,
      excluded: plan.excluded,
      store,
      planned,
      configurations: plan.configurations,
      repeats: plan.repeats,
      sandbox,
      cacheDir,
      options,
      record: (result) => storeRunResult(store, runDir, result),
    });
    const pending = gate.pending;
    manifest = { ...manifest, ...gate.manifest };
    await writeManifest(runDir, manifest);
    const baseFor = async (skill: SuiteSkill): Promise<PreparedBase> => {
      const outcome = await gate.environmentFor(skill);
      if (outcome.ok) return outcome.base;
      throw new InfraFailure(outcome.reason);
    };
    const harnessOf = harnessesFor(suite, plan.predictions, options.harnessFor, options.prices);
    const fingerprintOf = fingerprints({
      baseFor,
      harnessName: (configuration) => harnessOf(configuration).name,
      modelSpec: modelSpecOf,
      agentVersions: manifest.versions.agents,
      sandbox: sandbox.kind,
      ...(plan.predictions === undefined
        ? {}
        : {
            replayPatch: (run: PlannedRun) =>
              plan.predictions?.patchFor({ ...run.key, arm: run.key.arm }),
          }),
    });
    const byKey = new Map(planned.map((run) => [formatRunKey(run.key), run]));
    const sources =
      options.freshBaseline === true || (options.reuse ?? []).length === 0
        ? undefined
        : await BaselineSources.open(options.reuse ?? [], runDir);
    let reused = 0;

    let done = 0;
    let running = 0;
    const failed: RunFailure[] = [];
    let stoppedByBudget = false;
    let executedMs = 0;
    let finishedRuns = 0;
    let next = 0;
    const progress = progressReporter(options, store, () => {
      const remaining = pending.length - next + running;
      const average = finishedRuns === 0 ? undefined : executedMs / finishedRuns;
      const etaMs = average === undefined ? undefined : (average * remaining) / concurrency;
      return { total: pending.length, alreadyDone, done, running, failed: failed.length, etaMs };
    });
    progress();

    const context: ExecutionContext = {
      sandbox,
      baseFor,
      harnessOf,
      ...(options.modelEndpoint === undefined ? {} : { modelEndpoint: options.modelEndpoint }),
      ...(options.agentEnv === undefined ? {} : { agentEnv: options.agentEnv }),
      ...(options.prices === undefined ? {} : { prices: options.prices }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
    const retry: RetryPolicy = {
      ledger: store,
      maxAttempts,
      record: async (result) => {
        const run = byKey.get(formatRunKey(result));
        const fingerprint = run === undefined ? undefined : await fingerprintOf(run);
        const flags = gate.weak.has(`${result.skill}/${result.requirement}`)
          ? [...result.flags, "weak-verifier"]
          : result.flags;
        return storeRunResult(store, runDir, {
          ...result,
          flags,
          ...(fingerprint === undefined ? {} : { fingerprint }),
        });
      },
      ...(options.onWarning === undefined ? {} : { onWarning: options.onWarning }),
    };
    const worker = async () => {
      for (;;) {
        if (options.signal?.aborted === true) return;
        if (options.budgetUsd !== undefined && store.totalCostUsd() >= options.budgetUsd) {
          if (next < pending.length) stoppedByBudget = true;
          return;
        }
        const run = pending[next];
        if (run === undefined) return;
        next += 1;
        running += 1;
        progress();
        const copied =
          sources === undefined
            ? undefined
            : await sources.reuse(run, await fingerprintOf(run), runDir);
        if (copied !== undefined) {
          const stored = await storeRunResult(store, runDir, copied);
          running -= 1;
          done += 1;
          reused += 1;
          progress({ ...run.key, status: stored.status, passRatio: stored.passRatio });
          continue;
        }
        const runStarted = performance.now();
        const outcome = await executeWithRetries(run, context, retry);
        running -= 1;
        executedMs += performance.now() - runStarted;
        finishedRuns += 1;
        if (outcome.kind === "scored") {
          done += 1;
          progress({
            ...run.key,
            status: outcome.result.status,
            passRatio: outcome.result.passRatio,
          });
        } else if (outcome.kind === "failed") {
          failed.push(outcome.failure);
          progress({ ...run.key, status: "infra_error" });
        } else {
          progress();
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: concurrency }, () => worker()));
    } finally {
      sources?.close();
      if (ownSandbox) await sandbox.dispose?.();
    }
    await writeManifest(runDir, { ...manifest, updatedAt: new Date().toISOString() });
    return {
      runDir,
      total: planned.length,
      alreadyDone,
      executed: done,
      reused,
      failed,
      notScheduled: pending.length - next,
      stoppedByBudget,
      aborted: options.signal?.aborted === true,
      costUsd: store.totalCostUsd(),
      wallTimeMs: performance.now() - started,
      unmeasured: gate.unmeasured,
      environmentFailures: gate.environmentFailures,
      ...(gate.check === undefined ? {} : { check: gate.check }),
    };
  } finally {
    store.close();
  }
}

function defaultHarness(
  configuration: Configuration,
  suite: Suite,
  predictions: Predictions | undefined,
  prices: RunSuiteOptions["prices"],
): AgentHarnessV1 {
  switch (configuration.agent) {
    case "replay":
      return createHarness("replay", {
        patchFor: ({ taskId, arm }) => {
          const [skill = "", requirement = ""] = taskId.split("/");
          return (
            predictions?.patchFor({
              config: configuration.id,
              skill,
              requirement,
              arm:
                arm === "with" || arm.startsWith("variant:") ? (arm as RunKey["arm"]) : "without",
            }) ?? ""
          );
        },
      });
    case "oracle":
      return createHarness("oracle", {
        solutionFor: (taskId) => {
          const [skillId, requirementId] = taskId.split("/");
          const requirement = suite.skills
            .find((skill) => skill.id === skillId)
            ?.requirements.find((candidate) => candidate.id === requirementId);
          return requirement === undefined
            ? undefined
            : solutionOf(
                requirement,
                suite.skills.find((skill) => skill.id === skillId),
              );
        },
      });
    case "codex":
      // Codex reports tokens only: it prices them with the run's price overrides.
      return createHarness("codex", prices === undefined ? {} : { prices });
    default:
      return createHarness(configuration.agent);
  }
}

/**
 * What one run needs besides its key: shared by the in-process runner and the queue worker,
 * so both execute a run the same way.
 */
export interface ExecutionContext {
  readonly sandbox: SandboxV1;
  readonly baseFor: (skill: SuiteSkill) => Promise<PreparedBase>;
  readonly harnessOf: (configuration: Configuration) => AgentHarnessV1;
  readonly modelEndpoint?: RunSuiteOptions["modelEndpoint"];
  /** Extra environment for agent processes. */
  readonly agentEnv?: Readonly<Record<string, string>>;
  readonly prices?: RunSuiteOptions["prices"];
  readonly signal?: AbortSignal;
}

/** Where attempts are counted and infrastructure failures recorded (the results store, or a list). */
export interface AttemptLedger {
  attemptCount(key: RunKey): number;
  recordInfraAttempt(record: Omit<AttemptRecord, "outcome">): void;
}

export interface RetryPolicy {
  readonly ledger: AttemptLedger;
  readonly maxAttempts: number;
  /** Keeps a scored result (the store, or the queue job's return value) and returns what was kept. */
  readonly record: (result: RunResult) => Promise<RunResult>;
  readonly onWarning?: (message: string) => void;
}

export type RunOutcome =
  | { readonly kind: "scored"; readonly result: RunResult }
  | { readonly kind: "failed"; readonly failure: RunFailure }
  | { readonly kind: "aborted" };

/**
 * Execute a run until one attempt is clean or the bound is reached. Infrastructure failures are
 * recorded in the ledger and never scored; user mistakes propagate.
 */
export async function executeWithRetries(
  run: PlannedRun,
  context: ExecutionContext,
  policy: RetryPolicy,
): Promise<RunOutcome> {
  const { ledger } = policy;
  let lastError = "";
  // The bound is per invocation, so re-running after fixing an endpoint retries a key that gave
  // up before; attempt numbers continue across invocations.
  for (let tries = 1; ; tries += 1) {
    const attempt = ledger.attemptCount(run.key) + 1;
    if (tries > policy.maxAttempts) {
      return {
        kind: "failed",
        failure: { key: run.key, attempts: tries - 1, error: lastError },
      };
    }
    const startedAt = new Date().toISOString();
    try {
      const result = await executeRun(run, context, attempt, startedAt);
      if (result === undefined || isAborted(context.signal)) return { kind: "aborted" };
      return { kind: "scored", result: await policy.record(result) };
    } catch (error) {
      if (isUserMistake(error)) throw error;
      if (isAborted(context.signal)) return { kind: "aborted" };
      lastError = messageOf(error);
      ledger.recordInfraAttempt({
        ...run.key,
        attempt,
        error: lastError,
        costUsd: error instanceof InfraFailure ? error.costUsd : 0,
        startedAt,
        finishedAt: new Date().toISOString(),
      });
      policy.onWarning?.(
        `infrastructure failure in ${formatRunKey(run.key)} (attempt ${attempt} of ${policy.maxAttempts}): ${lastError}`,
      );
    }
  }
}

function modelFor(configuration: Configuration, context: ExecutionContext): AgentModel {
  const spec = modelSpecOf(configuration);
  const endpoint = endpointFor(configuration, context);
  // Whatever path the key takes from here, the store and the CLI output remove it.
  registerSecret(endpoint?.apiKey);
  return {
    spec,
    ...(endpoint?.baseUrl === undefined ? {} : { baseUrl: endpoint.baseUrl }),
    ...(endpoint?.apiKey === undefined ? {} : { apiKey: endpoint.apiKey }),
  };
}

/** The model spec a configuration runs with (its agent's name for agents without a model). */
export function modelSpecOf(configuration: Configuration): string {
  return configuration.model ?? DEFAULT_MODELS[configuration.agent] ?? configuration.agent;
}

/**
 * One attempt of one run: materialise a fresh workspace, run the agent (the skill installed in
 * the `with` arm only), record the File Operations, run the verifier and build the result. The
 * trajectory is redacted and keeps its raw log inline; `storeRunResult` moves a large one to a
 * file. Throws for infrastructure failures; returns undefined when aborted.
 */
export async function executeRun(
  run: PlannedRun,
  context: ExecutionContext,
  attempt: number,
  startedAt: string,
): Promise<RunResult | undefined> {
  const { key, configuration, skill, requirement } = run;
  const { signal } = context;
  const started = performance.now();
  const base = await context.baseFor(skill);
  // Agent and verifier run in the skill's prepared environment (its folder read-only, its
  // interpreter first on PATH); an environment-only task's in the task's image, under its limits.
  const sandbox =
    skill.repository === undefined
      ? taskSandbox(context.sandbox, base, skill)
      : withPreparedRuntime(context.sandbox, base.runtime);
  // The base is walked once per process, not per run (src/env/workspace/identity.ts).
  const workspace = await materialiseVerified(base);
  const scratch = await mkdtemp(join(tmpdir(), "skillsmith-run-"));
  try {
    const workspaceDigest = await freshWorkspaceDigest(workspace);
    const timeoutSeconds = Math.min(
      configuration.limits.timeoutSeconds,
      skill.agentLimits?.timeoutSeconds ?? Number.POSITIVE_INFINITY,
    );
    const limits = skill.environment?.limits;
    const verifier = {
      ...requirement.verifier,
      ...(requirement.verifier.timeoutSeconds === undefined &&
      limits?.commandTimeoutSeconds !== undefined
        ? { timeoutSeconds: limits.commandTimeoutSeconds }
        : {}),
    };
    const verifierTarget = {
      sandbox,
      verifier,
      workspaceMountPath: workspace.mountPath,
      ...(base.environment === undefined ? {} : { image: base.environment.image }),
      ...(limits?.memoryMb === undefined ? {} : { memoryBytes: limits.memoryMb * 1024 * 1024 }),
      ...(limits?.processes === undefined ? {} : { maxProcesses: limits.processes }),
      ...(limits?.cpus === undefined ? {} : { cpus: limits.cpus }),
      ...(signal === undefined ? {} : { signal }),
    };
    // The verifier's test ids, fixed before the agent runs, in an untouched copy of the base.
    const inventory = await suiteVerifierInventory({
      ...verifierTarget,
      untouched: { digest: workspaceDigest, materialise: () => materialiseVerified(base) },
    }).catch((error: unknown) => {
      if (isUserMistake(error)) throw error;
      throw new InfraFailure(`verifier inventory could not be taken: ${messageOf(error)}`);
    });
    // The suite's skill in `with`, a variant's folders in `variant:<name>`, none in `without`.
    const installed = installedFolders(skill, key.arm);
    const withSkill = installed.length > 0;
    const skillPath = installed[0];
    const agentStarted = performance.now();
    let trajectory: Trajectory;
    try {
      trajectory = await context.harnessOf(configuration).run({
        task: requirement.raw,
        workspace: workspace.path,
        workspaceMountPath: workspace.mountPath,
        ...(skillPath === undefined ? {} : { skillPath }),
        ...(withSkill ? { skillPaths: installed } : {}),
        model: modelFor(configuration, context),
        limits: {
          timeoutMs: timeoutSeconds * 1000,
          ...(configuration.limits.maxTurns === undefined
            ? {}
            : { maxTurns: configuration.limits.maxTurns }),
          ...(configuration.limits.memoryMb === undefined
            ? {}
            : { memoryBytes: configuration.limits.memoryMb * 1024 * 1024 }),
          ...(configuration.limits.cpus === undefined ? {} : { cpus: configuration.limits.cpus }),
          ...(configuration.limits.processes === undefined
            ? {}
            : { maxProcesses: configuration.limits.processes }),
        },
        sandbox,
        taskId: `${skill.id}/${requirement.id}`,
        arm: key.arm,
        ...(context.agentEnv === undefined ? {} : { env: context.agentEnv }),
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      // User mistakes abort the whole run; anything else the harness throws costs an attempt.
      if (isUserMistake(error)) throw error;
      throw new InfraFailure(`agent harness failed: ${messageOf(error)}`);
    }
    const agentMs = performance.now() - agentStarted;
    if (isAborted(signal)) return undefined;
    // Tokens without a cost (Codex, builtin) are priced here, so the budget counts every agent.
    trajectory = {
      ...trajectory,
      usage: pricedUsage(
        trajectory.usage,
        modelSpecOf(configuration),
        configuration.agent === "claude-code" ? "anthropic" : "openai",
        context.prices,
      ),
    };
    if (trajectory.status === "infra_error") {
      throw new InfraFailure(
        `agent run lost to infrastructure: ${trajectory.error ?? "no detail"}`,
        trajectory.usage.costUsd ?? 0,
      );
    }

    const requiredFiles: Record<string, boolean> = {};
    for (const path of requirement.fileOperations) {
      const normalised = path.replace(/^\.?\//, "");
      requiredFiles[path] =
        (await stat(join(workspace.path, normalised)).catch(() => undefined)) !== undefined;
    }

    // The agent's final change, before the verifier touches the workspace (`bench regrade`).
    const secrets = secretsFromEnvironment(process.env);
    const apiKey = endpointFor(configuration, context)?.apiKey;
    if (apiKey !== undefined) secrets.push(apiKey);
    const patch = await captureWorkspacePatch(base.tree, workspace.path, (text) =>
      redactSecrets(text, secrets),
    ).catch(() => undefined);

    const verifierStarted = performance.now();
    let verification: Awaited<ReturnType<typeof runSuiteVerifier>> | undefined;
    if (trajectory.status !== "timeout") {
      verification = await runSuiteVerifier({
        ...verifierTarget,
        workspace: workspace.path,
        scratch,
        inventory,
      }).catch((error: unknown) => {
        if (isUserMistake(error)) throw error;
        throw new InfraFailure(
          `verifier could not run: ${messageOf(error)}`,
          trajectory.usage.costUsd ?? 0,
        );
      });
      if (isAborted(signal)) return undefined;
    }
    const verifierMs = verification === undefined ? 0 : performance.now() - verifierStarted;

    // Secrets of this process's environment never reach the store, whatever the harness did.
    const redacted = redactSecrets(trajectory, secrets);

    // The agent's process tree ran out of memory or processes: the run scores 0 with the flag.
    const agentLimit =
      trajectory.limitHit === undefined ? undefined : flagForLimit(trajectory.limitHit.limit);
    const timedOut = trajectory.status === "timeout";
    // A verifier that cannot import what the requirement asks to create measured the agent's
    // failure to deliver (0), not a verifier fault.
    let verifierFlags = verification?.flags ?? [];
    let diagnosisEvidence: string[] = [];
    if (verification !== undefined && verifierFlags.includes("collection-error")) {
      const diagnosis = diagnoseCollectionError({
        output: verification.output,
        fileOperations: requirement.fileOperations,
        requirementText: requirement.raw,
        workspaceMountPath: workspace.mountPath,
      });
      if (diagnosis.kind === "deliverable-missing") {
        verifierFlags = verifierFlags.map((flag) =>
          flag === "collection-error" ? "deliverable-missing" : flag,
        );
      }
      diagnosisEvidence = [diagnosis.reason];
    }
    const result: RunResult = {
      ...key,
      status:
        trajectory.status === "timeout"
          ? "timeout"
          : trajectory.status === "agent_error"
            ? "agent_error"
            : "completed",
      passRatio: timedOut || agentLimit !== undefined ? 0 : (verification?.passRatio ?? 0),
      passed: verification?.passed ?? 0,
      total: verification?.total ?? 0,
      checks: verification?.checks ?? [],
      flags: [
        ...new Set([
          ...(timedOut ? ["agent-timeout"] : []),
          ...(agentLimit === undefined ? [] : [agentLimit]),
          ...verifierFlags,
        ]),
      ],
      trajectory: redacted,
      // Harnesses that show no skills (replay, none, oracle) cannot tell: unknown, not "no".
      skillActivated: trajectory.skillsShownSource === "none" ? null : trajectory.skillActivated,
      workspaceDigest,
      requiredFiles,
      usage: {
        inputTokens: trajectory.usage.inputTokens,
        cachedInputTokens: trajectory.usage.cachedInputTokens,
        outputTokens: trajectory.usage.outputTokens,
        costUsd: trajectory.usage.costUsd ?? 0,
      },
      agentMs,
      verifierMs,
      totalMs: performance.now() - started,
      startedAt,
      finishedAt: new Date().toISOString(),
      attempts: attempt,
      ...(patch === undefined ? {} : { patch }),
      ...(verification === undefined
        ? {}
        : {
            verifier: {
              output: capVerifierOutput(redactSecrets(verification.output, secrets)),
              exitCode: verification.exitCode,
              durationMs: verification.durationMs,
              source: verification.source,
              ...(verification.evidence.length + diagnosisEvidence.length === 0
                ? {}
                : {
                    evidence: [...verification.evidence, ...diagnosisEvidence].map((line) =>
                      redactSecrets(line, secrets),
                    ),
                  }),
            },
          }),
    };
    if (isAborted(signal)) return undefined;
    return result;
  } finally {
    await workspace.dispose().catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Commit a result to the store: a raw log over the inline limit goes to a file under
 * `trajectories/` first, so the row never names a file that is not on disk.
 */
export async function storeRunResult(
  store: ResultsStore,
  runDir: string,
  unredacted: RunResult,
): Promise<RunResult> {
  // Redacted before anything is written, the trajectory file included.
  const result = redactKnownSecrets(unredacted);
  const trajectory = result.trajectory as { rawLog?: unknown } | null;
  const rawLog = typeof trajectory?.rawLog === "string" ? trajectory.rawLog : "";
  let stored = result;
  if (rawLog.length > INLINE_LOG_LIMIT) {
    const trajectoryFile = join(
      TRAJECTORIES_FOLDER,
      `${result.config}.${result.skill}.${result.requirement}.${result.arm}.${result.repeat}.a${result.attempts}-${randomBytes(4).toString("hex")}.log`,
    );
    await writeFileAtomic(join(runDir, trajectoryFile), rawLog);
    stored = {
      ...result,
      trajectory: { ...(trajectory as object), rawLog: `[in ${trajectoryFile}]` },
      trajectoryFile,
    };
  }
  store.recordResult(stored);
  return stored;
}

/** Where the results of `runSuite` for a suite go when no `--out` is given. */
export function defaultRunDir(cwd: string, suite: Suite): string {
  return join(cwd, "runs", suite.name.replace(/[^A-Za-z0-9._-]/g, "-"));
}

export function relativeToCwd(cwd: string, path: string): string {
  const relativePath = relative(cwd, path);
  return relativePath === "" ? "." : relativePath.startsWith("..") ? path : relativePath;
}
