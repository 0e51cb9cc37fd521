/**
 * Planning a run: check the options and load the suite (`planRun`), list every run key
 * (`plannedKeys`), and open the run directory — manifest merged and written, store opened, keys
 * already stored set aside (`openRunDirectory`). Nothing here starts an agent; the in-process
 * runner and the queue coordinator both plan through it, so they find the same keys.
 */
import { join, relative, resolve } from "node:path";
import { findAgentCli, harnessFacts } from "../../agents/index.js";
import { UsageError } from "../../core/errors.js";
import { packageVersion } from "../../core/paths.js";
import { runProcess } from "../../core/process.js";
import { DEFAULT_SANDBOX_LIMITS, type LimitEnforcement, treeDigest } from "../../env/index.js";
import {
  type ArmSkills,
  MANIFEST_FORMAT,
  mergeManifest,
  type RunManifest,
  readManifest,
  writeManifest,
} from "../store/manifest.js";
import { ARMS, ResultsStore, type RunKey, variantArm } from "../store/results.js";
import { withDistractors } from "../suite/distractors.js";
import { loadSuiteSelection, selectFromSuite } from "../suite/load.js";
import type { Configuration } from "../suite/schema.js";
import type { ExcludedPart, Suite, SuiteRequirement, SuiteSkill } from "../suite/types.js";
import { withVariants } from "../suite/variants.js";
import { armSkillRecords } from "./arm-skills.js";
import { type ConfigurationOrigin, resolveConfigurations } from "./configurations.js";
import {
  isLoadedSelection,
  type RunEnvironment,
  type RunInputs,
  type RunPolicy,
} from "./options.js";
import { Predictions } from "./predictions.js";
import { defaultTimeoutMs as defaultVerifierTimeoutMs } from "./verifier.js";

/** One run to execute: its key and what the key names in the suite. */
export interface PlannedRun {
  readonly key: RunKey;
  readonly configuration: Configuration;
  readonly skill: SuiteSkill;
  readonly requirement: SuiteRequirement;
}

/**
 * The version of each agent CLI the configurations run, keyed by binary, as its harness
 * registration says to ask it (`versionCommand`); harnesses without a CLI record nothing here.
 */
export async function agentVersions(
  configurations: readonly Configuration[],
): Promise<Record<string, string>> {
  const versions: Record<string, string> = {};
  const commands = new Map<string, readonly string[]>();
  for (const configuration of configurations) {
    const command = harnessFacts(configuration.agent).versionCommand;
    if (command !== undefined) commands.set(command.binary, command.args);
  }
  for (const [binary, args] of commands) {
    const path = await findAgentCli(binary);
    if (path === undefined) {
      versions[binary] = "not installed";
      continue;
    }
    const result = await runProcess(path, [...args], { timeoutMs: 20_000 });
    versions[binary] = result.exitCode === 0 ? result.stdout.trim() : `unknown (${path})`;
  }
  return versions;
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
  /** What each arm of each skill installs (recorded in the manifest). */
  readonly armSkills: readonly ArmSkills[];
}

/** What planning reads: the inputs, the policy, and of the environment the images and harnesses. */
type PlanOptions = RunInputs & RunPolicy & Pick<RunEnvironment, "baseImages" | "harnessFor">;

/**
 * Load and check what `options` ask for: the suite, the configurations with their overrides,
 * the predictions, the option values. Shared by the in-process runner and the queue coordinator.
 */
export async function planRun(options: PlanOptions): Promise<RunPlan> {
  // A skill or requirement with broken files is left out (and reported), never the whole suite.
  const loaded =
    typeof options.suite === "string"
      ? await loadSuiteSelection(resolve(options.suite), {
          ...options.selection,
          partial: true,
        })
      : isLoadedSelection(options.suite)
        ? {
            suite: selectFromSuite(options.suite.suite, options.selection ?? {}),
            excluded: options.suite.excluded,
          }
        : { suite: selectFromSuite(options.suite, options.selection ?? {}), excluded: [] };
  // Variants named on the command line join the loaded suite here, so a suite given by path
  // (loaded with its selection and partial errors) gets them as well as a suite object.
  const suite = await withDistractors(
    await withVariants(loaded.suite, options.variants ?? []),
    options.distractors ?? [],
  );
  // Before anything is written: a distractor named like a skill under test is refused here.
  const armSkills = await armSkillRecords(suite);
  const runDir = resolve(options.runDir);
  // The suite's protocol sets the defaults; the command line still overrides them.
  const repeats = options.repeats ?? suite.protocol?.repeats ?? 1;
  const concurrency = options.concurrency ?? 1;
  const maxAttempts = options.maxAttempts ?? suite.protocol?.maxAttempts ?? 3;
  for (const [name, value] of [
    ["--repeats", repeats],
    ["--concurrency", concurrency],
    ["max attempts", maxAttempts],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) {
      throw new UsageError(
        "bench.run-option-invalid",
        `${name} must be a positive integer (got ${value})`,
      );
    }
  }
  if (options.budgetUsd !== undefined && !(options.budgetUsd >= 0)) {
    throw new UsageError(
      "bench.run-option-invalid",
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
      "bench.run-predictions-missing",
      "the replay agent needs recorded patches: pass --predictions <file.jsonl>",
    );
  }

  const existingManifest = await readManifest(runDir);
  if (options.resume === true && existingManifest === undefined) {
    throw new UsageError(
      "bench.run-nothing-to-resume",
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
    armSkills,
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
  options: PlanOptions,
  sandboxKind: string,
  enforcement?: LimitEnforcement,
): Promise<OpenRun> {
  const { suite, runDir, configurations, predictions, repeats, concurrency, maxAttempts } = plan;
  const now = new Date().toISOString();
  const planned = plannedKeys(suite, configurations, repeats);
  const plannedRuns: Record<string, number> = {};
  for (const { key } of planned) {
    const id = `${key.config}/${key.skill}/${key.requirement}`;
    plannedRuns[id] = (plannedRuns[id] ?? 0) + 1;
  }
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
    armSkills: [...plan.armSkills],
    commandLines: options.commandLine === undefined ? [] : [[...options.commandLine]],
    plannedRuns,
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
  const pending = planned.filter((run) => !store.has(run.key));
  return { manifest, store, planned, pending, alreadyDone: planned.length - pending.length };
}

/** Where the results of `runSuite` for a suite go when no `--out` is given. */
export function defaultRunDir(cwd: string, suite: Suite): string {
  return join(cwd, "runs", suite.name.replace(/[^A-Za-z0-9._-]/g, "-"));
}

export function relativeToCwd(cwd: string, path: string): string {
  const relativePath = relative(cwd, path);
  return relativePath === "" ? "." : relativePath.startsWith("..") ? path : relativePath;
}
