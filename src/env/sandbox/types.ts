/**
 * The sandbox interface: one small, versioned contract that every isolation backend implements
 * (bubblewrap on the host, containers through the Docker Engine API, and an explicit unsafe
 * pass-through). Agents and verifiers run through it; nothing else spawns workload processes.
 */

export type NetworkPolicy =
  /** No network at all. The default for agent and verifier runs. */
  | "none"
  /** Loopback only: lets an agent reach a model endpoint on 127.0.0.1 and nothing else. */
  | "loopback"
  /** The host's network (setup steps that install dependencies). */
  | "host";

export interface ResourceLimits {
  /** Wall-clock limit; on expiry the whole process tree is killed and `timedOut` is set. */
  readonly timeoutMs: number;
  /** Memory of the whole process tree; `DEFAULT_SANDBOX_LIMITS.memoryBytes` when absent. */
  readonly memoryBytes?: number;
  /**
   * Tasks (processes and threads) of the whole tree at once; `DEFAULT_SANDBOX_LIMITS.maxProcesses`
   * when absent.
   */
  readonly maxProcesses?: number;
  readonly cpus?: number;
}

/**
 * The limits every sandboxed process tree gets when its request names none, so no agent or
 * verifier ever runs unlimited (a fork bomb or an 8 GiB allocation once succeeded). Threads count
 * as tasks for the process limit (the kernel's pids controller counts both); 512 leaves room for
 * agent CLIs (a few dozen threads each) and test runners with worker pools.
 */
export const DEFAULT_SANDBOX_LIMITS = {
  memoryBytes: 4 * 1024 * 1024 * 1024,
  maxProcesses: 512,
} as const;

/** `limits` with the defaults filled in: what a backend actually enforces. */
export function withDefaultLimits(
  limits: ResourceLimits,
): ResourceLimits & { readonly memoryBytes: number; readonly maxProcesses: number } {
  return {
    ...limits,
    memoryBytes: limits.memoryBytes ?? DEFAULT_SANDBOX_LIMITS.memoryBytes,
    maxProcesses: limits.maxProcesses ?? DEFAULT_SANDBOX_LIMITS.maxProcesses,
  };
}

/** Which limit stopped (or constrained) a workload, and the evidence, for flags and reports. */
export interface LimitHit {
  /** `memory` → flag `oom`, `processes` → `process-limit`, `time` → `timeout`. */
  readonly limit: "memory" | "processes" | "time";
  /** One line for a reader: the limit and what showed it was hit. */
  readonly detail: string;
}

export interface Mount {
  readonly hostPath: string;
  readonly sandboxPath: string;
  readonly readOnly: boolean;
}

export interface SandboxExecRequest {
  /** argv; no shell unless the caller asks for one (`["sh", "-c", ...]`). */
  readonly command: readonly string[];
  /** Host folder of the run's workspace; read-write inside. */
  readonly workspace: string;
  /** Where the workspace appears inside (default `/workspace/<name>`), so fixed-path tests work. */
  readonly workspaceMountPath: string;
  /** Working directory inside the sandbox; defaults to the workspace mount path. */
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly network: NetworkPolicy;
  readonly limits: ResourceLimits;
  readonly extraMounts?: readonly Mount[];
  /**
   * With `network: "loopback"`: the host's 127.0.0.1 ports to make reachable inside (e.g. the
   * model endpoint). Each is forwarded through a Unix socket, so the sandbox can reach these and
   * nothing else; without them `loopback` is an isolated loopback of the sandbox's own.
   */
  readonly loopbackPorts?: readonly number[];
  /** Container backends: the image to run (from `prepare`); others ignore it. */
  readonly image?: string;
  /**
   * Container backends: the user to run as (`name`, `uid` or `uid:gid`); the image's own `USER`
   * when absent or empty (empty also overrides a user a wrapping sandbox would add). The
   * workspace and every writable mount are made writable for that user. Other backends ignore
   * it (they run as the calling user).
   */
  readonly user?: string;
  readonly input?: string;
  readonly signal?: AbortSignal;
  readonly onStdout?: (chunk: string) => void;
  readonly onStderr?: (chunk: string) => void;
}

export interface SandboxExecResult {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  /** True when the memory limit killed the workload (known for containers; best effort elsewhere). */
  readonly oomKilled: boolean;
  readonly durationMs: number;
  /**
   * The limit the workload hit, when the backend could tell: the OOM killer struck in its group,
   * a fork failed at the process limit, or the wall clock ran out. Memory wins over processes over
   * time, since a tree that ran out of memory or processes often hangs until the clock runs out.
   */
  readonly limitHit?: LimitHit;
}

/** A setup recipe (from setup detection): what to install on top of a base image. */
export interface SetupRecipe {
  /** Preferred base image (e.g. `python:3.11-slim`); a backend may fall back and says so. */
  readonly baseImage?: string;
  /** Shell commands run in the workspace, in order. */
  readonly commands: readonly string[];
  /** Variables set for the commands and kept in the environment (`ENV` in an image). */
  readonly env?: Readonly<Record<string, string>>;
}

export interface SandboxPrepareRequest {
  /** Host folder of the prepared checkout, copied into the environment. */
  readonly workspace: string;
  readonly workspaceMountPath: string;
  /** Identity of the repository and commit (e.g. `<url>@<sha>`); part of the cache key. */
  readonly cacheKey: string;
  readonly recipe: SetupRecipe;
  /** Setup may need the network (package installs); the default is `host`. */
  readonly network?: NetworkPolicy;
  readonly signal?: AbortSignal;
  readonly onLog?: (line: string) => void;
}

export interface SandboxPrepareResult {
  /** The environment to pass back as `SandboxExecRequest.image`. */
  readonly image: string;
  /** The base image actually used (differs from the recipe's when it fell back). */
  readonly baseImage: string;
  /** True when an environment for the same key already existed and was reused. */
  readonly reused: boolean;
  /** What was decided and why (fallbacks), for the run report. */
  readonly notes: readonly string[];
  readonly durationMs: number;
}

/** How a backend enforces the limits on this machine, honestly (recorded in run manifests). */
export interface LimitEnforcement {
  readonly mechanism: "cgroup-v1" | "cgroup-v2" | "prlimit" | "container-engine" | "none";
  /** Whether each limit is enforced at all (see `notes` for how precisely). */
  readonly memory: boolean;
  readonly processes: boolean;
  readonly cpu: boolean;
  /** Whether hitting the memory / process limit is detected and reported as `limitHit`. */
  readonly detectsHits: boolean;
  /** What is and is not enforced, one sentence each, for the run manifest and warnings. */
  readonly notes: readonly string[];
}

export interface SandboxV1 {
  readonly specificationVersion: "v1";
  /**
   * The backend's registered kind (`local`, `container`, `unsafe`, or one a user registered with
   * `registerSandbox`). Only `unsafe` runs commands in place; every other kind mounts the
   * workspace at `workspaceMountPath`.
   */
  readonly kind: "local" | "container" | "unsafe" | (string & {});
  /** How memory, process and CPU limits are enforced here; absent when unknown. */
  limitEnforcement?(): LimitEnforcement;
  exec(request: SandboxExecRequest): Promise<SandboxExecResult>;
  /**
   * Build the environment for a (repository, commit, recipe) once and reuse it after. Only
   * image-based backends implement it; the others run setup as an ordinary `exec`.
   */
  prepare?(request: SandboxPrepareRequest): Promise<SandboxPrepareResult>;
  /** Release anything the sandbox holds (containers, temporary folders). */
  dispose?(): Promise<void>;
}
