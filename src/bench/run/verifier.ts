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
 * output the code under test can write. The verifier's own files are read-only inside the
 * sandbox (its folder stays writable for caches and reports).
 */
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, posix, relative, sep } from "node:path";
import { UsageError } from "../../core/errors.js";
import {
  type ChannelAdditions,
  type CheckResult,
  flagForLimit,
  InventoryMemo,
  injectCanaries,
  isCollectionError,
  junitShortfall,
  type Mount,
  materialiseWorkspace,
  parseRunnerSummary,
  type PreparedBase,
  readJunitReports,
  runWithChannel,
  type SandboxExecResult,
  type SandboxV1,
  stripAnsi,
  takeInventory,
  type VerifierInventory,
  withLimitHit,
} from "../../env/index.js";
import type { SuiteRequirement, SuiteSkill, SuiteVerifier } from "../suite/types.js";
import { readCtrfChecks, readHarborReward } from "./reward.js";

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
}

/** An untouched copy of the repository at the base commit, for the inventory. */
export interface UntouchedWorkspace {
  /** Identifies the tree (its `treeDigest`): part of the inventory's memo key. */
  readonly digest: string;
  /** A fresh workspace of that tree, disposed after the inventory. */
  materialise(): Promise<{ readonly path: string; dispose(): Promise<unknown> }>;
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

/**
 * Run a requirement's verifier on a fresh workspace of `base` once `putInPlace` has written a
 * candidate into it (a reference solution, a synthesised diff); `putInPlace` answers why it could
 * not, or undefined. Workspace and scratch folder are removed whatever happens.
 */
export async function verifyCandidate(
  input: RequirementVerifierInput & {
    readonly base: PreparedBase;
    readonly putInPlace: (workspace: string) => Promise<string | undefined>;
  },
): Promise<CandidateVerification> {
  const workspace = await materialiseWorkspace(input.base);
  const scratch = await mkdtemp(join(tmpdir(), "skillsmith-verify-"));
  try {
    const problem = await input.putInPlace(workspace.path);
    if (problem !== undefined) return { kind: "not-in-place", problem };
    const run = await runSuiteVerifier({
      ...requirementVerifierTarget({ ...input, workspaceMountPath: workspace.mountPath }),
      workspace: workspace.path,
      scratch,
    });
    return { kind: "verified", run };
  } finally {
    await workspace.dispose().catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
}

/** A verifier's wall-time limit when neither it nor its environment names one (in manifests). */
export const defaultTimeoutMs = 10 * 60_000;
/** Beyond this many files a verifier's files are not each made read-only (mount count). */
const READ_ONLY_FILE_LIMIT = 256;

function within(path: string, folder: string): string | undefined {
  const relativePath = posix.relative(folder, path);
  if (relativePath === "") return "";
  if (relativePath.startsWith("..") || posix.isAbsolute(relativePath)) return undefined;
  return relativePath;
}

/** A fresh copy per run: pytest writes caches and reports next to the tests. */
async function copyVerifier(verifier: SuiteVerifier, copy: string): Promise<string[]> {
  await rm(copy, { recursive: true, force: true });
  await mkdir(copy, { recursive: true });
  for (const file of verifier.files) {
    await mkdir(dirname(join(copy, file)), { recursive: true });
    await cp(join(verifier.folder, file), join(copy, file), { recursive: true });
  }
  const entries = await readdir(copy, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(copy, join(entry.parentPath, entry.name)).split(sep).join("/"))
    .sort();
}

interface Layout {
  readonly copy: string;
  readonly files: readonly string[];
  readonly rewardHost: string;
  readonly rewardDir: string | undefined;
  readonly unsafe: boolean;
  readonly cwd: string;
  /** A path the verifier names inside the sandbox → where it is on the host. */
  hostPathOf(sandboxPath: string): string | undefined;
  /** A path inside the sandbox → relative to the verifier's root, when it is the verifier's. */
  verifierFile(sandboxPath: string): string | undefined;
  /** A path inside the sandbox → its location (`verifier:…`, `workspace:…`, else itself). */
  locate(sandboxPath: string): string;
  /** A verifier file → where the sandbox shows it. */
  sandboxPathOf(file: string): string;
  junitHost(): string | undefined;
  execute(additions: ChannelAdditions): Promise<SandboxExecResult>;
}

async function layout(
  target: SuiteVerifierTarget,
  workspace: string,
  scratch: string,
): Promise<Layout> {
  const { verifier, sandbox } = target;
  const copy = join(scratch, "verifier");
  const rewardHost = join(scratch, "reward");
  const files = await copyVerifier(verifier, copy);
  const rewardDir =
    verifier.rewardFile === undefined ? undefined : posix.dirname(verifier.rewardFile);
  if (rewardDir !== undefined) await mkdir(rewardHost, { recursive: true });
  const unsafe = sandbox.kind === "unsafe";
  const verifierRoot = unsafe ? copy : verifier.mountPath;
  const workspaceRoot = unsafe ? workspace : target.workspaceMountPath;

  const hostPathOf = (sandboxPath: string): string | undefined => {
    const inVerifier = within(sandboxPath, verifier.mountPath);
    if (inVerifier !== undefined) return join(copy, inVerifier);
    const inWorkspace = within(sandboxPath, target.workspaceMountPath);
    if (inWorkspace !== undefined) return join(workspace, inWorkspace);
    if (rewardDir !== undefined) {
      const inReward = within(sandboxPath, rewardDir);
      if (inReward !== undefined) return join(rewardHost, inReward);
    }
    return undefined;
  };
  const junitSandbox =
    verifier.junit === undefined
      ? undefined
      : posix.isAbsolute(verifier.junit)
        ? verifier.junit
        : posix.join(verifier.cwd, verifier.junit);
  const junitFile =
    junitSandbox === undefined ? undefined : within(junitSandbox, verifier.mountPath);

  const mounts: Mount[] = [{ hostPath: copy, sandboxPath: verifier.mountPath, readOnly: false }];
  if (rewardDir !== undefined) {
    mounts.push({ hostPath: rewardHost, sandboxPath: rewardDir, readOnly: false });
  }
  // The verifier's own files cannot be rewritten by the code it tests (a test module rewritten
  // while an earlier one is collected, an expected-output file edited to match).
  for (const file of files.filter((name) => name !== junitFile).slice(0, READ_ONLY_FILE_LIMIT)) {
    mounts.push({
      hostPath: join(copy, file),
      sandboxPath: posix.join(verifier.mountPath, file),
      readOnly: true,
    });
  }
  // Without a mount namespace nothing can appear at its sandbox path: run in the host copies.
  const cwd = unsafe ? (hostPathOf(verifier.cwd) ?? copy) : verifier.cwd;
  return {
    copy,
    files,
    rewardHost,
    rewardDir,
    unsafe,
    cwd,
    hostPathOf,
    verifierFile: (sandboxPath) => {
      const file = within(sandboxPath, verifierRoot);
      return file !== undefined && files.includes(file) ? file : undefined;
    },
    locate: (sandboxPath) => {
      const inVerifier = within(sandboxPath, verifierRoot);
      if (inVerifier !== undefined) return `verifier:${inVerifier}`;
      const inWorkspace = within(sandboxPath, workspaceRoot);
      return inWorkspace === undefined ? sandboxPath : `workspace:${inWorkspace}`;
    },
    sandboxPathOf: (file) => posix.join(verifierRoot, file),
    junitHost: () => (junitSandbox === undefined ? undefined : hostPathOf(junitSandbox)),
    execute: (additions) =>
      sandbox.exec({
        command: ["sh", "-c", verifier.command],
        workspace,
        workspaceMountPath: target.workspaceMountPath,
        cwd,
        network: "none",
        env: {
          PYTHONDONTWRITEBYTECODE: "1",
          SKILLSMITH_VERIFIER: unsafe ? copy : verifier.mountPath,
          ...(unsafe ? { SKILLSMITH_WORKSPACE: workspace } : {}),
          ...additions.env,
        },
        limits: {
          timeoutMs: (verifier.timeoutSeconds ?? defaultTimeoutMs / 1000) * 1000,
          ...(target.memoryBytes === undefined ? {} : { memoryBytes: target.memoryBytes }),
          ...(target.maxProcesses === undefined ? {} : { maxProcesses: target.maxProcesses }),
          ...(target.cpus === undefined ? {} : { cpus: target.cpus }),
        },
        ...(unsafe ? {} : { extraMounts: [...mounts, ...additions.mounts] }),
        ...(target.image === undefined ? {} : { image: target.image }),
        ...(target.signal === undefined ? {} : { signal: target.signal }),
      }),
  };
}

const inventories = new InventoryMemo();

async function inventoryKey(target: SuiteVerifierTarget): Promise<string> {
  const { verifier } = target;
  const hash = createHash("sha256");
  hash.update(
    JSON.stringify([
      target.sandbox.kind,
      target.image ?? "",
      target.untouched?.digest ?? "empty workspace",
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
  // A reward-scored verifier (Harbor) is read from its reward file, not from test ids: nothing
  // to collect beforehand, and no container to spend on it.
  if (target.verifier.scoring === "reward") {
    return { kind: "opaque", reason: "scored from the task's reward file", junitChecks: 0 };
  }
  return inventories.get(await inventoryKey(target), async () => {
    const scratch = await mkdtemp(join(tmpdir(), "skillsmith-inventory-"));
    const untouched = await target.untouched?.materialise();
    try {
      const workspace = untouched?.path ?? join(scratch, "workspace");
      if (untouched === undefined) await mkdir(workspace);
      const place = await layout(target, workspace, join(scratch, "run"));
      return await takeInventory({
        hostPaths: place.unsafe,
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
  });
}

export async function runSuiteVerifier(
  options: RunSuiteVerifierOptions,
): Promise<SuiteVerifierRun> {
  const { verifier } = options;
  const inventory = options.inventory ?? (await suiteVerifierInventory(options));
  const place = await layout(options, options.workspace, options.scratch);
  if (verifier.scoring === "reward") return runRewardVerifier(place);

  if (inventory.kind === "pytest") {
    const plan = await injectCanaries(inventory, (file) => join(place.copy, file));
    const workspaceRoot = place.unsafe ? options.workspace : options.workspaceMountPath;
    const { execution, assessment } = await runWithChannel({
      inventory,
      plan,
      sandboxPathOf: (file) => place.sandboxPathOf(file),
      locate: (path) => place.locate(path),
      hostPaths: place.unsafe,
      execute: (additions) => place.execute(additions),
      readJunit: async () => {
        const host = place.junitHost();
        if (host === undefined) return undefined;
        return (await readJunitReports(host)) ?? "missing";
      },
      conftestAllowed: (path) =>
        place.verifierFile(path) !== undefined || within(path, workspaceRoot) !== undefined,
    });
    const limited = withLimitHit(assessment, execution);
    return {
      checks: assessment.checks,
      passed: assessment.passed,
      total: assessment.total,
      passRatio: limited.passRatio,
      flags: limited.flags,
      exitCode: execution.exitCode,
      timedOut: execution.timedOut,
      durationMs: execution.durationMs,
      output: `${execution.stdout}\n${execution.stderr}`,
      source: "channel",
      evidence: limited.evidence,
    };
  }

  // Not a pytest session skillsmith's plugin can serve: read the JUnit report, else the console.
  const execution = await place.execute({ env: {}, mounts: [] });
  const output = `${execution.stdout}\n${execution.stderr}`;
  let checks: CheckResult[] | undefined;
  const junitHost = place.junitHost();
  if (junitHost !== undefined) checks = await readJunitReports(junitHost);
  const fromJunit = checks !== undefined;
  if (checks === undefined) {
    const summary = parseRunnerSummary(stripAnsi(output));
    checks = summary === undefined ? [] : [...summary.checks];
  }
  const flags: string[] = [];
  const evidence: string[] = [];
  // A limit the sandbox saw hit is the verdict on the run, never a collection error.
  const limitHit =
    execution.limitHit ?? (execution.timedOut ? { limit: "time" as const } : undefined);
  if (limitHit !== undefined) flags.push(flagForLimit(limitHit.limit));
  else if (isCollectionError(checks, output, execution.exitCode)) flags.push("collection-error");
  if (execution.limitHit !== undefined) evidence.push(execution.limitHit.detail);
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
  return {
    checks,
    passed,
    total,
    passRatio,
    flags,
    exitCode: execution.exitCode,
    timedOut: execution.timedOut,
    durationMs: execution.durationMs,
    output,
    source,
    evidence,
  };
}

/**
 * Harbor's contract (`reward.ts`): run test.sh once, score by the reward file in the fresh reward
 * folder, per-test detail from CTRF when written. A limit the sandbox saw hit wins, as elsewhere.
 */
async function runRewardVerifier(place: Layout): Promise<SuiteVerifierRun> {
  if (place.rewardDir === undefined || place.unsafe) {
    throw new UsageError(
      "reward-verifier-unsupported",
      "a reward-scored (Harbor) verifier needs a rewardFile and a sandbox with mounts (--sandbox container)",
    );
  }
  const execution = await place.execute({ env: {}, mounts: [] });
  const output = `${execution.stdout}\n${execution.stderr}`;
  const flags: string[] = [];
  const evidence: string[] = [];
  const limitHit =
    execution.limitHit ?? (execution.timedOut ? { limit: "time" as const } : undefined);
  if (limitHit !== undefined) flags.push(flagForLimit(limitHit.limit));
  if (execution.limitHit !== undefined) evidence.push(execution.limitHit.detail);
  const ctrf = await readCtrfChecks(place.rewardHost);
  const reading = await readHarborReward(place.rewardHost);
  let passRatio = 0;
  let checks: CheckResult[] = ctrf ?? [];
  if (reading.kind === "reward") {
    passRatio = reading.value;
    flags.push("reward-file");
    evidence.push(`reward ${reading.value} from ${reading.file}`);
    if (reading.note !== undefined) evidence.push(reading.note);
    if (ctrf === undefined) {
      checks = [{ name: reading.file, status: reading.value >= 1 ? "pass" : "fail" }];
    }
  } else {
    flags.push("reward-missing");
    evidence.push(reading.detail);
  }
  if (limitHit !== undefined) passRatio = 0;
  return {
    checks,
    passed: checks.filter((check) => check.status === "pass").length,
    total: checks.length,
    passRatio,
    flags,
    exitCode: execution.exitCode,
    timedOut: execution.timedOut,
    durationMs: execution.durationMs,
    output,
    source: reading.kind === "reward" ? "reward" : "none",
    evidence,
  };
}

async function readReward(path: string): Promise<number | undefined> {
  const text = await readFile(path, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const value = Number(text.trim());
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : undefined;
}
