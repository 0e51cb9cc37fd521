import {
  accessSync,
  existsSync,
  constants as fsConstants,
  lstatSync,
  readdirSync,
  readlinkSync,
} from "node:fs";
import { constants } from "node:os";
import { posix } from "node:path";
import { InputError } from "../../core/errors.js";
import { runProcess } from "../../core/process.js";
import { type CgroupLayout, detectCgroupLayout, SandboxCgroup } from "./cgroup.js";
import { SandboxUnavailableError } from "./errors.js";
import {
  INSIDE_FORWARDER_SCRIPT,
  LOOPBACK_SOCKET_DIRECTORY,
  type LoopbackBridge,
  startLoopbackBridge,
} from "./loopback.js";
import { normalizeMountPath } from "./mount-path.js";
import type { SandboxExecRequest, SandboxExecResult, SandboxV1 } from "./types.js";

/**
 * The `local` sandbox: bubblewrap. The host is visible read-only, the workspace read-write at its
 * fixed path, `/tmp` and `/run` are private, there is no network unless asked, the workload runs
 * in its own pid namespace (so killing bwrap takes everything inside with it) and without
 * capabilities (root inside could otherwise remount the host read-write).
 *
 * Limits: a cgroup per run (memory, pids, cpu) when the cgroup filesystem is writable, which is
 * the only precise way for root; otherwise `prlimit` (data segment, and processes for non-root
 * users, where RLIMIT_NPROC counts all of that user's processes). `limitEnforcement()` says which.
 * RLIMIT_DATA rather than RLIMIT_AS: V8 and the agent CLIs reserve far more address space than
 * they use, so an address-space cap stops Node and Codex from starting at all, while the data
 * limit counts only writable private memory (Linux ≥ 4.7) and still stops a memory hog.
 */

export interface BubblewrapSandboxOptions {
  /** Path to the `bwrap` binary; found on PATH when omitted. */
  readonly bwrapPath?: string;
  /** PATH used to find `bwrap` (defaults to this process's PATH). */
  readonly searchPath?: string;
  /** Host paths to hide behind an empty tmpfs (e.g. credential folders). */
  readonly hiddenPaths?: readonly string[];
  /** Node binary for the loopback forwarder inside; defaults to the one running us. */
  readonly nodePath?: string;
  /** Override cgroup detection (tests; `null` forces the prlimit fallback). */
  readonly cgroupLayout?: CgroupLayout | null;
}

export interface LimitEnforcement {
  readonly mechanism: "cgroup-v1" | "cgroup-v2" | "prlimit";
  readonly memory: boolean;
  readonly processes: boolean;
  readonly cpu: boolean;
}

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Top-level host folders we never replace with an empty one to make room for a mount point. */
const SYSTEM_TOP_LEVEL = new Set(["usr", "etc", "bin", "sbin", "lib", "lib64", "var", "opt"]);
/** Provided fresh by bwrap itself (or private tmpfs), never bound from the host. */
const NOT_FROM_HOST = new Set(["proc", "dev", "tmp", "run"]);

export function findOnPath(
  program: string,
  path = process.env.PATH ?? DEFAULT_PATH,
): string | null {
  for (const directory of path.split(":")) {
    if (directory === "") continue;
    const candidate = posix.join(directory, program);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

export function bubblewrapMissingError(): SandboxUnavailableError {
  return new SandboxUnavailableError(
    "SANDBOX_BWRAP_MISSING",
    "bubblewrap (bwrap) is not installed, so the local sandbox cannot run. Install it with " +
      "`apt-get install bubblewrap` (Debian/Ubuntu) or `dnf install bubblewrap` (Fedora), use " +
      "the container sandbox, or pass --unsafe-no-sandbox to run without any isolation.",
    { data: { tool: "bwrap" } },
  );
}

export class BubblewrapSandbox implements SandboxV1 {
  readonly specificationVersion = "v1" as const;
  readonly kind = "local" as const;
  private readonly bwrapPath: string;
  private readonly hiddenPaths: readonly string[];
  private readonly nodePath: string;
  private readonly cgroupLayout: CgroupLayout | null;

  constructor(options: BubblewrapSandboxOptions = {}) {
    const bwrapPath = options.bwrapPath ?? findOnPath("bwrap", options.searchPath);
    if (bwrapPath === null) throw bubblewrapMissingError();
    this.bwrapPath = bwrapPath;
    this.hiddenPaths = options.hiddenPaths ?? [];
    this.nodePath = options.nodePath ?? process.execPath;
    this.cgroupLayout =
      options.cgroupLayout === undefined ? detectCgroupLayout() : options.cgroupLayout;
  }

  /** How memory, process and CPU limits are enforced on this machine. */
  limitEnforcement(): LimitEnforcement {
    if (this.cgroupLayout !== null) {
      return {
        mechanism: this.cgroupLayout.version === 2 ? "cgroup-v2" : "cgroup-v1",
        ...SandboxCgroup.enforces(this.cgroupLayout),
      };
    }
    const isRoot = process.getuid?.() === 0;
    return { mechanism: "prlimit", memory: true, processes: !isRoot, cpu: false };
  }

  /**
   * Run `bwrap … true` once: the binary may exist but the kernel refuse namespaces (unprivileged
   * user namespaces disabled). Throws `SandboxUnavailableError` with bwrap's own words.
   */
  async probe(): Promise<void> {
    const result = await runProcess(
      this.bwrapPath,
      ["--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--die-with-parent", "true"],
      { timeoutMs: 10_000 },
    );
    if (result.exitCode !== 0) {
      throw new SandboxUnavailableError(
        "SANDBOX_BWRAP_UNUSABLE",
        `bubblewrap is installed but cannot create a sandbox here: ${
          result.spawnError?.message ?? result.stderr.trim()
        }. Enable user namespaces (sysctl kernel.unprivileged_userns_clone=1), run as root, use ` +
          "the container sandbox, or pass --unsafe-no-sandbox to run without any isolation.",
        { data: { exitCode: result.exitCode, stderr: result.stderr } },
      );
    }
  }

  async exec(request: SandboxExecRequest): Promise<SandboxExecResult> {
    if (request.command.length === 0) throw new TypeError("empty command");
    if (!existsSync(request.workspace)) {
      throw new InputError("SANDBOX_WORKSPACE_MISSING", "the workspace folder does not exist", {
        file: request.workspace,
      });
    }
    const started = performance.now();
    const enforcement = this.limitEnforcement();
    const { memoryBytes, maxProcesses, cpus } = request.limits;
    const wantsCgroup =
      memoryBytes !== undefined || maxProcesses !== undefined || cpus !== undefined;
    let cgroup: SandboxCgroup | undefined;
    let bridge: LoopbackBridge | undefined;
    try {
      if (wantsCgroup && this.cgroupLayout !== null) {
        cgroup = await SandboxCgroup.create(this.cgroupLayout, {
          ...(memoryBytes === undefined ? {} : { memoryBytes }),
          ...(maxProcesses === undefined ? {} : { maxProcesses }),
          ...(cpus === undefined ? {} : { cpus }),
        });
      }
      const ports = request.network === "loopback" ? (request.loopbackPorts ?? []) : [];
      if (ports.length > 0) bridge = await startLoopbackBridge(ports);

      const bwrapArguments = this.bwrapArguments(request, bridge);
      let argv = [this.bwrapPath, ...bwrapArguments];
      if (cgroup === undefined && wantsCgroup && enforcement.mechanism === "prlimit") {
        argv = [
          ...prlimitPrefix(memoryBytes, enforcement.processes ? maxProcesses : undefined),
          ...argv,
        ];
      }
      if (cgroup !== undefined) {
        // The shell moves itself into the groups, then becomes bwrap: everything bwrap starts
        // inherits the groups, and no process runs unlimited for even a moment.
        argv = [
          "/bin/sh",
          "-c",
          'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"',
          "sh",
          ...cgroup.procsFiles,
          "--",
          ...argv,
        ];
      }
      const [program, ...args] = argv;
      if (program === undefined) throw new TypeError("empty command");
      const result = await runProcess(program, args, {
        env: this.environment(request),
        timeoutMs: request.limits.timeoutMs,
        // bwrap dies at once on SIGTERM and takes the pid namespace with it; no need to wait.
        killGraceMs: 500,
        ...(request.input === undefined ? {} : { input: request.input }),
        ...(request.signal === undefined ? {} : { signal: request.signal }),
        ...(request.onStdout === undefined ? {} : { onStdout: request.onStdout }),
        ...(request.onStderr === undefined ? {} : { onStderr: request.onStderr }),
      });
      const oomKilled = cgroup === undefined ? false : (await cgroup.oomKills()) > 0;
      return {
        exitCode:
          result.spawnError !== undefined
            ? 127
            : (result.exitCode ??
              (result.signal === null ? null : 128 + signalNumber(result.signal))),
        stdout: result.stdout,
        stderr: result.spawnError === undefined ? result.stderr : `${result.spawnError.message}\n`,
        timedOut: result.timedOut,
        oomKilled,
        durationMs: performance.now() - started,
      };
    } finally {
      // Kill whatever survived (a daemon that escaped the session) before the group goes away.
      await cgroup?.destroy();
      await bridge?.close();
    }
  }

  /** The bwrap command line (without the bwrap binary itself); exported for inspection. */
  bwrapArguments(request: SandboxExecRequest, bridge?: LoopbackBridge): string[] {
    const mountPath = normalizeMountPath(request.workspaceMountPath);
    if (!posix.isAbsolute(mountPath) || mountPath === "/") {
      throw new InputError(
        "SANDBOX_MOUNT_PATH",
        `workspace mount path "${request.workspaceMountPath}" must be an absolute path below /`,
        { field: "workspaceMountPath" },
      );
    }
    const targets = [mountPath, ...(request.extraMounts ?? []).map((mount) => mount.sandboxPath)];
    const replacedTopLevel = new Set<string>();
    for (const target of targets) {
      const top = target.split("/")[1] ?? "";
      // A mount point that does not exist on the read-only host cannot be created there; give
      // its top-level folder an empty tmpfs instead, unless that would hide the system.
      if (!existsSync(target) && !NOT_FROM_HOST.has(top)) {
        if (SYSTEM_TOP_LEVEL.has(top)) {
          throw new InputError(
            "SANDBOX_MOUNT_PATH",
            `cannot create mount point ${target} inside the read-only system folder /${top}`,
            { field: "workspaceMountPath" },
          );
        }
        replacedTopLevel.add(top);
      }
    }

    const args: string[] = [];
    for (const entry of readdirSync("/")) {
      if (NOT_FROM_HOST.has(entry) || replacedTopLevel.has(entry)) continue;
      const path = `/${entry}`;
      const stat = lstatSync(path, { throwIfNoEntry: false });
      if (stat === undefined) continue;
      if (stat.isSymbolicLink()) args.push("--symlink", readlinkSync(path), path);
      else args.push("--ro-bind", path, path);
    }
    for (const top of replacedTopLevel) args.push("--tmpfs", `/${top}`);
    args.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run");
    for (const hidden of this.hiddenPaths) {
      if (existsSync(hidden)) args.push("--tmpfs", hidden);
    }
    args.push("--bind", request.workspace, mountPath);
    for (const mount of request.extraMounts ?? []) {
      args.push(mount.readOnly ? "--ro-bind" : "--bind", mount.hostPath, mount.sandboxPath);
    }
    if (request.network === "host") {
      // Name resolution may live under /run (systemd-resolved), which is private here.
      for (const file of ["/etc/resolv.conf"]) {
        let target: string | undefined;
        try {
          target = posix.resolve("/etc", readlinkSync(file));
        } catch {
          target = undefined;
        }
        if (target?.startsWith("/run/") === true && existsSync(target)) {
          args.push("--ro-bind", target, target);
        }
      }
    } else {
      args.push("--unshare-net");
    }
    if (bridge !== undefined) args.push("--ro-bind", bridge.directory, LOOPBACK_SOCKET_DIRECTORY);
    // Make the (bwrap-made) root itself read-only too; the workspace, /tmp and /run are their own
    // mounts and stay writable.
    args.push("--remount-ro", "/");
    args.push(
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-uts",
      "--die-with-parent",
      "--new-session",
      "--cap-drop",
      "ALL",
      "--chdir",
      request.cwd ?? mountPath,
      "--",
    );
    if (bridge !== undefined) {
      const ports = (request.loopbackPorts ?? []).join(",");
      args.push(
        this.nodePath,
        "-e",
        INSIDE_FORWARDER_SCRIPT,
        LOOPBACK_SOCKET_DIRECTORY,
        ports,
        ...request.command,
      );
    } else {
      args.push(...request.command);
    }
    return args;
  }

  private environment(request: SandboxExecRequest): Record<string, string> {
    // A fresh, small environment: the host's variables (API keys, tokens) do not leak in.
    return {
      PATH: process.env.PATH ?? DEFAULT_PATH,
      HOME: "/tmp",
      TMPDIR: "/tmp",
      LANG: "C.UTF-8",
      SKILLSMITH_WORKSPACE: normalizeMountPath(request.workspaceMountPath),
      ...request.env,
    };
  }
}

function prlimitPrefix(memoryBytes?: number, maxProcesses?: number): string[] {
  const prlimit = findOnPath("prlimit") ?? "prlimit";
  const limits: string[] = [];
  if (memoryBytes !== undefined) limits.push(`--data=${memoryBytes}`);
  if (maxProcesses !== undefined) limits.push(`--nproc=${maxProcesses}`);
  return limits.length === 0 ? [] : [prlimit, ...limits, "--"];
}

function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 0;
}
