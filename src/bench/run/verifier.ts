/**
 * Runs a suite requirement's verifier on a finished workspace. `env`'s `runVerifier` copies a
 * verifier into the workspace root and runs it there; suite verifiers instead live at their own
 * mount path outside the repository (`/verifier`, `/workspace/tests`), with their own working
 * directory, JUnit file and reward file. This adapter mounts them so, and reuses `env`'s parsers.
 */
import { cp, mkdir, readFile, rm } from "node:fs/promises";
import { dirname, join, posix } from "node:path";
import {
  type CheckResult,
  flagForLimit,
  isCollectionError,
  type Mount,
  parseRunnerSummary,
  readJunitReports,
  type SandboxV1,
  stripAnsi,
} from "../../env/index.js";
import type { SuiteVerifier } from "../suite/types.js";

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
  /** Why a flag was set, one line each (the sandbox limit that was hit). */
  readonly evidence: readonly string[];
}

export interface RunSuiteVerifierOptions {
  readonly sandbox: SandboxV1;
  readonly verifier: SuiteVerifier;
  /** Host folder of the finished workspace. */
  readonly workspace: string;
  readonly workspaceMountPath: string;
  /** A private host folder for this run's verifier copy and reports. */
  readonly scratch: string;
  readonly image?: string;
  readonly memoryBytes?: number;
  readonly maxProcesses?: number;
  readonly cpus?: number;
  readonly signal?: AbortSignal;
}

/** A verifier's wall-time limit when neither it nor its environment names one (in manifests). */
export const defaultTimeoutMs = 10 * 60_000;

function within(path: string, folder: string): string | undefined {
  const relativePath = posix.relative(folder, path);
  if (relativePath === "") return "";
  if (relativePath.startsWith("..") || posix.isAbsolute(relativePath)) return undefined;
  return relativePath;
}

export async function runSuiteVerifier(
  options: RunSuiteVerifierOptions,
): Promise<SuiteVerifierRun> {
  const { verifier, sandbox } = options;
  const copy = join(options.scratch, "verifier");
  const rewardHost = join(options.scratch, "reward");
  await rm(copy, { recursive: true, force: true });
  await mkdir(copy, { recursive: true });
  // A fresh copy per run: pytest writes caches and reports next to the tests.
  for (const file of verifier.files) {
    await mkdir(dirname(join(copy, file)), { recursive: true });
    await cp(join(verifier.folder, file), join(copy, file), { recursive: true });
  }
  const rewardDir =
    verifier.rewardFile === undefined ? undefined : posix.dirname(verifier.rewardFile);
  if (rewardDir !== undefined) await mkdir(rewardHost, { recursive: true });

  // Paths the verifier names inside the sandbox, and where they are on the host.
  const hostPathOf = (sandboxPath: string): string | undefined => {
    const inVerifier = within(sandboxPath, verifier.mountPath);
    if (inVerifier !== undefined) return join(copy, inVerifier);
    const inWorkspace = within(sandboxPath, options.workspaceMountPath);
    if (inWorkspace !== undefined) return join(options.workspace, inWorkspace);
    if (rewardDir !== undefined) {
      const inReward = within(sandboxPath, rewardDir);
      if (inReward !== undefined) return join(rewardHost, inReward);
    }
    return undefined;
  };

  const unsafe = sandbox.kind === "unsafe";
  const mounts: Mount[] = [{ hostPath: copy, sandboxPath: verifier.mountPath, readOnly: false }];
  if (rewardDir !== undefined) {
    mounts.push({ hostPath: rewardHost, sandboxPath: rewardDir, readOnly: false });
  }
  // Without a mount namespace nothing can appear at its sandbox path: run in the host copies.
  const cwd = unsafe ? (hostPathOf(verifier.cwd) ?? copy) : verifier.cwd;
  const execution = await sandbox.exec({
    command: ["sh", "-c", verifier.command],
    workspace: options.workspace,
    workspaceMountPath: options.workspaceMountPath,
    cwd,
    network: "none",
    env: {
      PYTHONDONTWRITEBYTECODE: "1",
      SKILLSMITH_VERIFIER: unsafe ? copy : verifier.mountPath,
      ...(unsafe ? { SKILLSMITH_WORKSPACE: options.workspace } : {}),
    },
    limits: {
      timeoutMs: (verifier.timeoutSeconds ?? defaultTimeoutMs / 1000) * 1000,
      ...(options.memoryBytes === undefined ? {} : { memoryBytes: options.memoryBytes }),
      ...(options.maxProcesses === undefined ? {} : { maxProcesses: options.maxProcesses }),
      ...(options.cpus === undefined ? {} : { cpus: options.cpus }),
    },
    ...(unsafe ? {} : { extraMounts: mounts }),
    ...(options.image === undefined ? {} : { image: options.image }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });

  const output = `${execution.stdout}\n${execution.stderr}`;
  let checks: CheckResult[] | undefined;
  if (verifier.junit !== undefined) {
    const junitSandbox = posix.isAbsolute(verifier.junit)
      ? verifier.junit
      : posix.join(verifier.cwd, verifier.junit);
    const junitHost = hostPathOf(junitSandbox);
    if (junitHost !== undefined) checks = await readJunitReports(junitHost);
  }
  if (checks === undefined) {
    const summary = parseRunnerSummary(stripAnsi(output));
    checks = summary === undefined ? [] : [...summary.checks];
  }
  const flags: string[] = [];
  // A limit the sandbox saw hit is the verdict on the run, never a collection error.
  const limitHit =
    execution.limitHit ?? (execution.timedOut ? { limit: "time" as const } : undefined);
  if (limitHit !== undefined) flags.push(flagForLimit(limitHit.limit));
  else if (isCollectionError(checks, output, execution.exitCode)) flags.push("collection-error");

  let passed = checks.filter((check) => check.status === "pass").length;
  let total = checks.length;
  let passRatio = total === 0 ? 0 : passed / total;
  if (total === 0 && flags.length === 0 && verifier.rewardFile !== undefined) {
    const reward = await readReward(join(rewardHost, posix.basename(verifier.rewardFile)));
    if (reward !== undefined) {
      passRatio = reward;
      passed = reward >= 1 ? 1 : 0;
      total = 1;
      flags.push("reward-file");
    }
  }
  if (total === 0 && flags.length === 0) flags.push("no-checks");
  if (limitHit !== undefined || flags.includes("collection-error")) passRatio = 0;
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
    evidence: execution.limitHit === undefined ? [] : [execution.limitHit.detail],
  };
}

async function readReward(path: string): Promise<number | undefined> {
  const text = await readFile(path, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const value = Number(text.trim());
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : undefined;
}
