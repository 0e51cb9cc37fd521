/**
 * Executing one run: `executeRun` is one attempt (fresh workspace → agent → verifier → result),
 * `executeWithRetries` repeats it while attempts fail for infrastructure reasons, up to a bound.
 * The in-process runner and the queue worker both call `executeWithRetries`, so a run is executed
 * one way wherever it runs.
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AgentHarnessV1,
  type AgentLimits,
  currentTrajectory,
  harnessFacts,
  type InstalledSkills,
  installSkillsFor,
  isSkillActivated,
  pricedUsage,
  type Trajectory,
} from "../../agents/index.js";
import { InfrastructureError, isSkillsmithError } from "../../core/errors.js";
import { isAborted } from "../../core/limit.js";
import {
  diagnoseCollectionError,
  flagForLimit,
  freshWorkspaceDigest,
  materialiseVerified,
  type PreparedBase,
  type SandboxV1,
  type Workspace,
} from "../../env/index.js";
import {
  type ModelPrice,
  providerNames,
  redactSecrets,
  secretsFromEnvironment,
} from "../../model/index.js";
import {
  type AttemptRecord,
  capVerifierOutput,
  formatRunKey,
  type RunKey,
  type RunPatch,
  type RunResult,
} from "../store/results.js";
import { installedSkillName } from "../suite/distractors.js";
import type { Configuration } from "../suite/schema.js";
import type { SuiteSkill } from "../suite/types.js";
import { environmentSandbox } from "./environments.js";
import { endpointFor, type ModelEndpointOption, modelFor, modelSpecOf } from "./model-endpoint.js";
import type { RunFailure } from "./options.js";
import { captureWorkspacePatch } from "./patch.js";
import type { PlannedRun } from "./plan.js";
import { armOwnFolders, installedFolders } from "./reuse.js";
import {
  requirementVerifierTarget,
  runSuiteVerifier,
  suiteVerifierInventory,
  untouchedWorkspace,
} from "./verifier.js";

/** A failure that costs an attempt and is retried: never scored. */
export class InfraFailure extends InfrastructureError {
  constructor(
    message: string,
    readonly costUsd = 0,
  ) {
    super("bench.run-attempt-failed", message, { retryable: true, data: { costUsd } });
  }
}
function isUserMistake(error: unknown): boolean {
  return isSkillsmithError(error) && (error.family === "usage" || error.family === "input");
}

/** A run's usage with its cost, when the model's provider and price are known. */
function priced(
  usage: Trajectory["usage"],
  configuration: Configuration,
  prices: ExecutionContext["prices"],
): Trajectory["usage"] {
  const spec = modelSpecOf(configuration);
  const provider = harnessFacts(configuration.agent).pricingProvider;
  const named = spec.slice(0, Math.max(0, spec.indexOf(":")));
  if (provider === undefined && !(providerNames as readonly string[]).includes(named)) return usage;
  return pricedUsage(usage, spec, provider ?? "openai", prices);
}

/** An error's message, or the thrown value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * What one run needs besides its key: shared by the in-process runner and the queue worker,
 * so both execute a run the same way.
 */
export interface ExecutionContext {
  readonly sandbox: SandboxV1;
  readonly baseFor: (skill: SuiteSkill) => Promise<PreparedBase>;
  readonly harnessOf: (configuration: Configuration) => AgentHarnessV1;
  readonly modelEndpoint?: ModelEndpointOption;
  /** Extra environment for agent processes. */
  readonly agentEnv?: Readonly<Record<string, string>>;
  readonly prices?: Readonly<Record<string, ModelPrice>>;
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
  const { skill, requirement } = run;
  const { signal } = context;
  const started = performance.now();
  const base = await context.baseFor(skill);
  // Agent and verifier run in the skill's prepared environment (its folder read-only, its
  // interpreter first on PATH); an environment-only task's in the task's image, under its limits.
  const sandbox = environmentSandbox(context.sandbox, base, skill);
  // The base is walked once per process, not per run (src/env/workspace/identity.ts).
  const workspace = await materialiseVerified(base);
  const scratch = await mkdtemp(join(tmpdir(), "skillsmith-run-"));
  try {
    const workspaceDigest = await freshWorkspaceDigest(workspace);
    const verifierTarget = requirementVerifierTarget({
      sandbox,
      skill,
      requirement,
      base,
      workspaceMountPath: workspace.mountPath,
      ...(signal === undefined ? {} : { signal }),
    });
    // The verifier's test ids, fixed before the agent runs, in an untouched copy of the base
    // (taken once per verifier and environment, kept beside the environments).
    const inventory = await suiteVerifierInventory({
      ...verifierTarget,
      untouched: untouchedWorkspace(base, workspaceDigest),
    }).catch((error: unknown) => {
      if (isUserMistake(error)) throw error;
      throw new InfraFailure(`verifier inventory could not be taken: ${messageOf(error)}`);
    });
    const agent = await runAgent(run, context, { sandbox, workspace });
    if (agent === undefined) return undefined;
    const { trajectory } = agent;
    const requiredFiles = await deliveredFiles(requirement.fileOperations, workspace.path);
    // The agent's final change, before the verifier touches the workspace (`bench regrade`).
    const secrets = secretsFromEnvironment(process.env);
    const apiKey = endpointFor(run.configuration, context)?.apiKey;
    if (apiKey !== undefined) secrets.push(apiKey);
    const patch = await capturedPatch(base, workspace, secrets);
    const verifierStarted = performance.now();
    let verification: Verification | undefined;
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
    const result = resultOf(run, {
      trajectory,
      verification,
      secrets,
      workspaceMountPath: workspace.mountPath,
      timing: {
        agentMs: agent.agentMs,
        verifierMs: verification === undefined ? 0 : performance.now() - verifierStarted,
        totalMs: performance.now() - started,
        startedAt,
        attempt,
      },
      workspaceDigest,
      requiredFiles,
      patch,
    });
    if (isAborted(signal)) return undefined;
    return result;
  } finally {
    await workspace.dispose().catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
}

type Verification = Awaited<ReturnType<typeof runSuiteVerifier>>;

/**
 * The agent's run in the fresh workspace, its tokens priced; undefined when aborted. Throws an
 * `InfraFailure` for a harness that throws or a run lost to infrastructure.
 */
async function runAgent(
  run: PlannedRun,
  context: ExecutionContext,
  target: { readonly sandbox: SandboxV1; readonly workspace: Workspace },
): Promise<{ readonly trajectory: Trajectory; readonly agentMs: number } | undefined> {
  const { key, configuration, skill, requirement } = run;
  const { signal } = context;
  const timeoutSeconds = Math.min(
    configuration.limits.timeoutSeconds,
    skill.agentLimits?.timeoutSeconds ?? Number.POSITIVE_INFINITY,
  );
  // The suite's skill in `with`, a variant's folders in `variant:<name>`, none in `without`.
  const installed = installedFolders(skill, key.arm);
  const skillPath = installed[0];
  const agentStarted = performance.now();
  let trajectory: Trajectory;
  let harnessInstalled: InstalledSkills | undefined;
  try {
    harnessInstalled = await installWhereHarnessReads(
      configuration.agent,
      installed,
      target.workspace.path,
    );
    const returned = await context.harnessOf(configuration).run({
      task: requirement.raw,
      workspace: target.workspace.path,
      workspaceMountPath: target.workspace.mountPath,
      ...(skillPath === undefined ? {} : { skillPath, skillPaths: installed }),
      model: modelFor(configuration, context),
      limits: agentLimitsOf(configuration, timeoutSeconds),
      sandbox: target.sandbox,
      taskId: `${skill.id}/${requirement.id}`,
      arm: key.arm,
      ...(context.agentEnv === undefined ? {} : { env: context.agentEnv }),
      ...(signal === undefined ? {} : { signal }),
    });
    // A harness written for an earlier skillsmith says `version: 1`: stored as the current format.
    trajectory = currentTrajectory(returned);
  } catch (error) {
    // User mistakes abort the whole run; anything else the harness throws costs an attempt.
    if (isUserMistake(error)) throw error;
    throw new InfraFailure(`agent harness failed: ${messageOf(error)}`);
  } finally {
    // Before the agent's change is captured: the installed skill is not the agent's work.
    await harnessInstalled?.uninstall();
  }
  const agentMs = performance.now() - agentStarted;
  if (isAborted(signal)) return undefined;
  // Tokens without a cost (Codex, builtin) are priced here, so the budget counts every agent:
  // at the provider the model spec names, else the one the harness registration names.
  trajectory = {
    ...trajectory,
    usage: priced(trajectory.usage, configuration, context.prices),
    ...(await activationWithoutDistractors(skill, key.arm, trajectory)),
  };
  if (trajectory.status === "infra_error") {
    throw new InfraFailure(
      `agent run lost to infrastructure: ${trajectory.error ?? "no detail"}`,
      trajectory.usage.costUsd ?? 0,
    );
  }
  return { trajectory, agentMs };
}

/**
 * With distractors installed, "the skill was activated" means a skill under test was, not any
 * installed one: the harness's own answer counts the distractors too. Nothing to change without.
 */
async function activationWithoutDistractors(
  skill: SuiteSkill,
  arm: PlannedRun["key"]["arm"],
  trajectory: Trajectory,
): Promise<Pick<Trajectory, "skillActivated"> | undefined> {
  if ((skill.distractors ?? []).length === 0) return undefined;
  const names = await Promise.all(armOwnFolders(skill, arm).map(installedSkillName));
  return {
    skillActivated: names.some((name) => isSkillActivated(trajectory.events, name)),
  };
}

/**
 * The arm's skill folders installed into the first folder the harness's registration says it
 * reads skills from (`skillFolders`), so a harness registered by a program finds them where it
 * looks; undefined when the arm has none or the registration names no folder. A harness that
 * installs `skillPaths` itself into the same folder finds an identical copy there and leaves it.
 */
async function installWhereHarnessReads(
  harness: string,
  skillPaths: readonly string[],
  workspace: string,
): Promise<InstalledSkills | undefined> {
  const folder = harnessFacts(harness).skillFolders?.[0];
  if (folder === undefined || skillPaths.length === 0) return undefined;
  return installSkillsFor({ harness, folder }, skillPaths, workspace);
}

/** The configuration's limits as a harness takes them (the memory in bytes). */
function agentLimitsOf(configuration: Configuration, timeoutSeconds: number): AgentLimits {
  const { maxTurns, memoryMb, cpus, processes } = configuration.limits;
  return {
    timeoutMs: timeoutSeconds * 1000,
    ...(maxTurns === undefined ? {} : { maxTurns }),
    ...(memoryMb === undefined ? {} : { memoryBytes: memoryMb * 1024 * 1024 }),
    ...(cpus === undefined ? {} : { cpus }),
    ...(processes === undefined ? {} : { maxProcesses: processes }),
  };
}

/** Whether each File Operations path exists after the agent (the misplaced-deliverable signature). */
async function deliveredFiles(
  fileOperations: readonly string[],
  workspace: string,
): Promise<Record<string, boolean>> {
  const requiredFiles: Record<string, boolean> = {};
  for (const path of fileOperations) {
    const normalised = path.replace(/^\.?\//, "");
    // A path the agent left unreadable (or not there) is not delivered, whatever the error.
    requiredFiles[path] =
      (await stat(join(workspace, normalised)).catch(() => undefined)) !== undefined;
  }
  return requiredFiles;
}

/**
 * The agent's change, redacted. A change that cannot be captured does not stop the run from being
 * scored; the stored patch says why it is empty, so `bench regrade` reports it instead of
 * re-verifying nothing.
 */
function capturedPatch(
  base: PreparedBase,
  workspace: Workspace,
  secrets: readonly string[],
): Promise<RunPatch> {
  return captureWorkspacePatch(base.tree, workspace, (text) => redactSecrets(text, secrets)).catch(
    (error: unknown): RunPatch => ({
      diff: "",
      length: 0,
      files: 0,
      truncated: false,
      redacted: false,
      incomplete: `the change could not be captured: ${redactSecrets(messageOf(error), secrets)}`,
    }),
  );
}

/** The verifier's flags, a collection error the agent caused told apart, with the evidence. */
function judgedVerifierFlags(
  requirement: PlannedRun["requirement"],
  verification: Verification | undefined,
  workspaceMountPath: string,
): { readonly flags: readonly string[]; readonly evidence: readonly string[] } {
  const flags = verification?.flags ?? [];
  if (verification === undefined || !flags.includes("collection-error"))
    return { flags, evidence: [] };
  // A verifier that cannot import what the requirement asks to create measured the agent's
  // failure to deliver (0), not a verifier fault.
  const diagnosis = diagnoseCollectionError({
    output: verification.output,
    fileOperations: requirement.fileOperations,
    requirementText: requirement.raw,
    workspaceMountPath,
  });
  return {
    flags:
      diagnosis.kind === "deliverable-missing"
        ? flags.map((flag) => (flag === "collection-error" ? "deliverable-missing" : flag))
        : flags,
    evidence: [diagnosis.reason],
  };
}

interface RunObservations {
  readonly trajectory: Trajectory;
  readonly verification: Verification | undefined;
  readonly secrets: readonly string[];
  readonly workspaceMountPath: string;
  readonly timing: {
    readonly agentMs: number;
    readonly verifierMs: number;
    readonly totalMs: number;
    readonly startedAt: string;
    readonly attempt: number;
  };
  readonly workspaceDigest: string;
  readonly requiredFiles: Record<string, boolean>;
  readonly patch: RunPatch;
}

/** The stored result of a run from what was observed; secrets redacted, limits score 0. */
function resultOf(run: PlannedRun, observed: RunObservations): RunResult {
  const { trajectory, verification, secrets, timing } = observed;
  // The agent's process tree ran out of memory or processes: the run scores 0 with the flag.
  const agentLimit =
    trajectory.limitHit === undefined ? undefined : flagForLimit(trajectory.limitHit.limit);
  const timedOut = trajectory.status === "timeout";
  const verifierFlags = judgedVerifierFlags(
    run.requirement,
    verification,
    observed.workspaceMountPath,
  );
  return {
    ...run.key,
    status: timedOut
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
        ...verifierFlags.flags,
      ]),
    ],
    // Secrets of this process's environment never reach the store, whatever the harness did.
    trajectory: redactSecrets(trajectory, secrets),
    // Harnesses that show no skills (replay, none, oracle) cannot tell: unknown, not "no".
    skillActivated: trajectory.skillsShownSource === "none" ? null : trajectory.skillActivated,
    workspaceDigest: observed.workspaceDigest,
    requiredFiles: observed.requiredFiles,
    usage: {
      inputTokens: trajectory.usage.inputTokens,
      cachedInputTokens: trajectory.usage.cachedInputTokens,
      outputTokens: trajectory.usage.outputTokens,
      costUsd: trajectory.usage.costUsd ?? 0,
    },
    agentMs: timing.agentMs,
    verifierMs: timing.verifierMs,
    totalMs: timing.totalMs,
    startedAt: timing.startedAt,
    finishedAt: new Date().toISOString(),
    attempts: timing.attempt,
    patch: observed.patch,
    ...(verification === undefined
      ? {}
      : { verifier: storedVerifier(verification, verifierFlags.evidence, secrets) }),
  };
}

/** The verifier's side of a stored result: its output capped, everything redacted. */
function storedVerifier(
  verification: Verification,
  diagnosisEvidence: readonly string[],
  secrets: readonly string[],
): NonNullable<RunResult["verifier"]> {
  const evidence = [...verification.evidence, ...diagnosisEvidence];
  return {
    output: capVerifierOutput(redactSecrets(verification.output, secrets)),
    exitCode: verification.exitCode,
    durationMs: verification.durationMs,
    source: verification.source,
    ...(evidence.length === 0
      ? {}
      : { evidence: evidence.map((line) => redactSecrets(line, secrets)) }),
    ...(verification.canaries === undefined || verification.canaries.length === 0
      ? {}
      : { canaries: verification.canaries }),
  };
}
