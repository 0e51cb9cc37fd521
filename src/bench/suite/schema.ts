import { z } from "zod";
import { BUILTIN_HARNESS_NAMES, type BuiltinHarnessName } from "../../agents/registry.js";
import { formatTag } from "../../core/format-tag.js";

/**
 * Zod schemas of every YAML file of a suite folder. Objects are strict: an unknown field is a
 * problem (most often a typo that would otherwise be silently ignored). See `README.md`.
 */

export const SUITE_FORMAT = formatTag("suite", 1);

/** Ids name folders and appear in results; keep them portable and shell-safe. */
export const idSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/,
    "expected an id of letters, digits, '.', '_' or '-' (starting with a letter or digit, at most 128 characters)",
  );

/** A relative path inside the suite: no absolute paths, no `..` escaping the folder. */
const relativePathSchema = z
  .string()
  .min(1)
  .refine((path) => !path.startsWith("/") && !path.split(/[\\/]/).includes(".."), {
    message: "expected a relative path inside the suite (no leading '/', no '..')",
  });

const positiveInteger = z.number().int().positive();
const positiveNumber = z.number().positive();

/** The built-in agent harnesses; a suite may also name one registered with `registerHarness`. */
export const AGENT_KINDS = BUILTIN_HARNESS_NAMES;
/** A harness name: a built-in one or one registered with `registerHarness`. */
export type AgentKind = BuiltinHarnessName | (string & {});

export const configurationLimitsSchema = z.strictObject({
  /** Wall-clock limit of one agent run. */
  timeoutSeconds: positiveNumber,
  memoryMb: positiveInteger.optional(),
  cpus: positiveNumber.optional(),
  /** Tasks (processes and threads) of the agent's process tree at once; 512 when absent. */
  processes: positiveInteger.optional(),
  maxTurns: positiveInteger.optional(),
});

export const configurationSchema = z.strictObject({
  id: idSchema,
  /**
   * The harness: a built-in one or one registered with `registerHarness`. Only the shape is
   * checked here (manifests and queue jobs are read by processes that may not have registered
   * it); `validateSuite` checks that the name is registered.
   */
  agent: idSchema,
  /** A model spec string (e.g. `anthropic:claude-sonnet-4-5`); the agent's default when absent. */
  model: z.string().min(1).optional(),
  limits: configurationLimitsSchema,
  /**
   * Where this configuration's model is served, when it is not where the harness's own
   * variables point (two configurations of one harness on two providers, as a study needs).
   * The URL is not secret; the key stays in the environment, named by `apiKeyVariable`.
   */
  endpoint: z
    .strictObject({
      baseUrl: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }).optional(),
      apiKeyVariable: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name")
        .optional(),
    })
    .optional(),
});

/**
 * The study protocol a suite follows (e.g. SWE-Skills-Bench's): defaults of `bench run` and
 * `bench report` that a command-line option still overrides, recorded so a run can be repeated.
 */
export const protocolSchema = z.strictObject({
  /** Where the settings come from, e.g. "SWE-Skills-Bench (arXiv 2603.15401)". */
  source: z.string().min(1).optional(),
  /** Runs per arm of each requirement (`--repeats`). */
  repeats: positiveInteger.optional(),
  /** Attempts of a run lost to infrastructure before it stays unmeasured (`--max-attempts`). */
  maxAttempts: positiveInteger.optional(),
  /** Significance level of the classification. */
  alpha: z.number().gt(0).lt(1).optional(),
  /** Requirements per skill the protocol writes; a class from far fewer is labelled so. */
  requirementsPerSkill: positiveInteger.optional(),
  /** A run killed by its time limit scores zero and is flagged: the only policy there is. */
  timeouts: z.literal("score-zero").optional(),
});

export const suiteFileSchema = z.strictObject({
  format: z.literal(SUITE_FORMAT, { error: `expected format: "${SUITE_FORMAT}"` }),
  name: z.string().min(1),
  description: z.string().optional(),
  configurations: z.array(configurationSchema).min(1, "expected at least one configuration"),
  /** Skill folders to include, in order; every folder under `skills/` when absent. */
  skills: z.array(idSchema).optional(),
  protocol: protocolSchema.optional(),
});

export const repositorySchema = z
  .strictObject({
    /** A git URL (`https://`, `ssh://`, `git@…`, or `file://`). */
    url: z.string().min(1).optional(),
    /** A local git repository, relative to this `skill.yaml` or absolute. */
    path: z.string().min(1).optional(),
    /** A git bundle file, relative to this `skill.yaml` or absolute. */
    bundle: z.string().min(1).optional(),
    commit: z
      .string({
        // YAML reads an unquoted commit of digits only (`1234567`, `1e10000`) as a number.
        error: (issue) =>
          typeof issue.input === "number"
            ? 'expected a commit hash; YAML read this one as a number, so quote it (commit: "1234567")'
            : undefined,
      })
      .regex(/^[0-9a-f]{7,40}$/, "expected a commit hash (7 to 40 lowercase hex digits)"),
    /** Folder name of the repository, used for the default mount path. */
    name: idSchema.optional(),
    /**
     * `none`: nothing is installed; `detect` (or absent): detected from the manifests; a list:
     * exactly these commands (an empty list installs nothing).
     */
    setup: z
      .union([z.literal("none"), z.literal("detect"), z.array(z.string().min(1))], {
        error: 'expected "none", "detect" or a list of shell commands',
      })
      .optional(),
    mountPath: z.string().startsWith("/", "expected an absolute path").optional(),
  })
  .superRefine((repository, context) => {
    const sources = [repository.url, repository.path, repository.bundle].filter(
      (source) => source !== undefined,
    );
    if (sources.length !== 1) {
      context.addIssue({
        code: "custom",
        message: `expected exactly one of url, path or bundle (found ${sources.length})`,
      });
    }
  });

export const environmentLimitsSchema = z.strictObject({
  cpus: positiveNumber.optional(),
  memoryMb: positiveInteger.optional(),
  /** Tasks (processes and threads) of each verifier's process tree at once; 512 when absent. */
  processes: positiveInteger.optional(),
  /** Limit on each command run inside the environment (setup, verifier). */
  commandTimeoutSeconds: positiveNumber.optional(),
});

export const environmentSchema = z.strictObject({
  /** A container image to start from. */
  image: z.string().min(1).optional(),
  /** A Dockerfile relative to the skill folder; its folder is the build context. */
  dockerfile: relativePathSchema.optional(),
  /** Working directory of the agent when there is no repository (Harbor tasks: the WORKDIR). */
  workdir: z.string().startsWith("/", "expected an absolute path").optional(),
  allowInternet: z.boolean().optional(),
  /** Limit on building the environment's image (Harbor `build_timeout_sec`); 600 s by default. */
  buildTimeoutSeconds: positiveNumber.optional(),
  limits: environmentLimitsSchema.optional(),
  /**
   * Container tasks: the user the agent (and a reference solution script) runs as (Harbor
   * `[agent] user`); the image's `USER` when absent.
   */
  agentUser: z.string().min(1).optional(),
});

export const agentLimitsSchema = z.strictObject({
  /** Per-skill cap on one agent run; the effective limit is the smaller of this and the configuration's. */
  timeoutSeconds: positiveNumber.optional(),
  /** How many times the source benchmark invoked the agent (SWE-Skills-Bench `max_iterations`); not turns. */
  maxIterations: positiveInteger.optional(),
});

export const skillFileSchema = z
  .strictObject({
    /** Agent Skills folders, relative to this skill's folder; every folder under `agent-skills/` when absent. */
    skills: z.array(relativePathSchema).optional(),
    /** Further versions of the skill (name → Agent Skills folders), each run as its own arm. */
    variants: z
      .record(
        z
          .string()
          .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "expected a variant name")
          .refine(
            (name) => !["with", "without", "none", "skill"].includes(name),
            "with, without, none and skill name the fixed arms",
          ),
        z.array(relativePathSchema).min(1),
      )
      .optional(),
    /**
     * Distractor skills (Agent Skills folders, relative to this skill's folder) installed in every
     * arm, the unassisted one included: the skill under test must still be found among them.
     */
    distractors: z.array(relativePathSchema).optional(),
    repository: repositorySchema.optional(),
    environment: environmentSchema.optional(),
    agentLimits: agentLimitsSchema.optional(),
    /** Where the skill came from (importer, original ids and paths); free-form, kept as is. */
    source: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((skill, context) => {
    if (
      skill.repository === undefined &&
      skill.environment?.dockerfile === undefined &&
      skill.environment?.image === undefined
    ) {
      context.addIssue({
        code: "custom",
        message:
          "expected a repository (url, path or bundle with a commit) or an environment with an image or a dockerfile",
      });
    }
  });

export const verifierFileSchema = z.strictObject({
  /** Shell command (run with `/bin/sh -c`) in `cwd`, after the agent has finished. */
  command: z.string().min(1),
  /** Files the verifier needs, relative to the requirement's `verifier/` folder; each must exist. */
  files: z.array(relativePathSchema).min(1, "expected at least one verifier file"),
  /** Where the `verifier/` folder is placed in the environment (outside the repository). */
  mountPath: z.string().startsWith("/", "expected an absolute path").optional(),
  /** Where the command runs; `mountPath` when absent. */
  cwd: z.string().startsWith("/", "expected an absolute path").optional(),
  timeoutSeconds: positiveNumber.optional(),
  /** JUnit XML report the command writes, relative to `cwd` or absolute. */
  junit: z.string().min(1).optional(),
  /** Harbor-style reward file (`0`..`1`), read when the command reports no checks. */
  rewardFile: z.string().startsWith("/", "expected an absolute path").optional(),
  /**
   * `reward`: the reward file is the outcome (Harbor's contract: reward.json, else reward.txt,
   * per-test detail from ctrf.json beside it) and a missing one is flagged `reward-missing`.
   * `checks` (default, except for Harbor imports): per-test results, the reward file only when
   * there are none.
   */
  scoring: z.enum(["checks", "reward"]).optional(),
  /** Container tasks: the user the command runs as (Harbor `[verifier] user`); the image's `USER` when absent. */
  user: z.string().min(1).optional(),
  source: z.record(z.string(), z.unknown()).optional(),
});

export type SuiteFile = z.output<typeof suiteFileSchema>;
export type Configuration = z.output<typeof configurationSchema>;
export type SuiteProtocol = z.output<typeof protocolSchema>;
export type ConfigurationLimits = z.output<typeof configurationLimitsSchema>;
export type SkillFile = z.output<typeof skillFileSchema>;
export type RepositorySpec = z.output<typeof repositorySchema>;
export type EnvironmentSpec = z.output<typeof environmentSchema>;
export type AgentLimits = z.output<typeof agentLimitsSchema>;
export type VerifierFile = z.output<typeof verifierFileSchema>;
