/**
 * One prepared environment per suite skill (protocol A.4), shared by `bench check` and `bench
 * run` in one process: prepared on first use, reused for every run of both arms, and — when it
 * cannot be prepared — failed once, with its log, for every later caller. A failed environment
 * is never retried per run; the next invocation tries again (the user may have fixed it).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { registeredSkillFolders } from "../../agents/registry.js";
import { isSkillsmithError, UsageError } from "../../core/errors.js";
import {
  cacheableInstalls,
  findTestTimeInstalls,
  formatSetupLog,
  type InstallCacheRecord,
  type PreparedBase,
  prepareBase,
  type RepositorySource,
  type SandboxV1,
  SetupFailedError,
  type SetupNetworkChoice,
  type TestTimeInstall,
  withPreparedRuntime,
} from "../../env/index.js";
import { everyRequirement } from "../suite/inspect.js";
import type { SuiteRequirement, SuiteSkill } from "../suite/types.js";
import { prepareTaskBase, taskSandbox } from "./task-environment.js";

export type EnvironmentOutcome =
  | {
      readonly ok: true;
      readonly skill: string;
      readonly base: PreparedBase;
      /** The sandbox every agent and verifier run of this skill uses: the environment inside. */
      readonly sandbox: SandboxV1;
      readonly durationMs: number;
    }
  | {
      readonly ok: false;
      readonly skill: string;
      /** `missing-commit`: the pinned commit is not in the repository; else preparation failed. */
      readonly kind: "environment-failure" | "missing-commit";
      readonly reason: string;
      /** Every setup step with its output, when setup ran; the error otherwise. */
      readonly log: string;
      readonly durationMs: number;
    };

/** What the run manifest records of a skill's environment. */
export interface EnvironmentRecord {
  readonly skill: string;
  readonly status: "ready" | "failed";
  readonly reason?: string;
  /** The base's cache key: (repository, commit, setup, toolchain, network choice). */
  readonly key?: string;
  readonly reused?: boolean;
  readonly commit?: string;
  readonly network?: string;
  readonly networkReason?: string;
  /** The chosen setup commands, in order, with what became of each. */
  readonly steps?: readonly { command: string; why: string; outcome: string }[];
  /** Image backends: the image built for this environment, and the image it was built on. */
  readonly image?: string;
  readonly baseImage?: string;
  /** Image backends: what preparing it noted (mapped base images, task.toml fields ignored). */
  readonly notes?: readonly string[];
  /** The caches serving the verifiers' test-time installs, and how each install is served. */
  readonly caches?: readonly InstallCacheRecord[];
  readonly durationMs: number;
  /** The setup log (failures only; a prepared base keeps its own `setup.log`). */
  readonly log?: string;
}

export interface SkillEnvironmentOptions {
  readonly sandbox: SandboxV1;
  readonly cacheDir: string;
  readonly setupNetwork?: SetupNetworkChoice;
  readonly pythonInterpreter?: string;
  /** `FROM` image → local image, for environment-only tasks' Dockerfiles (`--base-image`). */
  readonly baseImages?: Readonly<Record<string, string>>;
  readonly onLog?: (line: string) => void;
}

/** Where a suite skill's repository comes from, as `prepareBase` takes it. */
export function repositorySource(skill: SuiteSkill): RepositorySource {
  const source = skill.repository?.source;
  if (source === undefined)
    throw new UsageError("bench.no-repository", `skill ${skill.id} has no repository`);
  switch (source.kind) {
    case "url":
      return { kind: "git-url", url: source.url };
    case "path":
      return { kind: "local-path", path: source.path };
    case "bundle":
      return { kind: "bundle", path: source.path };
  }
}

/** Whether the skill's verifiers run Python, so `python` must be the prepared interpreter. */
export function verifiersNeedPython(requirements: readonly SuiteRequirement[]): boolean {
  return requirements.some((requirement) =>
    /(^|[\s;&|(/])(python3?|pytest)\b/.test(requirement.verifier.command),
  );
}

/**
 * The installs the skill's verifiers (and their helpers) run at test time that a cache of the
 * environment can serve: setup fills the caches with what they install.
 */
export async function skillTestTimeInstalls(
  requirements: readonly SuiteRequirement[],
): Promise<TestTimeInstall[]> {
  const installs: TestTimeInstall[] = [];
  for (const requirement of requirements) {
    const files = [];
    for (const file of requirement.verifier.files.filter((name) => name.endsWith(".py"))) {
      files.push({
        path: file,
        content: await readFile(join(requirement.verifier.folder, file), "utf8"),
      });
    }
    installs.push(...cacheableInstalls(findTestTimeInstalls(files)));
  }
  return installs;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The environment of each skill, prepared once per process (failures included). */
export function skillEnvironments(
  options: SkillEnvironmentOptions,
): (skill: SuiteSkill) => Promise<EnvironmentOutcome> {
  const outcomes = new Map<string, Promise<EnvironmentOutcome>>();
  return (skill) => {
    let outcome = outcomes.get(skill.id);
    if (outcome === undefined) {
      outcome = prepareSkill(skill, options);
      outcomes.set(skill.id, outcome);
    }
    return outcome;
  };
}

/**
 * A skill's prepared base and the sandbox its agent and verifier runs use: the repository at the
 * pinned commit with its environment (its interpreter first on PATH), or an environment-only
 * task's image under its limits. The one way every caller — the runner's gate, the queue worker,
 * synthesis — prepares a skill; throws when preparation fails.
 */
export async function prepareSkillBase(
  skill: SuiteSkill,
  options: SkillEnvironmentOptions,
): Promise<{ readonly base: PreparedBase; readonly sandbox: SandboxV1 }> {
  const repository = skill.repository;
  const log = (line: string) => options.onLog?.(`${skill.id}: ${line}`);
  if (repository === undefined) {
    // Environment-only tasks (Harbor): the task's image and its working directory.
    const base = await prepareTaskBase({
      skill,
      sandbox: options.sandbox,
      cacheDir: options.cacheDir,
      ...(options.baseImages === undefined ? {} : { baseImages: options.baseImages }),
    });
    return { base, sandbox: environmentSandbox(options.sandbox, base, skill) };
  }
  // For every requirement, not only the selected ones: one base serves every selection.
  const requirements = await everyRequirement(skill);
  const base = await prepareBase({
    source: repositorySource(skill),
    commit: repository.commit,
    setup: repository.setupChoice,
    sandbox: options.sandbox,
    cacheDir: options.cacheDir,
    workspaceMountPath: repository.mountPath,
    verifierNeedsPython: verifiersNeedPython(requirements),
    testTimeInstalls: await skillTestTimeInstalls(requirements),
    skillFolders: registeredSkillFolders(),
    ...(options.setupNetwork === undefined ? {} : { setupNetwork: options.setupNetwork }),
    ...(options.pythonInterpreter === undefined
      ? {}
      : { pythonInterpreter: options.pythonInterpreter }),
    onLog: log,
  });
  return { base, sandbox: environmentSandbox(options.sandbox, base, skill) };
}

/** The sandbox a skill's runs use, over `sandbox`: inside its prepared environment. */
export function environmentSandbox(
  sandbox: SandboxV1,
  base: PreparedBase,
  skill: SuiteSkill,
): SandboxV1 {
  return skill.repository === undefined
    ? taskSandbox(sandbox, base, skill)
    : withPreparedRuntime(sandbox, base.runtime);
}

async function prepareSkill(
  skill: SuiteSkill,
  options: SkillEnvironmentOptions,
): Promise<EnvironmentOutcome> {
  const started = performance.now();
  const log = (line: string) => options.onLog?.(`${skill.id}: ${line}`);
  try {
    const { base, sandbox } = await prepareSkillBase(skill, options);
    const durationMs = performance.now() - started;
    log(
      skill.repository === undefined
        ? `task environment ready (${base.environment?.image ?? base.key})`
        : base.reused
          ? `environment reused (${base.key}, prepared ${base.setupReport?.network ?? "without setup"} at ${base.preparedAt})`
          : `environment prepared in ${(durationMs / 1000).toFixed(1)} s (${base.key})`,
    );
    return { ok: true, skill: skill.id, base, sandbox, durationMs };
  } catch (error) {
    // A mistake in how skillsmith was called is not this skill's environment.
    if (isSkillsmithError(error) && error.family === "usage") throw error;
    const missingCommit = isSkillsmithError(error) && error.code === "env.unknown-commit";
    const reason = missingCommit
      ? `missing commit: ${messageOf(error)}`
      : `environment failure: ${messageOf(error).split("\n")[0]}`;
    log(`${missingCommit ? "skipped" : "environment failed"}: ${reason}`);
    return {
      ok: false,
      skill: skill.id,
      kind: missingCommit ? "missing-commit" : "environment-failure",
      reason,
      log: error instanceof SetupFailedError ? formatSetupLog(error.report) : messageOf(error),
      durationMs: performance.now() - started,
    };
  }
}

/** The manifest's record of an environment outcome. */
export function environmentRecord(outcome: EnvironmentOutcome): EnvironmentRecord {
  if (!outcome.ok) {
    return {
      skill: outcome.skill,
      status: "failed",
      reason: outcome.reason,
      durationMs: Math.round(outcome.durationMs),
      log: outcome.log.slice(-16_000),
    };
  }
  const { base } = outcome;
  return {
    skill: outcome.skill,
    status: "ready",
    key: base.key,
    reused: base.reused,
    commit: base.commit,
    ...(base.setupReport === undefined
      ? {}
      : { network: base.setupReport.network, networkReason: base.setupReport.networkReason }),
    steps:
      base.setupReport?.target === "image"
        ? // Image backends run the steps while building the image: the image is their outcome.
          (base.setup?.steps ?? []).map((step) => ({
            command: step.command,
            why: step.why,
            outcome: `in image ${base.environment?.image ?? "?"}`,
          }))
        : (base.setupReport?.steps ?? []).map((step) => ({
            command: step.command,
            why: step.why,
            outcome:
              step.fallback === undefined
                ? step.outcome
                : `${step.outcome}: ${step.fallback.command}`,
          })),
    ...(base.setup?.caches === undefined ? {} : { caches: base.setup.caches }),
    ...(base.environment === undefined
      ? {}
      : {
          image: base.environment.image,
          baseImage: base.environment.baseImage,
          ...(base.environment.notes.length === 0 ? {} : { notes: base.environment.notes }),
        }),
    durationMs: Math.round(outcome.durationMs),
  };
}
