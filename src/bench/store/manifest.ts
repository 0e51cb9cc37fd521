/**
 * `manifest.json` of a run directory: the inputs that produced the results beside it (suite and
 * its digest, effective configurations, versions, limits, command lines). A resumed run must
 * have the same inputs, or its results would mix two experiments under one key.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { InputError, UsageError } from "../../core/errors.js";
import { formatTag } from "../../core/format-tag.js";
import { formatTagSchema } from "../../core/format-tag-schema.js";
import { unlessMissing, writeFileAtomic } from "../../core/fs.js";
import { parseInput } from "../../core/parse.js";
import { redactKnownSecrets } from "../../model/redact.js";
import { configurationSchema } from "../suite/schema.js";

export const MANIFEST_FILE = "manifest.json";
export const MANIFEST_FORMAT = formatTag("run", 1);

/**
 * A configuration as it ran. `derivedFrom` is set when `--agent`/`--model` changed the suite's
 * configuration, which is then named after what ran (see `overriddenConfigurationId`).
 */
export const manifestConfigurationSchema = configurationSchema.extend({
  derivedFrom: z
    .strictObject({
      id: z.string(),
      agent: z.string(),
      model: z.string().optional(),
      overrides: z.strictObject({ agent: z.string().optional(), model: z.string().optional() }),
    })
    .optional(),
});

export type ManifestConfiguration = z.output<typeof manifestConfigurationSchema>;

/** The skills one arm of one skill installs (the same under every configuration). */
export const armSkillsSchema = z.object({
  skill: z.string(),
  arm: z.string(),
  skills: z.array(
    z.object({
      /** The name it installs under (its SKILL.md `name`). */
      name: z.string(),
      /** `treatment`: the arm's own skill; `distractor`: installed in every arm. */
      role: z.enum(["treatment", "distractor"]),
      /** Content digest of the folder (`treeDigest`). */
      digest: z.string(),
      path: z.string(),
    }),
  ),
});

export type ArmSkills = z.output<typeof armSkillsSchema>;

export const manifestSchema = z.object({
  format: formatTagSchema(MANIFEST_FORMAT),
  createdAt: z.string(),
  updatedAt: z.string(),
  suite: z.object({ path: z.string(), name: z.string(), digest: z.string() }),
  configurations: z.array(manifestConfigurationSchema),
  versions: z.object({
    skillsmith: z.string(),
    node: z.string(),
    agents: z.record(z.string(), z.string()),
  }),
  limits: z.object({
    repeats: z.number().int().positive(),
    concurrency: z.number().int().positive(),
    budgetUsd: z.number().optional(),
    maxAttempts: z.number().int().positive(),
  }),
  sandbox: z.string(),
  /** `--base-image` mappings (FROM image → local image) environment-only tasks were built with. */
  baseImages: z.record(z.string(), z.string()).optional(),
  /**
   * The limits every agent and verifier process tree got when its suite named none, and how this
   * machine enforced them (absent in manifests written before limits were recorded).
   */
  sandboxLimits: z
    .object({
      defaults: z.object({
        memoryBytes: z.number(),
        maxProcesses: z.number(),
        verifierTimeoutSeconds: z.number(),
      }),
      enforcement: z
        .object({
          mechanism: z.string(),
          memory: z.boolean(),
          processes: z.boolean(),
          cpu: z.boolean(),
          detectsHits: z.boolean(),
          notes: z.array(z.string()),
        })
        .optional(),
    })
    .optional(),
  predictions: z.object({ path: z.string(), digest: z.string() }).optional(),
  /** No randomness is used by the runner itself; recorded so a reader need not wonder. */
  seeds: z.record(z.string(), z.number()),
  /**
   * Each arm's installed skills per skill, under every configuration alike (absent in manifests
   * written before they were recorded): the skills under test and the distractors.
   */
  armSkills: z.array(armSkillsSchema).optional(),
  /**
   * What the untouched working directory scored in the verifier check, by `skill/requirement`,
   * over every invocation (the latest measurement wins): what the `none` control must score.
   */
  untouchedScores: z.record(z.string(), z.number()).optional(),
  /** Every command line that worked on this directory, oldest first. */
  commandLines: z.array(z.array(z.string())),
  /** `--skill` / `--requirement` of the latest invocation (absent: everything). */
  selection: z
    .object({
      skills: z.array(z.string()).optional(),
      requirements: z.array(z.string()).optional(),
    })
    .optional(),
  /**
   * Runs planned per `config/skill/requirement` (arms × repeats), over every invocation: what a
   * report counts its stored runs against ("incomplete: k of n runs").
   */
  plannedRuns: z.record(z.string(), z.number().int().nonnegative()).optional(),
  /** How setup treated the network (`auto`, `on`, `off`) in the latest invocation. */
  setupNetwork: z.string().optional(),
  /** Each skill's environment as the latest invocation found or prepared it. */
  environments: z.array(z.record(z.string(), z.unknown())).optional(),
  /** The verifier check of the latest invocation (absent with --no-check). */
  check: z
    .object({
      format: z.string(),
      weakThreshold: z.number(),
      skipped: z.boolean().optional(),
      requirements: z.array(
        z.object({
          skill: z.string(),
          requirement: z.string(),
          status: z.string(),
          untouchedPassRatio: z.number().nullable(),
          reason: z.string(),
          digest: z.string().optional(),
          cached: z.boolean().optional(),
        }),
      ),
    })
    .optional(),
});

export type RunManifest = z.output<typeof manifestSchema>;

export async function readManifest(runDir: string): Promise<RunManifest | undefined> {
  const file = join(runDir, MANIFEST_FILE);
  const text = await unlessMissing(file, readFile(file, "utf8"));
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError("bench.run-manifest-json", "not valid JSON", { file }, { cause: error });
  }
  return parseInput(manifestSchema, value, {
    code: "bench.run-manifest-invalid",
    location: { file },
    describe: (problem) => `not a skillsmith run manifest: ${problem.message}`,
  });
}

export async function writeManifest(runDir: string, manifest: RunManifest): Promise<void> {
  // Command lines and configurations may name keys: the manifest is redacted like the store.
  await writeFileAtomic(
    join(runDir, MANIFEST_FILE),
    `${JSON.stringify(redactKnownSecrets(manifest), null, 2)}\n`,
  );
}

function sameConfiguration(left: ManifestConfiguration, right: ManifestConfiguration): boolean {
  return JSON.stringify(canonical(left)) === JSON.stringify(canonical(right));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, item]) => item !== undefined)
        .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
        .map(([key, item]) => [key, canonical(item)]),
    );
  }
  return value;
}

/**
 * Merge this invocation into an existing manifest, refusing inputs that would make the stored
 * results incomparable: another suite content, or a configuration id now meaning something else.
 */
export function mergeManifest(
  existing: RunManifest,
  current: RunManifest,
  runDir: string,
): RunManifest {
  if (existing.suite.digest !== current.suite.digest) {
    throw new UsageError(
      "bench.run-suite-changed",
      `${join(runDir, MANIFEST_FILE)}: the run directory holds results of suite "${existing.suite.name}" with digest ${existing.suite.digest.slice(0, 12)}, but the suite now has digest ${current.suite.digest.slice(0, 12)}; use a new --out folder for the changed suite`,
    );
  }
  if (
    existing.predictions !== undefined &&
    current.predictions !== undefined &&
    existing.predictions.digest !== current.predictions.digest
  ) {
    throw new UsageError(
      "bench.run-predictions-changed",
      `${join(runDir, MANIFEST_FILE)}: the predictions file changed since this run started; use a new --out folder`,
    );
  }
  const configurations = [...existing.configurations];
  for (const configuration of current.configurations) {
    const stored = configurations.find((candidate) => candidate.id === configuration.id);
    if (stored === undefined) configurations.push(configuration);
    else if (!sameConfiguration(stored, configuration)) {
      throw new UsageError(
        "bench.run-configuration-changed",
        `${join(runDir, MANIFEST_FILE)}: configuration "${configuration.id}" was ${JSON.stringify(canonical(stored))} in this run and is now ${JSON.stringify(canonical(configuration))} (--agent/--model change it); use a new --out folder`,
      );
    }
  }
  // Results stored so far were built with the earlier mappings: one that now says otherwise for
  // the same image would mix environments in one run directory.
  const baseImages = { ...existing.baseImages };
  for (const [from, to] of Object.entries(current.baseImages ?? {})) {
    if (baseImages[from] !== undefined && baseImages[from] !== to) {
      throw new UsageError(
        "bench.run-base-image-changed",
        `${join(runDir, MANIFEST_FILE)}: this run built ${from} tasks from ${baseImages[from]}, not ${to}; use a new --out folder for another --base-image`,
      );
    }
    baseImages[from] = to;
  }
  const armSkills = mergeArmSkills(existing.armSkills, current.armSkills, runDir);
  // More repeats only add keys; the manifest keeps the largest count ever asked for.
  return {
    ...current,
    ...(Object.keys(baseImages).length === 0 ? {} : { baseImages }),
    createdAt: existing.createdAt,
    configurations,
    predictions: current.predictions ?? existing.predictions,
    limits: {
      ...current.limits,
      repeats: Math.max(existing.limits.repeats, current.limits.repeats),
    },
    commandLines: [...existing.commandLines, ...current.commandLines],
    ...(armSkills === undefined ? {} : { armSkills }),
    ...mergedUntouchedScores(existing, current),
    ...(existing.plannedRuns === undefined && current.plannedRuns === undefined
      ? {}
      : { plannedRuns: { ...existing.plannedRuns, ...current.plannedRuns } }),
  };
}

/**
 * The arms' skills of both invocations; an arm whose skills (names or contents) changed is
 * refused: its stored runs had other skills installed, and one key would mean two experiments.
 */
function mergeArmSkills(
  existing: readonly ArmSkills[] | undefined,
  current: readonly ArmSkills[] | undefined,
  runDir: string,
): ArmSkills[] | undefined {
  if (existing === undefined) return current === undefined ? undefined : [...current];
  const merged = [...existing];
  const describe = (entry: ArmSkills) =>
    entry.skills.map((skill) => `${skill.name} (${skill.role}, ${skill.digest})`).join(", ") ||
    "no skills";
  for (const entry of current ?? []) {
    const index = merged.findIndex(
      (stored) => stored.skill === entry.skill && stored.arm === entry.arm,
    );
    const stored = index < 0 ? undefined : merged[index];
    if (stored === undefined) merged.push(entry);
    else if (describe(stored) !== describe(entry)) {
      throw new UsageError(
        "bench.run-arm-skills-changed",
        `${join(runDir, MANIFEST_FILE)}: arm ${entry.arm} of skill ${entry.skill} installed ${describe(stored)} in this run and would now install ${describe(entry)} (a --distractor, --variant or skill folder changed); use a new --out folder`,
      );
    }
  }
  return merged;
}

/** The untouched scores of both invocations, the current measurement winning. */
export function mergedUntouchedScores(
  existing: Pick<RunManifest, "untouchedScores">,
  current: Pick<RunManifest, "untouchedScores">,
): Pick<RunManifest, "untouchedScores"> {
  const scores = { ...existing.untouchedScores, ...current.untouchedScores };
  return Object.keys(scores).length === 0 ? {} : { untouchedScores: scores };
}
