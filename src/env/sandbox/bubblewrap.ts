/**
 * The bubblewrap sandbox: one `bwrap` process tree per command, with only the system folders, the
 * workspace, a fresh /tmp and /run and the requested mounts, under a cgroup for its limits.
 *
 * About 500 lines, one class: the mount list, the cgroup and the process lifecycle are decided
 * together for each command (what is mounted decides what the limits can see); the cgroup itself
 * is in `cgroup.ts`, the loopback bridge in `loopback.ts`.
 */
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
  behindForwarder,
  LOOPBACK_SOCKET_DIRECTORY,
  type LoopbackBridge,
  startLoopbackBridge,
} from "./loopback.js";
import { normalizeMountPath } from "./mount-path.js";
import { keyringSeccompProgram } from "./seccomp.js";
import {
  type LimitEnforcement,
  type LimitHit,
  type Mount,
  type SandboxExecRequest,
  type SandboxExecResult,
  type SandboxV1,
  withDefaultLimits,
} from "./types.js";

/**
 * The `local` sandbox: bubblewrap. The workload sees the system folders toolchains need
 * (`/usr`, `/bin`, `/sbin`, `/lib*`) and a curated `/etc` read-only, its workspace read-write at
 * its fixed path, its explicit extra mounts, and nothing else of the host: no home folders, no
 * `/root`, `/home`, `/opt`, `/var`, `/srv`, `/mnt`, `/work`, so no suite, run, cache or other
 * run's folder wherever those live (outside the system folders). `/tmp` and `/run` are private,
 * there is no network unless asked, the workload runs in its own pid namespace (so killing bwrap
 * takes everything inside with it) and without capabilities (root inside could otherwise remount
 * the host read-write).
 *
 * Limits: a cgroup per run (memory, pids, cpu) when the cgroup filesystem is writable, which is
 * the only precise way for root; otherwise `prlimit` (data segment, and processes for non-root
 * users, where RLIMIT_NPROC counts all of that user's processes). `limitEnforcement()` says which.
 * RLIMIT_DATA rather than RLIMIT_AS: V8 and the agent CLIs reserve far more address space than
 * they use, so an address-space cap stops Node and Codex from starting at all, while the data
 * limit counts only writable private memory (Linux ≥ 4.7) and still stops a memory hog.
 *
 * Why one file of ~500 lines: it is one security boundary, and the argument list `bwrapArguments`
 * builds (what is mounted, read-only or not), the path rules (`sandboxPath`, `SYSTEM_FOLDERS`,
 * `ETC_ALLOWLIST`) and the limit fallback are reviewed together: split up, a reviewer would have
 * to hold three files to see what the workload can reach. Cgroups (cgroup.ts) and the loopback
 * bridge (loopback.ts), which have their own seams, are already apart.
 */

export interface BubblewrapSandboxOptions {
  /** Path to the `bwrap` binary; found on PATH when omitted. */
  readonly bwrapPath?: string;
  /** PATH used to find `bwrap` (defaults to this process's PATH). */
  readonly searchPath?: string;
  /**
   * Host paths to hide even where the sandbox shows their folder (a suite, run or cache folder
   * under /usr/local): folders behind an empty tmpfs, files behind /dev/null.
   */
  readonly hiddenPaths?: readonly string[];
  /** Node binary for the loopback forwarder inside; defaults to the one running us. */
  readonly nodePath?: string;
  /** Override cgroup detection (tests; `null` forces the prlimit fallback). */
  readonly cgroupLayout?: CgroupLayout | null;
}

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/**
 * Host folders every sandbox sees, read-only: programs and their libraries. Symbolic links among
 * them (`/bin` → `usr/bin` on merged-/usr systems) are recreated as links.
 */
export const SYSTEM_FOLDERS = ["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"] as const;

/** bwrap arguments showing the system folders read-only (a symbolic link as the same link). */
function systemFolderArguments(): string[] {
  const args: string[] = [];
  for (const entry of SYSTEM_FOLDERS) {
    const path = `/${entry}`;
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (stat === undefined) continue;
    if (stat.isSymbolicLink()) args.push("--symlink", readlinkSync(path), path);
    else args.push("--ro-bind", path, path);
  }
  return args;
}
/**
 * What of `/etc` a sandbox sees: name resolution, the dynamic linker's cache, time zone, TLS
 * roots, Debian's alternatives links and Python's site configuration. An allow-list, because a
 * deny-list misses whatever the next package puts there: `shadow`, `gshadow`, `sudoers`,
 * `ssh/` host keys, `ssl/private`, `environment`, `npmrc`, `pip.conf`, `gitconfig` (which may
 * hold tokens), container registry credentials and the like are never shown.
 */
export const ETC_ALLOWLIST = [
  "passwd",
  "group",
  "hosts",
  "hostname",
  "resolv.conf",
  "nsswitch.conf",
  "host.conf",
  "gai.conf",
  "protocols",
  "services",
  "networks",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "timezone",
  "alternatives",
  "ssl/certs",
  "ssl/openssl.cnf",
  "ca-certificates",
  "ca-certificates.conf",
  "mime.types",
  "os-release",
  "debian_version",
  "lsb-release",
  "locale.alias",
  "locale.conf",
  "shells",
  "profile",
  "bash.bashrc",
  "inputrc",
  "magic",
  "magic.mime",
  "fonts",
] as const;

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
      // Not here: missing, or there but not executable for us; either way the shell would
      // not run it from this directory either, so the search goes on.
    }
  }
  return null;
}

export function bubblewrapMissingError(): SandboxUnavailableError {
  return new SandboxUnavailableError(
    "env.sandbox-bwrap-missing",
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

  /** How memory, process and CPU limits are enforced on this machine, honestly. */
  limitEnforcement(): LimitEnforcement {
    if (this.cgroupLayout !== null) {
      const enforced = SandboxCgroup.enforces(this.cgroupLayout);
      const notes = [
        `one cgroup per sandbox (${this.cgroupLayout.version === 2 ? "v2" : "v1"}) caps the whole process tree`,
        ...(enforced.memory ? [] : ["memory: NOT enforced (no writable memory controller)"]),
        ...(enforced.processes ? [] : ["processes: NOT enforced (no writable pids controller)"]),
        ...(enforced.cpu ? [] : ["cpu: NOT enforced (no writable cpu controller)"]),
      ];
      return {
        mechanism: this.cgroupLayout.version === 2 ? "cgroup-v2" : "cgroup-v1",
        ...enforced,
        detectsHits: true,
        notes,
      };
    }
    const isRoot = process.getuid?.() === 0;
    return {
      mechanism: "prlimit",
      memory: true,
      processes: !isRoot,
      cpu: false,
      detectsHits: false,
      notes: [
        "memory: RLIMIT_DATA per process, not per tree (several processes together can exceed it); a hit shows as the workload's own allocation error and is not reported as oom",
        isRoot
          ? "processes: NOT enforced (RLIMIT_NPROC does not bind root and no writable pids cgroup exists)"
          : "processes: RLIMIT_NPROC, which counts every process of this user, not only the sandbox's",
        "cpu: NOT enforced (no writable cpu cgroup)",
      ],
    };
  }

  /**
   * Run `bwrap … true` once: the binary may exist but the kernel refuse namespaces (unprivileged
   * user namespaces disabled). Throws `SandboxUnavailableError` with bwrap's own words.
   */
  async probe(): Promise<void> {
    // The system folders `exec` binds, not the whole host root: a recursive bind of `/` copies
    // every mount below it, and one that vanishes meanwhile (a container's overlay, another
    // run's workspace) failed the probe on a busy machine ("Can't bind mount /oldroot/ ...
    // No such file or directory"), which then called bubblewrap unusable.
    const result = await runProcess(
      this.bwrapPath,
      [...systemFolderArguments(), "--unshare-pid", "--unshare-net", "--die-with-parent", "true"],
      { timeoutMs: 10_000 },
    );
    if (result.exitCode !== 0) {
      throw new SandboxUnavailableError(
        "env.sandbox-bwrap-unusable",
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
      throw new InputError("env.sandbox-workspace-missing", "the workspace folder does not exist", {
        file: request.workspace,
      });
    }
    const started = performance.now();
    const enforcement = this.limitEnforcement();
    // Every tree is limited: the request's numbers, else the defaults.
    const { memoryBytes, maxProcesses, cpus } = withDefaultLimits(request.limits);
    let cgroup: SandboxCgroup | undefined;
    let bridge: LoopbackBridge | undefined;
    try {
      if (this.cgroupLayout !== null) {
        cgroup = await SandboxCgroup.create(this.cgroupLayout, {
          memoryBytes,
          maxProcesses,
          ...(cpus === undefined ? {} : { cpus }),
        });
      }
      const ports = request.network === "loopback" ? (request.loopbackPorts ?? []) : [];
      if (ports.length > 0) bridge = await startLoopbackBridge(ports);

      const bwrapArguments = this.bwrapArguments(request, bridge);
      let argv = [this.bwrapPath, ...bwrapArguments];
      if (cgroup === undefined && enforcement.mechanism === "prlimit") {
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
        ...(KEYRING_FILTER === undefined ? {} : { descriptor3: KEYRING_FILTER }),
        ...(request.input === undefined ? {} : { input: request.input }),
        ...(request.signal === undefined ? {} : { signal: request.signal }),
        ...(request.onStdout === undefined ? {} : { onStdout: request.onStdout }),
        ...(request.onStderr === undefined ? {} : { onStderr: request.onStderr }),
      });
      const oomKills = cgroup === undefined ? 0 : await cgroup.oomKills();
      const processHits = cgroup === undefined ? 0 : await cgroup.processLimitHits();
      const oomKilled = oomKills > 0;
      const limitHit: LimitHit | undefined =
        oomKills > 0
          ? {
              limit: "memory",
              detail: `memory limit of ${formatBytes(memoryBytes)} reached: the OOM killer stopped ${oomKills} process(es)`,
            }
          : processHits > 0
            ? {
                limit: "processes",
                detail: `process limit of ${maxProcesses} reached: ${processHits} fork(s) refused`,
              }
            : result.timedOut
              ? {
                  limit: "time",
                  detail: `wall-time limit of ${request.limits.timeoutMs} ms reached: the process tree was killed`,
                }
              : undefined;
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
        ...(limitHit === undefined ? {} : { limitHit }),
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
        "env.sandbox-mount-path",
        `workspace mount path "${request.workspaceMountPath}" must be an absolute path below /`,
        { field: "workspaceMountPath" },
      );
    }
    const extraMounts = [...(request.extraMounts ?? []), ...this.nodeMounts(bridge)];
    for (const target of [mountPath, ...extraMounts.map((mount) => mount.sandboxPath)]) {
      const top = target.split("/")[1] ?? "";
      // A mount point inside a read-only system folder cannot be created; anywhere else bwrap
      // creates it in its own (empty) root.
      if (!existsSync(target) && isSystemFolder(top)) {
        throw new InputError(
          "env.sandbox-mount-path",
          `cannot create mount point ${target} inside the read-only system folder /${top}`,
          { field: "workspaceMountPath" },
        );
      }
    }

    const args: string[] = systemFolderArguments();
    args.push("--dir", "/etc");
    for (const entry of ETC_ALLOWLIST) {
      const path = `/etc/${entry}`;
      if (existsSync(path)) args.push("--ro-bind", path, path);
    }
    // Python's site configuration lives in /etc/python3.X on Debian.
    for (const entry of readdirSync("/etc")) {
      if (/^python3(\.\d+)?$/.test(entry)) args.push("--ro-bind", `/etc/${entry}`, `/etc/${entry}`);
    }
    args.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run");
    args.push("--tmpfs", "/var/tmp");
    // `python` for verifiers written against images that have one (SWE-Skills-Bench runs
    // `python -m pytest`): the system's python3, under a name, when the system has no `python`.
    // The caller's `python` (pyenv under a home folder) is hidden, so this is the interpreter a
    // verifier gets either way, and it is the one Debian's pytest is installed for.
    const python = pythonAlias();
    if (python !== undefined) {
      args.push("--dir", SHIM_FOLDER, "--symlink", python, `${SHIM_FOLDER}/python`);
    }
    for (const hidden of this.hiddenPaths) {
      // Only what would otherwise be visible (inside a system folder or the curated /etc): a
      // mount anywhere else would create the path in the sandbox's own root for nothing.
      const top = hidden.split("/")[1] ?? "";
      if (!isSystemFolder(top) && top !== "etc") continue;
      const stat = lstatSync(hidden, { throwIfNoEntry: false });
      if (stat?.isDirectory() === true) args.push("--tmpfs", hidden);
      else if (stat !== undefined) args.push("--ro-bind", "/dev/null", hidden);
    }
    args.push("--bind", request.workspace, mountPath);
    for (const mount of extraMounts) {
      args.push(mount.readOnly ? "--ro-bind" : "--bind", mount.hostPath, mount.sandboxPath);
    }
    if (request.network === "host") {
      // Name resolution may live under /run (systemd-resolved), which is private here.
      for (const file of ["/etc/resolv.conf"]) {
        let target: string | undefined;
        try {
          target = posix.resolve("/etc", readlinkSync(file));
        } catch {
          // Not a symbolic link (EINVAL) or absent: the file itself is bound with /etc, so
          // there is nothing under /run to add.
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
    // The keyring's calls refused (see seccomp.ts); the program arrives on descriptor 3.
    if (KEYRING_FILTER !== undefined) args.push("--seccomp", "3");
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
      args.push(...behindForwarder(this.nodePath, request.loopbackPorts ?? [], request.command));
    } else {
      args.push(...request.command);
    }
    return args;
  }

  /**
   * The loopback forwarder runs the host's node inside; when that node is not under a system
   * folder (nvm, a tarball under /opt or a home), its installation is mounted read-only, alone.
   */
  private nodeMounts(bridge: LoopbackBridge | undefined): Mount[] {
    if (bridge === undefined) return [];
    const top = this.nodePath.split("/")[1] ?? "";
    if (isSystemFolder(top)) return [];
    const prefix = posix.dirname(posix.dirname(this.nodePath));
    return [{ hostPath: prefix, sandboxPath: prefix, readOnly: true }];
  }

  private environment(request: SandboxExecRequest): Record<string, string> {
    // A fresh, small environment: the host's variables (API keys, tokens) do not leak in.
    return {
      PATH:
        pythonAlias() === undefined
          ? sandboxPath(process.env.PATH, request)
          : `${sandboxPath(process.env.PATH, request)}:${SHIM_FOLDER}`,
      HOME: "/tmp",
      TMPDIR: "/tmp",
      LANG: "C.UTF-8",
      SKILLSMITH_WORKSPACE: normalizeMountPath(request.workspaceMountPath),
      ...request.env,
    };
  }
}

/** The seccomp program every sandbox gets (undefined on an architecture it does not know). */
const KEYRING_FILTER = keyringSeccompProgram();

/** Where the sandbox's own command aliases live (on its private /run). */
const SHIM_FOLDER = "/run/skillsmith-bin";

/** The system python3 to alias as `python`, when the system folders have no `python` itself. */
function pythonAlias(): string | undefined {
  const systemPath = DEFAULT_PATH;
  if (findOnPath("python", systemPath) !== null) return undefined;
  return findOnPath("python3", systemPath) ?? undefined;
}

function isSystemFolder(top: string): boolean {
  return (SYSTEM_FOLDERS as readonly string[]).includes(top);
}

/**
 * The caller's PATH without the folders the sandbox does not show (pyenv shims and cargo under a
 * home folder, a checkout's node_modules/.bin): a PATH entry into a hidden folder would make
 * `python3` mean something else inside than outside, or nothing. What remains are system folders
 * and folders the request mounts; the default PATH when nothing remains.
 */
export function sandboxPath(hostPath: string | undefined, request: SandboxExecRequest): string {
  const mounted = [
    normalizeMountPath(request.workspaceMountPath),
    ...(request.extraMounts ?? []).map((mount) => normalizeMountPath(mount.sandboxPath)),
  ];
  const visible = (entry: string) => {
    const folder = posix.normalize(entry);
    const top = folder.split("/")[1] ?? "";
    if (isSystemFolder(top)) return true;
    return mounted.some((root) => folder === root || folder.startsWith(`${root}/`));
  };
  const kept = (hostPath ?? DEFAULT_PATH)
    .split(":")
    .filter((entry) => posix.isAbsolute(entry) && visible(entry));
  const unique = [...new Set(kept)];
  return unique.length === 0 ? DEFAULT_PATH : unique.join(":");
}

function formatBytes(bytes: number): string {
  const mebibytes = bytes / (1024 * 1024);
  return mebibytes >= 1024 ? `${mebibytes / 1024} GiB` : `${Math.round(mebibytes)} MiB`;
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
