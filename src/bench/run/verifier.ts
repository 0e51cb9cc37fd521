/**
 * Runs a suite requirement's verifier on a finished workspace. `env`'s `runVerifier` copies a
 * verifier into the workspace root and runs it there; suite verifiers instead live at their own
 * mount path outside the repository (`/verifier`, `/workspace/tests`), with their own working
 * directory, JUnit file and reward file. This adapter mounts them so, and reuses `env`'s parsers
 * and integrity checks.
 *
 * Integrity (see `src/env/verifier/README.md`): the verifier's inventory (its test ids) is taken
 * once per verifier in an untouched copy of the repository (or an empty folder), before any
 * agent's code runs; a pytest verifier is
 * then scored from skillsmith's channel, with canaries and cross-checks, never from files or
 * output the code under test can write. The verifier's whole folder is read-only inside the
 * sandbox (`readOnlyVerifierFolder`), its JUnit report and reward folder writable.
 *
 * About 400 lines: the inventory, the channel run and the reward run share the layout and memo
 * of this module; the file placement itself is in `verifier-layout.ts`.
 */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix, relative } from "node:path";
import { UsageError } from "../../core/errors.js";
import {
  bytecodeCacheOption,
  type CanaryPlan,
  type CheckResult,
  flagForLimit,
  freshWorkspaceDigest,
  InventoryMemo,
  injectCanaries,
  isCollectionError,
  junitShortfall,
  materialiseVerified,
  type PreparedBase,
  type PytestInventory,
  parseRunnerSummary,
  readJunitReports,
  runAndTakeInventory,
  runWithChannel,
  type SandboxExecResult,
  type SandboxV1,
  type ScoredChannelRun,
  stripAnsi,
  takeInventory,
  type VerifierInventory,
  withLimitHit,
} from "../../env/index.js";
import type { StoredCanary } from "../store/results.js";
import type { SuiteRequirement, SuiteSkill, SuiteVerifier } from "../suite/types.js";
import {
  cachedInventory,
  environmentIdentity,
  type InventoryCacheScope,
  inventoryCacheKey,
  keptInventory,
} from "./inventory-cache.js";
import { readCtrfChecks, readHarborReward } from "./reward.js";
import { rewardAgreement, rewardCeiling, rewardDisagreement } from "./reward-check.js";
import { type Layout, verifierLayout, within } from "./verifier-layout.js";

export interface SuiteVerifierRun {
  readonly checks: readonly CheckResult[];
  readonly passed: number;
  readonly total: number;
  readonly passRatio: number;
  readonly flags: readonly string[];
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
  readonly output: string;
  /** Where the outcomes were read from. */
  readonly source: "channel" | "junit" | "summary" | "reward" | "none";
  /**
   * Why a flag was set, one line each: the sandbox limit that was hit; for `tampered`, which
   * cross-check failed, on which ids.
   */
  readonly evidence: readonly string[];
  /**
   * The integrity canaries appended to the verifier's tests for this run (pytest verifiers served
   * over the channel); the output names them among the real tests. Known here only after the
   * agent's turn is over: they are planned when the verifier runs.
   */
  readonly canaries?: readonly StoredCanary[];
}

/** An untouched copy of the repository at the base commit, for the inventory. */
export interface UntouchedWorkspace {
  /** Identifies the tree (its `treeDigest`): part of the inventory's memo key. */
  readonly digest: string;
  /**
   * A fresh workspace of that tree, disposed after the inventory (`upperLayer`: an overlay's
   * upper layer on the host, where every write lands).
   */
  materialise(): Promise<{
    readonly path: string;
    readonly upperLayer?: string;
    dispose(): Promise<unknown>;
  }>;
  /** Where inventories taken in it are kept across processes (`inventory-cache.ts`). */
  readonly cache?: InventoryCacheScope;
}

/**
 * The untouched copy of `base` a run's or a check's inventory is taken in, its inventories kept
 * beside the prepared environments. `digest` is a fresh workspace's (`freshWorkspaceDigest`).
 */
export function untouchedWorkspace(base: PreparedBase, digest: string): UntouchedWorkspace {
  return {
    digest,
    materialise: () => materialiseVerified(base),
    cache: { folder: join(base.cacheDir, "inventories"), environment: environmentIdentity(base) },
  };
}

export interface SuiteVerifierTarget {
  readonly sandbox: SandboxV1;
  readonly verifier: SuiteVerifier;
  readonly workspaceMountPath: string;
  /**
   * Take the inventory in an untouched copy of the repository rather than an empty folder, so a
   * verifier module that imports the repository's existing code is collected exactly instead of
   * read from its source. Either way no agent's code is in it.
   */
  readonly untouched?: UntouchedWorkspace;
  readonly image?: string;
  /** Container backends: who the verifier runs as (`verifier.user`, else the image's `USER`). */
  readonly user?: string;
  readonly memoryBytes?: number;
  readonly maxProcesses?: number;
  readonly cpus?: number;
  readonly signal?: AbortSignal;
}

export interface RunSuiteVerifierOptions extends SuiteVerifierTarget {
  /** Host folder of the finished workspace. */
  readonly workspace: string;
  /** A private host folder for this run's verifier copy and reports. */
  readonly scratch: string;
  /** The verifier's inventory, taken before the agent ran (`suiteVerifierInventory`). */
  readonly inventory?: VerifierInventory;
}

/** What places a requirement's verifier in its skill's prepared environment. */
export interface RequirementVerifierInput {
  /** The skill's environment sandbox (`environmentSandbox`). */
  readonly sandbox: SandboxV1;
  readonly skill: Pick<SuiteSkill, "environment">;
  readonly requirement: Pick<SuiteRequirement, "verifier">;
  readonly base: Pick<PreparedBase, "environment">;
  readonly signal?: AbortSignal;
}

/**
 * The target of a requirement's verifier in its skill's prepared environment: the environment's
 * command timeout when the verifier names none, the environment's image and its limits. The
 * runner, `bench check` and synthesis scoring all build it here, so a verifier runs under the same
 * limits wherever it runs.
 */
export function requirementVerifierTarget(
  input: RequirementVerifierInput & { readonly workspaceMountPath: string },
): SuiteVerifierTarget {
  const { requirement, base, signal } = input;
  const limits = input.skill.environment?.limits;
  return {
    sandbox: input.sandbox,
    verifier: {
      ...requirement.verifier,
      ...(requirement.verifier.timeoutSeconds === undefined &&
      limits?.commandTimeoutSeconds !== undefined
        ? { timeoutSeconds: limits.commandTimeoutSeconds }
        : {}),
    },
    workspaceMountPath: input.workspaceMountPath,
    ...(base.environment === undefined ? {} : { image: base.environment.image }),
    // The task's `[verifier] user`, else (empty) the image's `USER`, never the agent's user.
    ...(base.environment === undefined ? {} : { user: requirement.verifier.user ?? "" }),
    ...(limits?.memoryMb === undefined ? {} : { memoryBytes: limits.memoryMb * 1024 * 1024 }),
    ...(limits?.processes === undefined ? {} : { maxProcesses: limits.processes }),
    ...(limits?.cpus === undefined ? {} : { cpus: limits.cpus }),
    ...(signal === undefined ? {} : { signal }),
  };
}

/** A candidate solution verified, or why it could not be put in place. */
export type CandidateVerification =
  | { readonly kind: "verified"; readonly run: SuiteVerifierRun }
  | { readonly kind: "not-in-place"; readonly problem: string };

type CandidateInput = RequirementVerifierInput & { readonly base: PreparedBase };

/**
 * Run a requirement's verifier on a fresh workspace of `base` once `putInPlace` has written a
 * candidate into it (a reference solution, a synthesised diff); `putInPlace` answers why it could
 * not, or undefined. Workspace and scratch folder are removed whatever happens.
 *
 * `untouched`: the candidate is the untouched repository itself (`bench check`'s first run;
 * `putInPlace` is not called). When the verifier's inventory is not taken yet, this run takes it
 * from its own pytest session (`runAndTakeInventory`) instead of a collection of its own; if that
 * session cannot give one, the inventory is taken and the run made as for any candidate, in a
 * fresh workspace.
 */
export async function verifyCandidate(
  input: CandidateInput & {
    readonly putInPlace: (workspace: string) => Promise<string | undefined>;
    readonly untouched?: boolean;
  },
): Promise<CandidateVerification> {
  if (input.untouched === true) {
    const verified = await onFreshWorkspace(input, async (options) => {
      const listed = await untouchedRunWithInventory(options);
      if (listed.kind === "scored") return { kind: "verified" as const, run: listed.run };
      // Nothing ran in this workspace yet: the usual run can have it.
      if (listed.kind === "known") {
        return { kind: "verified" as const, run: await runSuiteVerifier(options) };
      }
      return undefined;
    });
    if (verified !== undefined) return verified;
  }
  return onFreshWorkspace(input, async (options) => {
    const problem =
      input.untouched === true ? undefined : await input.putInPlace(options.workspace);
    if (problem !== undefined) return { kind: "not-in-place", problem };
    return { kind: "verified", run: await runSuiteVerifier(options) };
  });
}

/** `body` with a fresh workspace of `input.base` and a scratch folder, both removed after. */
async function onFreshWorkspace<T>(
  input: CandidateInput,
  body: (options: RunSuiteVerifierOptions) => Promise<T>,
): Promise<T> {
  const workspace = await materialiseVerified(input.base);
  const scratch = await mkdtemp(join(tmpdir(), "skillsmith-verify-"));
  try {
    // The inventory a run of this requirement takes (same untouched tree, same key), so a check
    // before the runs has already taken theirs.
    const untouched = untouchedWorkspace(input.base, await freshWorkspaceDigest(workspace));
    return await body({
      ...requirementVerifierTarget({ ...input, workspaceMountPath: workspace.mountPath }),
      workspace: workspace.path,
      scratch,
      untouched,
    });
  } finally {
    await workspace.dispose().catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
}

/** What `untouchedRunWithInventory` did. */
export type UntouchedRun =
  /** The run, scored against the inventory its own session gave. */
  | { readonly kind: "scored"; readonly run: SuiteVerifierRun }
  /** Nothing ran: the inventory is known already, or the verifier is reward-scored. */
  | { readonly kind: "known" }
  /** The session ran but gave no run to score; its workspace is no longer untouched. */
  | { readonly kind: "spent" };

/**
 * The untouched repository's run with its inventory taken from the same session, kept as any
 * inventory is (this process's memo; on disk when it is a pytest one). When the session gives no
 * run to score, the caller runs it the usual way in a fresh workspace (an opaque inventory is kept
 * for that run). `options.workspace` must be an untouched workspace of `options.untouched`:
 * nothing checks it.
 */
export async function untouchedRunWithInventory(
  options: RunSuiteVerifierOptions,
): Promise<UntouchedRun> {
  if (options.verifier.scoring === "reward") return { kind: "known" };
  const key = await inventoryKey(options);
  if (inventories.has(key)) return { kind: "known" };
  const scope = options.untouched?.cache;
  const cacheKey = scope === undefined ? undefined : await inventoryCacheKey(scope, key);
  if (scope !== undefined && cacheKey !== undefined) {
    if ((await keptInventory(scope, cacheKey)) !== undefined) return { kind: "known" };
  }
  const place = await verifierLayout(options, options.workspace, options.scratch);
  const listed = await runAndTakeInventory({
    ...(await channelOptions(place, options)),
    verifierFile: (path) => place.verifierFile(path),
  });
  if (listed.kind === "unusable") return { kind: "spent" };
  const { inventory } = listed;
  await inventories.get(key, async () =>
    scope === undefined || cacheKey === undefined
      ? inventory
      : cachedInventory(scope, cacheKey, async () => inventory),
  );
  if (listed.kind === "opaque") return { kind: "spent" };
  return { kind: "scored", run: channelVerifierRun(listed.run, undefined) };
}

export { defaultTimeoutMs } from "./verifier-layout.js";

/** Inventories of this process by `inventoryKey` (`inventory-batch.ts` fills it ahead of the runs). */
export const inventories = new InventoryMemo();

export async function inventoryKey(target: SuiteVerifierTarget): Promise<string> {
  const { verifier } = target;
  const hash = createHash("sha256");
  hash.update(
    JSON.stringify([
      target.sandbox.kind,
      target.image ?? "",
      target.untouched?.digest ?? "empty workspace",
      target.untouched?.cache?.environment ?? "",
      target.workspaceMountPath,
      verifier.command,
      verifier.mountPath,
      verifier.cwd,
      verifier.junit ?? "",
      verifier.rewardFile ?? "",
    ]),
  );
  for (const file of [...verifier.files].sort()) {
    const path = join(verifier.folder, file);
    hash.update(`\0${file}\0`);
    if ((await stat(path)).isFile()) hash.update(await readFile(path));
    else {
      for (const entry of (await readdir(path, { recursive: true, withFileTypes: true })).sort(
        (left, right) =>
          join(left.parentPath, left.name).localeCompare(join(right.parentPath, right.name)),
      )) {
        if (!entry.isFile()) continue;
        const inner = join(entry.parentPath, entry.name);
        hash.update(`\0${relative(path, inner)}\0`);
        hash.update(await readFile(inner));
      }
    }
  }
  return hash.digest("hex");
}

/**
 * A suite verifier's inventory: its command run in `inventory` mode with an empty workspace, or
 * an untouched copy of the repository (`target.untouched`), so no agent's code decides it. Taken
 * once per verifier (content, tree, sandbox, image) in this process; call it before the agent
 * runs.
 */
export async function suiteVerifierInventory(
  target: SuiteVerifierTarget,
): Promise<VerifierInventory> {
  // A reward-scored verifier (Harbor) gets one too: when its test.sh runs pytest, the reward is
  // reconciled with the channel (`reward-check.ts`); when it does not, the inventory says why.
  const key = await inventoryKey(target);
  return inventories.get(key, async () => {
    const scope = target.untouched?.cache;
    if (scope === undefined) return takeSuiteInventory(target);
    return cachedInventory(scope, await inventoryCacheKey(scope, key), () =>
      takeSuiteInventory(target),
    );
  });
}

/** Run the verifier's command in `inventory` mode (see `suiteVerifierInventory`). */
export async function takeSuiteInventory(target: SuiteVerifierTarget): Promise<VerifierInventory> {
  const scratch = await mkdtemp(join(tmpdir(), "skillsmith-inventory-"));
  const untouched = await target.untouched?.materialise();
  try {
    const workspace = untouched?.path ?? join(scratch, "workspace");
    if (untouched === undefined) await mkdir(workspace);
    const place = await verifierLayout(target, workspace, join(scratch, "run"));
    return await takeInventory({
      hostPaths: place.unsafe,
      ...(await bytecodeCacheOption(target)),
      execute: (additions) => place.execute(additions),
      readJunit: async () => {
        const host = place.junitHost();
        return host === undefined ? undefined : readJunitReports(host);
      },
      verifierFile: (path) => place.verifierFile(path),
      locate: (path) => place.locate(path),
    });
  } finally {
    await untouched?.dispose();
    await rm(scratch, { recursive: true, force: true });
  }
}

export async function runSuiteVerifier(
  options: RunSuiteVerifierOptions,
): Promise<SuiteVerifierRun> {
  const { verifier } = options;
  const inventory = options.inventory ?? (await suiteVerifierInventory(options));
  const place = await verifierLayout(options, options.workspace, options.scratch);
  if (verifier.scoring === "reward") return runRewardVerifier(place, options, inventory);

  if (inventory.kind === "pytest") {
    const plan = await injectCanaries(inventory, (file) => join(place.copy, file));
    return channelVerifierRun(await channelRun(place, options, inventory, plan), plan);
  }

  // Not a pytest session skillsmith's plugin can serve: read the JUnit report, else the console.
  const execution = await place.execute({ env: {}, mounts: [] });
  const output = executionOutput(execution);
  let checks: CheckResult[] | undefined;
  const junitHost = place.junitHost();
  if (junitHost !== undefined) checks = await readJunitReports(junitHost);
  const fromJunit = checks !== undefined;
  if (checks === undefined) {
    const summary = parseRunnerSummary(stripAnsi(output));
    checks = summary === undefined ? [] : [...summary.checks];
  }
  // A limit the sandbox saw hit is the verdict on the run, never a collection error.
  const { limitHit, flags, evidence } = limitFindings(execution);
  if (limitHit === undefined && isCollectionError(checks, output, execution.exitCode))
    flags.push("collection-error");
  const shortfall =
    limitHit !== undefined
      ? undefined
      : junitShortfall(inventory.junitChecks, fromJunit ? checks : undefined);
  if (shortfall !== undefined) {
    flags.push("tampered");
    evidence.push(shortfall);
  }

  let passed = checks.filter((check) => check.status === "pass").length;
  let total = checks.length;
  let passRatio = total === 0 ? 0 : passed / total;
  let source: SuiteVerifierRun["source"] = fromJunit ? "junit" : total > 0 ? "summary" : "none";
  // Issue 18 (Harbor reward files) hooks in here: a reward written by the task's own script is
  // trusted as it stands today; its integrity checks belong beside this read.
  if (total === 0 && flags.length === 0 && verifier.rewardFile !== undefined) {
    const reward = await readReward(join(place.rewardHost, posix.basename(verifier.rewardFile)));
    if (reward !== undefined) {
      passRatio = reward;
      passed = reward >= 1 ? 1 : 0;
      total = 1;
      flags.push("reward-file");
      source = "reward";
    }
  }
  if (total === 0 && flags.length === 0) flags.push("no-checks");
  if (
    limitHit !== undefined ||
    flags.some((flag) => flag === "collection-error" || flag === "tampered")
  )
    passRatio = 0;
  return verifierRun(execution, { checks, passed, total, passRatio, flags, source, evidence });
}

/** A channel run as the run it stores: its score, flags and evidence, and its canaries. */
function channelVerifierRun(
  { execution, assessment }: ScoredChannelRun,
  plan: CanaryPlan | undefined,
): SuiteVerifierRun {
  const limited = withLimitHit(assessment, execution);
  return verifierRun(execution, {
    checks: assessment.checks,
    passed: assessment.passed,
    total: assessment.total,
    passRatio: limited.passRatio,
    flags: limited.flags,
    source: "channel",
    evidence: limited.evidence,
    ...(plan === undefined
      ? {}
      : {
          canaries: plan.canaries.map((canary) => ({
            name: canary.name,
            file: plan.file,
            expect: canary.expect,
          })),
        }),
  });
}

/** What every channel session of a verifier in `place` is given, whatever its mode. */
async function channelOptions(place: Layout, options: RunSuiteVerifierOptions) {
  const workspaceRoot = place.unsafe ? options.workspace : options.workspaceMountPath;
  return {
    ...(await bytecodeCacheOption(options)),
    locate: (path: string) => place.locate(path),
    hostPaths: place.unsafe,
    execute: (additions: Parameters<Layout["execute"]>[0]) => place.execute(additions),
    readJunit: async () => {
      const host = place.junitHost();
      if (host === undefined) return undefined;
      return (await readJunitReports(host)) ?? ("missing" as const);
    },
    conftestAllowed: (path: string) =>
      place.verifierFile(path) !== undefined || within(path, workspaceRoot) !== undefined,
  };
}

/**
 * The verifier's command with skillsmith's channel open (`plan`: this run's canaries, if any),
 * assessed against the inventory.
 */
async function channelRun(
  place: Layout,
  options: RunSuiteVerifierOptions,
  inventory: PytestInventory,
  plan: CanaryPlan | undefined,
): Promise<ScoredChannelRun> {
  return runWithChannel({
    ...(await channelOptions(place, options)),
    inventory,
    plan,
    sandboxPathOf: (file) => place.sandboxPathOf(file),
  });
}

/**
 * Harbor's contract (`reward.ts`): run test.sh once, score by the reward file in the fresh reward
 * folder, per-test detail from CTRF when written. A limit the sandbox saw hit wins, as elsewhere.
 * When test.sh runs pytest (the inventory saw skillsmith's plugin load), it runs with the channel
 * open and no canaries (a must-fail canary would fail pytest, and with it every reward): a failed
 * cross-check, or a reward above what the channel's outcomes allow, is `tampered`. Otherwise the
 * evidence says why the reward was not cross-checked.
 */
async function runRewardVerifier(
  place: Layout,
  options: RunSuiteVerifierOptions,
  inventory: VerifierInventory,
): Promise<SuiteVerifierRun> {
  if (place.rewardDir === undefined || place.unsafe) {
    throw new UsageError(
      "bench.reward-verifier-unsupported",
      "a reward-scored (Harbor) verifier needs a rewardFile and a sandbox with mounts (--sandbox container)",
    );
  }
  const channel =
    inventory.kind === "pytest"
      ? await channelRun(place, options, inventory, undefined)
      : undefined;
  const execution = channel?.execution ?? (await place.execute({ env: {}, mounts: [] }));
  const { limitHit, flags, evidence } = limitFindings(execution);
  const ctrf = await readCtrfChecks(place.rewardHost);
  const reading = await readHarborReward(place.rewardHost);
  let passRatio = 0;
  // The channel's outcomes, when there are some, are the per-test detail the code cannot forge.
  let checks: CheckResult[] = channel === undefined ? (ctrf ?? []) : [...channel.assessment.checks];
  if (reading.kind === "reward") {
    passRatio = reading.value;
    flags.push("reward-file");
    evidence.push(`reward ${reading.value} from ${reading.file}`);
    if (reading.note !== undefined) evidence.push(reading.note);
    if (checks.length === 0) {
      checks = [{ name: reading.file, status: reading.value >= 1 ? "pass" : "fail" }];
    }
  } else {
    flags.push("reward-missing");
    evidence.push(reading.detail);
  }
  if (channel === undefined) {
    // Only a reward that was read can be cross-checked; a missing one already says what is wrong.
    if (reading.kind === "reward" && inventory.kind === "opaque") {
      evidence.push(`reward not cross-checked: ${inventory.reason}`);
    }
  } else if (limitHit === undefined) {
    const ceiling = rewardCeiling(channel.outcome, channel.assessment);
    const disagreement =
      reading.kind === "reward" ? rewardDisagreement(reading, ceiling) : undefined;
    const tampered = channel.assessment.flags.includes("tampered") || disagreement !== undefined;
    if (tampered) {
      flags.push("tampered");
      evidence.push(...channel.assessment.evidence);
      if (disagreement !== undefined) evidence.push(disagreement);
      passRatio = 0;
    } else evidence.push(rewardAgreement(ceiling));
  }
  if (limitHit !== undefined) passRatio = 0;
  return verifierRun(execution, {
    checks,
    passed: checks.filter((check) => check.status === "pass").length,
    total: checks.length,
    passRatio,
    flags,
    source: reading.kind === "reward" ? "reward" : "none",
    evidence,
  });
}

/** The verifier's stdout, then its stderr: what a run stores and what summaries are read from. */
function executionOutput(execution: SandboxExecResult): string {
  return `${execution.stdout}\n${execution.stderr}`;
}

/**
 * The limit the sandbox saw the verifier hit (a timeout counts as the time limit), with its flag
 * and the sandbox's detail as evidence; empty lists when none was hit.
 */
function limitFindings(execution: SandboxExecResult): {
  readonly limitHit: { readonly limit: "memory" | "processes" | "time" } | undefined;
  readonly flags: string[];
  readonly evidence: string[];
} {
  const limitHit =
    execution.limitHit ?? (execution.timedOut ? { limit: "time" as const } : undefined);
  return {
    limitHit,
    flags: limitHit === undefined ? [] : [flagForLimit(limitHit.limit)],
    evidence: execution.limitHit === undefined ? [] : [execution.limitHit.detail],
  };
}

/** A verifier run: what was read of it, with the execution's exit, time and output. */
function verifierRun(
  execution: SandboxExecResult,
  read: Omit<SuiteVerifierRun, "exitCode" | "timedOut" | "durationMs" | "output">,
): SuiteVerifierRun {
  return {
    ...read,
    exitCode: execution.exitCode,
    timedOut: execution.timedOut,
    durationMs: execution.durationMs,
    output: executionOutput(execution),
  };
}

async function readReward(path: string): Promise<number | undefined> {
  // Written by the code under test: unreadable is no reward (see readHarborReward).
  const text = await readFile(path, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const value = Number(text.trim());
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : undefined;
}
