/**
 * Where a suite verifier's files go for one run: a fresh copy in the run's scratch folder, shown
 * at the verifier's mount path with its own files read-only, its reward folder beside it, and
 * the mapping between sandbox and host paths that the integrity checks and reports use.
 */
import { cp, mkdir, readdir, rm } from "node:fs/promises";
import { dirname, join, posix, relative, sep } from "node:path";
import {
  type ChannelAdditions,
  type Mount,
  readOnlyVerifierFolder,
  type SandboxExecResult,
} from "../../env/index.js";
import type { SuiteVerifier } from "../suite/types.js";
import type { SuiteVerifierTarget } from "./verifier.js";

/** A verifier's wall-time limit when neither it nor its environment names one (in manifests). */
export const defaultTimeoutMs = 10 * 60_000;

/** `path` relative to `folder` (both sandbox paths), or undefined when it lies outside. */
export function within(path: string, folder: string): string | undefined {
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

export interface Layout {
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
  /** The verifier's own mounts (its folder read-only, its JUnit file and reward folder writable). */
  readonly mounts: readonly Mount[];
  execute(additions: ChannelAdditions): Promise<SandboxExecResult>;
}

export async function verifierLayout(
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

  // The whole verifier folder is read-only: the code it tests can neither rewrite its files (a
  // test module rewritten while an earlier one is collected, an expected-output file edited to
  // match) nor add any (a helper module or `.pyc` planted beside the tests, which Python and the
  // tripwire would take for the verifier's own). What the verifier writes goes elsewhere: bytecode
  // and pytest's cache to the channel's scratch folder, the JUnit report to its own writable mount.
  const mounts: Mount[] = await readOnlyVerifierFolder(
    { hostPath: copy, sandboxPath: verifier.mountPath },
    unsafe ? undefined : junitFile,
  );
  if (rewardDir !== undefined) {
    mounts.push({ hostPath: rewardHost, sandboxPath: rewardDir, readOnly: false });
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
    mounts,
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
        ...(target.user === undefined ? {} : { user: target.user }),
        ...(target.signal === undefined ? {} : { signal: target.signal }),
      }),
  };
}
