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
  readonly memoryBytes?: number;
  readonly maxProcesses?: number;
  readonly cpus?: number;
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
}

export interface SandboxV1 {
  readonly specificationVersion: "v1";
  readonly kind: "local" | "container" | "unsafe";
  exec(request: SandboxExecRequest): Promise<SandboxExecResult>;
  /** Release anything the sandbox holds (containers, temporary folders). */
  dispose?(): Promise<void>;
}
