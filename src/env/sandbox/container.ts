/**
 * The container sandbox (Docker or Podman through the Docker Engine API): one fresh container per
 * command, limited and labelled, with the workspace, requested mounts and the loopback socket.
 *
 * About 590 lines, one class: creating, attaching, limiting, timing out and removing a container
 * are one lifecycle whose cleanup must run in one `finally`; image building is in
 * `image-build.ts`, environment images in `dockerfile.ts`.
 */
import { randomBytes } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type Docker from "dockerode";
import { InfrastructureError, InputError } from "../../core/errors.js";
import { runProcess } from "../../core/process.js";
import { readSystemFile } from "../system-file.js";
import {
  CONTEXT_WORKSPACE_FOLDER,
  DOCKERFILE_NAME,
  environmentKey,
  generateDockerfile,
} from "./dockerfile.js";
import { connectDocker } from "./engine.js";
import { SandboxUnavailableError } from "./errors.js";
import { buildImageFromTar, imageId, packBuildContext } from "./image-build.js";
import {
  behindForwarder,
  LOOPBACK_SOCKET_DIRECTORY,
  type LoopbackBridge,
  startLoopbackBridge,
} from "./loopback.js";
import { normalizeMountPath } from "./mount-path.js";
import { handOver, imageUser, isRootUser, type UserIds, userIdsInImage } from "./run-as.js";
import {
  type LimitEnforcement,
  type LimitHit,
  type SandboxExecRequest,
  type SandboxExecResult,
  type SandboxPrepareRequest,
  type SandboxPrepareResult,
  type SandboxV1,
  withDefaultLimits,
} from "./types.js";

// The engine connection lives in engine.ts; re-exported because callers import it from here.
export { candidateEndpoints, connectDocker, type DockerConnection } from "./engine.js";

/**
 * The `container` sandbox over the Docker Engine API (dockerode), which Docker and Podman
 * (`podman system service`) both serve. Each `exec` runs in a fresh container that is always
 * removed; the run's workspace is bind-mounted read-write at its fixed path, so whatever the
 * workload writes is already on the host when it ends (no copy out needed). Environments are
 * built once per (repository, commit, recipe) and named by a content hash.
 *
 * Why one file of ~590 lines: most of it is the `ContainerSandbox` class, whose `prepare` and
 * `exec` share its private state (engine, in-flight builds, default images) and the limit
 * wrapper's contract (`LIMITS_WRAPPER` writes what `readLimitReport` reads). What has its own
 * seam is elsewhere: the engine connection (engine.ts), image inspect/pack/build (image-build.ts),
 * Dockerfiles (dockerfile.ts), the loopback bridge (loopback.ts). The base-image bootstrap at the
 * end stays here because it is the container backend's own setup and shares its constants.
 */

export const DEFAULT_BASE_IMAGE = "localhost/skillsmith-base:bookworm";
/** Label on every container and image we create, so leftovers can be found and removed. */
export const SANDBOX_LABEL = "io.skillsmith.sandbox";
const ENVIRONMENT_REPOSITORY = "localhost/skillsmith-env";
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
const STDIN_PATH = "/run/skillsmith-stdin";
/** Where the limit report is written inside (a host folder of ours, bind-mounted). */
const LIMITS_DIRECTORY = "/run/skillsmith-limits";
/**
 * Runs the workload as a child, then copies the container's own cgroup counters (v1 and v2
 * spellings) to the report with shell builtins only: after a fork bomb no fork may succeed, and
 * the engine removes the group with the container, so the host cannot read it afterwards. The
 * shell is PID 1, so it writes last: nothing the workload left running outlives it. A workload
 * can spoil the report (it runs as the same user); that can only make its own run look limited.
 * Standard error is silenced before the report is opened, so a report that cannot be written
 * never adds a line to the workload's own output.
 */
const LIMITS_WRAPPER = `"$@"; status=$?
{ for file in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events /sys/fs/cgroup/pids/pids.events /sys/fs/cgroup/pids.events; do
  if [ -r "$file" ]; then while read -r line; do echo "$file $line"; done < "$file"; fi
done; } 2>/dev/null > ${LIMITS_DIRECTORY}/report
exit $status`;

export interface ContainerSandboxOptions {
  readonly docker: Docker;
  /** Image for `exec` requests that name none. */
  readonly defaultImage?: string;
  /** Fallback base when a recipe's base image is not present locally. */
  readonly fallbackBaseImage?: string;
}

export class ContainerSandbox implements SandboxV1 {
  readonly specificationVersion = "v1" as const;
  readonly kind = "container" as const;
  readonly docker: Docker;
  private readonly defaultImage: string;
  private readonly fallbackBaseImage: string;
  /** Builds in flight by tag, so concurrent prepares of the same environment build it once. */
  private readonly building = new Map<string, Promise<SandboxPrepareResult>>();
  /** Numeric ids of a (image, user), asked of the image once. */
  private readonly userIds = new Map<string, Promise<UserIds>>();

  constructor(options: ContainerSandboxOptions) {
    this.docker = options.docker;
    this.defaultImage = options.defaultImage ?? DEFAULT_BASE_IMAGE;
    this.fallbackBaseImage = options.fallbackBaseImage ?? DEFAULT_BASE_IMAGE;
  }

  static async connect(
    options: Omit<ContainerSandboxOptions, "docker"> & { readonly env?: NodeJS.ProcessEnv } = {},
  ): Promise<ContainerSandbox> {
    const { docker } = await connectDocker(options.env === undefined ? {} : { env: options.env });
    return new ContainerSandbox({ ...options, docker });
  }

  limitEnforcement(): LimitEnforcement {
    return {
      mechanism: "container-engine",
      memory: true,
      processes: true,
      cpu: true,
      detectsHits: true,
      notes: [
        "the engine's cgroup caps the whole container (Memory = MemorySwap, PidsLimit, NanoCpus)",
        "hits are read from the container's own cgroup counters just before it exits",
      ],
    };
  }

  /** The local image's id, or undefined when the engine has none (see `image-build.ts`). */
  imageId(name: string): Promise<string | undefined> {
    return imageId(this.docker, name);
  }

  async prepare(request: SandboxPrepareRequest): Promise<SandboxPrepareResult> {
    const started = performance.now();
    const notes: string[] = [];
    let baseImage = request.recipe.baseImage ?? this.fallbackBaseImage;
    let baseImageId = await this.imageId(baseImage);
    if (baseImageId === undefined && baseImage !== this.fallbackBaseImage) {
      notes.push(
        `base image ${baseImage} is not present locally (no registry is used); fell back to ${this.fallbackBaseImage}`,
      );
      baseImage = this.fallbackBaseImage;
      baseImageId = await this.imageId(baseImage);
    }
    if (baseImageId === undefined) {
      throw new SandboxUnavailableError(
        "env.container-base-image-missing",
        `base image ${baseImage} is not present; build it with scripts/ci-containers.sh or buildBaseImage()`,
        { data: { baseImage } },
      );
    }
    const key = environmentKey({
      cacheKey: request.cacheKey,
      baseImageId,
      workspaceMountPath: request.workspaceMountPath,
      commands: request.recipe.commands,
      ...(request.recipe.env === undefined ? {} : { env: request.recipe.env }),
    });
    const tag = `${ENVIRONMENT_REPOSITORY}:${key.slice(0, 24)}`;
    const inFlight = this.building.get(tag);
    if (inFlight !== undefined) return inFlight;
    const work = (async (): Promise<SandboxPrepareResult> => {
      if ((await this.imageId(tag)) !== undefined) {
        return {
          image: tag,
          baseImage,
          reused: true,
          notes,
          durationMs: performance.now() - started,
        };
      }
      const dockerfile = generateDockerfile({
        baseImage,
        workspaceMountPath: request.workspaceMountPath,
        commands: request.recipe.commands,
        ...(request.recipe.env === undefined ? {} : { env: request.recipe.env }),
        labels: { [SANDBOX_LABEL]: "environment", [`${SANDBOX_LABEL}.key`]: key },
      });
      await this.build(tag, dockerfile, request);
      notes.push(
        `built ${tag} from ${baseImage} with ${request.recipe.commands.length} setup command(s)`,
      );
      return {
        image: tag,
        baseImage,
        reused: false,
        notes,
        durationMs: performance.now() - started,
      };
    })();
    this.building.set(tag, work);
    try {
      return await work;
    } finally {
      this.building.delete(tag);
    }
  }

  private async build(
    tag: string,
    dockerfile: string,
    request: SandboxPrepareRequest,
  ): Promise<void> {
    const folder = await mkdtemp(join(tmpdir(), "skillsmith-build-"));
    try {
      await writeFile(join(folder, DOCKERFILE_NAME), dockerfile);
      const tarPath = join(folder, "context.tar");
      // The Dockerfile at the top, the workspace renamed to `workspace/` beside it.
      const tarFailure = await packBuildContext(tarPath, [
        "-C",
        folder,
        DOCKERFILE_NAME,
        "-C",
        request.workspace,
        `--transform=s,^\\.,${CONTEXT_WORKSPACE_FOLDER},`,
        ".",
      ]);
      if (tarFailure !== undefined) {
        throw new InfrastructureError("env.container-context-failed", `tar failed: ${tarFailure}`, {
          data: { workspace: request.workspace },
        });
      }
      const network = request.network ?? "host";
      const { failure, log } = await buildImageFromTar(
        this.docker,
        tarPath,
        {
          t: tag,
          dockerfile: DOCKERFILE_NAME,
          rm: true,
          forcerm: true,
          networkmode: network === "host" ? "host" : "none",
          labels: { [SANDBOX_LABEL]: "environment" },
          ...(request.signal === undefined ? {} : { abortSignal: request.signal }),
        },
        request.onLog,
      );
      if (failure !== undefined) {
        throw new InfrastructureError(
          "env.container-build-failed",
          `building ${tag} failed: ${failure}`,
          { data: { tag, dockerfile, log: log.slice(-8_000) } },
        );
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
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
    const mountPath = normalizeMountPath(request.workspaceMountPath);
    const ports = request.network === "loopback" ? (request.loopbackPorts ?? []) : [];
    let bridge: LoopbackBridge | undefined;
    let container: Docker.Container | undefined;
    let inputFolder: string | undefined;
    let limitsFolder: string | undefined;
    try {
      if (ports.length > 0) bridge = await startLoopbackBridge(ports);
      limitsFolder = await mkdtemp(join(tmpdir(), "skillsmith-limits-"));
      const image = request.image ?? this.defaultImage;
      await this.handOverMounts(image, request, [
        limitsFolder,
        ...(bridge === undefined ? [] : [bridge.directory]),
      ]);
      const binds = [
        `${limitsFolder}:${LIMITS_DIRECTORY}:rw`,
        `${request.workspace}:${mountPath}:rw`,
        ...(request.extraMounts ?? []).map(
          (mount) => `${mount.hostPath}:${mount.sandboxPath}:${mount.readOnly ? "ro" : "rw"}`,
        ),
        ...(bridge === undefined ? [] : [`${bridge.directory}:${LOOPBACK_SOCKET_DIRECTORY}:ro`]),
      ];
      let command =
        bridge === undefined
          ? [...request.command]
          : // The image's own node runs the forwarder (our base image has it).
            behindForwarder("node", ports, request.command);
      if (request.input !== undefined) {
        // Input goes in as a read-only file rather than over a hijacked attach: Podman's API
        // takes the attach request's body as stdin, and docker-modem sends its options there.
        inputFolder = await mkdtemp(join(tmpdir(), "skillsmith-stdin-"));
        await writeFile(join(inputFolder, "stdin"), request.input);
        binds.push(`${join(inputFolder, "stdin")}:${STDIN_PATH}:ro`);
        command = ["/bin/sh", "-c", `exec "$@" < ${STDIN_PATH}`, "sh", ...command];
      }
      command = ["/bin/sh", "-c", LIMITS_WRAPPER, "sh", ...command];
      // Every container is limited: the request's numbers, else the defaults.
      const { memoryBytes, maxProcesses, cpus } = withDefaultLimits(request.limits);
      const environment = {
        HOME: "/tmp",
        LANG: "C.UTF-8",
        SKILLSMITH_WORKSPACE: mountPath,
        ...request.env,
      };
      container = await engineCall(`create a container from ${image}`, () =>
        this.docker.createContainer({
          name: `skillsmith-${randomBytes(6).toString("hex")}`,
          Image: image,
          ...(request.user === undefined || request.user === "" ? {} : { User: request.user }),
          Cmd: command,
          Entrypoint: [],
          WorkingDir: request.cwd ?? mountPath,
          Env: Object.entries(environment).map(([name, value]) => `${name}=${value}`),
          Labels: { [SANDBOX_LABEL]: "exec" },
          Tty: false,
          AttachStdout: true,
          AttachStderr: true,
          AttachStdin: false,
          OpenStdin: false,
          HostConfig: {
            Binds: binds,
            NetworkMode: request.network === "host" ? "host" : "none",
            Memory: memoryBytes,
            MemorySwap: memoryBytes,
            PidsLimit: maxProcesses,
            ...(cpus === undefined ? {} : { NanoCpus: Math.round(cpus * 1e9) }),
          },
        }),
      );
      const attached = await container.attach({
        stream: true,
        stdout: true,
        stderr: true,
      });
      const output = collectOutput(this.docker, attached, request);
      const created = container;
      await engineCall("start the container", () => created.start());

      let timedOut = false;
      const kill = () => {
        // A container that already exited refuses the kill; `remove({ force })` below ends it
        // whatever happened here.
        container?.kill({ signal: "SIGKILL" }).catch(() => undefined);
      };
      const timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, request.limits.timeoutMs);
      request.signal?.addEventListener("abort", kill, { once: true });
      if (request.signal?.aborted === true) kill();
      try {
        await container.wait();
      } finally {
        clearTimeout(timer);
        request.signal?.removeEventListener("abort", kill);
      }
      // The attach stream may still carry the last bytes after the exit is reported.
      await Promise.race([output.done, new Promise((resolve) => setTimeout(resolve, 2_000))]);
      const state = (await container.inspect()).State;
      const counters = await readLimitReport(join(limitsFolder, "report"));
      const oomKills = Math.max(counters.oomKills, state.OOMKilled ? 1 : 0);
      const limitHit: LimitHit | undefined =
        oomKills > 0
          ? {
              limit: "memory",
              detail: `memory limit of ${Math.round(memoryBytes / (1024 * 1024))} MiB reached: the OOM killer stopped ${oomKills} process(es)`,
            }
          : counters.processLimitHits > 0
            ? {
                limit: "processes",
                detail: `process limit of ${maxProcesses} reached: ${counters.processLimitHits} fork(s) refused`,
              }
            : timedOut
              ? {
                  limit: "time",
                  detail: `wall-time limit of ${request.limits.timeoutMs} ms reached: the container was killed`,
                }
              : undefined;
      return {
        exitCode: state.ExitCode,
        stdout: output.stdout(),
        stderr: output.stderr(),
        timedOut,
        oomKilled: oomKills > 0,
        durationMs: performance.now() - started,
        ...(limitHit === undefined ? {} : { limitHit }),
      };
    } finally {
      // Cleanup in `finally`: a failed removal (engine gone) must not replace the run's own
      // result or error; leftovers carry SANDBOX_LABEL and can be swept by label.
      await container?.remove({ force: true, v: true }).catch(() => undefined);
      await bridge?.close();
      if (inputFolder !== undefined) await rm(inputFolder, { recursive: true, force: true });
      if (limitsFolder !== undefined) await rm(limitsFolder, { recursive: true, force: true });
    }
  }

  /**
   * Hand the workspace, the limits folder and every writable mount to the user the container
   * runs as, when that is not root: the folders are ours, created by this (root) process, and an
   * image ending in `USER app` could otherwise write none of them. The user's ids are asked of
   * the image once per (image, user).
   */
  private async handOverMounts(
    image: string,
    request: SandboxExecRequest,
    ours: readonly string[],
  ): Promise<void> {
    const user =
      request.user !== undefined && request.user !== ""
        ? request.user
        : await engineCall(`inspect the image ${image}`, () => imageUser(this.docker, image));
    if (isRootUser(user)) return;
    const key = `${image}\0${user}`;
    let ids = this.userIds.get(key);
    if (ids === undefined) {
      ids = userIdsInImage(this.docker, image, user);
      this.userIds.set(key, ids);
      ids.catch(() => this.userIds.delete(key));
    }
    const owner = await ids;
    // The loopback bridge's socket too: connecting to a Unix socket needs write permission.
    for (const folder of ours) await handOver(folder, owner);
    await handOver(request.workspace, owner);
    for (const mount of request.extraMounts ?? []) {
      if (!mount.readOnly) await handOver(mount.hostPath, owner);
    }
  }
}

/**
 * The OOM kills and refused forks in the report `LIMITS_WRAPPER` wrote (zeros when absent). A
 * report that is there but unreadable is an infrastructure error naming it, not zeros.
 */
export async function readLimitReport(
  path: string,
): Promise<{ oomKills: number; processLimitHits: number }> {
  const text = (await readSystemFile(path)) ?? "";
  let oomKills = 0;
  let processLimitHits = 0;
  for (const line of text.split("\n")) {
    const [file = "", key = "", value = ""] = line.split(" ");
    const count = Number(value);
    if (!Number.isFinite(count)) continue;
    if (file.includes("memory") && key === "oom_kill") oomKills = Math.max(oomKills, count);
    if (file.includes("pids") && key === "max")
      processLimitHits = Math.max(processLimitHits, count);
  }
  return { oomKills, processLimitHits };
}

/**
 * Run one Engine API call, turning its failure into a typed error: a missing image is the
 * caller's to fix (prepare it, or build the base image); anything else is the engine's.
 */
async function engineCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const status = (error as { statusCode?: unknown }).statusCode;
    const detail = error instanceof Error ? error.message : String(error);
    if (status === 404 && what.startsWith("create")) {
      throw new SandboxUnavailableError(
        "env.container-image-missing",
        `cannot ${what}: the image is not present (${detail}); prepare it first, or build the base image with scripts/ci-containers.sh`,
        { cause: error },
      );
    }
    throw new InfrastructureError("env.container-engine-failed", `cannot ${what}: ${detail}`, {
      cause: error,
      retryable: true,
    });
  }
}

function collectOutput(
  docker: Docker,
  attached: NodeJS.ReadWriteStream,
  request: SandboxExecRequest,
): { stdout(): string; stderr(): string; done: Promise<void> } {
  const stdoutStream = new PassThrough();
  const stderrStream = new PassThrough();
  let stdout = "";
  let stderr = "";
  stdoutStream.setEncoding("utf8");
  stderrStream.setEncoding("utf8");
  stdoutStream.on("data", (chunk: string) => {
    if (stdout.length < MAX_OUTPUT_BYTES) stdout += chunk;
    request.onStdout?.(chunk);
  });
  stderrStream.on("data", (chunk: string) => {
    if (stderr.length < MAX_OUTPUT_BYTES) stderr += chunk;
    request.onStderr?.(chunk);
  });
  docker.modem.demuxStream(attached, stdoutStream, stderrStream);
  const done = new Promise<void>((resolve) => {
    attached.on("end", () => resolve());
    attached.on("close", () => resolve());
    attached.on("error", () => resolve());
  });
  return {
    stdout: () => stdout.slice(0, MAX_OUTPUT_BYTES),
    stderr: () => stderr.slice(0, MAX_OUTPUT_BYTES),
    done,
  };
}

export interface BuildBaseImageOptions {
  readonly docker: Docker;
  readonly tag?: string;
  readonly suite?: string;
  readonly mirror?: string;
  readonly packages?: readonly string[];
  readonly onLog?: (line: string) => void;
}

/**
 * Build the default base image without any registry: a minimal Debian from debootstrap with
 * python3 + pytest, node, git and CA certificates, imported through the Engine API. Needs root
 * (debootstrap) and takes a few minutes; `scripts/ci-containers.sh` does the same for CI.
 */
export async function buildBaseImage(options: BuildBaseImageOptions): Promise<string> {
  const tag = options.tag ?? DEFAULT_BASE_IMAGE;
  const packages = options.packages ?? [
    "python3",
    "python3-pytest",
    "nodejs",
    "git",
    "ca-certificates",
  ];
  const root = await mkdtemp(join(tmpdir(), "skillsmith-base-"));
  try {
    const bootstrap = await runProcess(
      "debootstrap",
      [
        "--variant=minbase",
        `--include=${packages.join(",")}`,
        options.suite ?? "bookworm",
        join(root, "rootfs"),
        options.mirror ?? "http://deb.debian.org/debian",
      ],
      {
        ...(options.onLog === undefined
          ? {}
          : { onStdout: options.onLog, onStderr: options.onLog }),
      },
    );
    if (bootstrap.exitCode !== 0) {
      throw new InfrastructureError(
        "env.container-base-image-failed",
        `debootstrap failed (exit ${bootstrap.exitCode}): ${
          bootstrap.spawnError?.message ?? bootstrap.stderr.trim().slice(-2_000)
        }`,
      );
    }
    await importRootFilesystem(options.docker, join(root, "rootfs"), tag);
    return tag;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * Import a root file system folder as an image through the Engine API (`POST /images/create
 * ?fromSrc=-`), the registry-free way to get a base image. Returns once the image exists.
 */
export async function importRootFilesystem(
  docker: Docker,
  folder: string,
  tag: string,
): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), "skillsmith-import-"));
  try {
    const tarPath = join(scratch, "rootfs.tar");
    const tarFailure = await packBuildContext(tarPath, ["-C", folder, "."]);
    if (tarFailure !== undefined) {
      throw new InfrastructureError(
        "env.container-base-image-failed",
        `tar failed: ${tarFailure}`,
        {
          data: { folder },
        },
      );
    }
    // `repo` carrying the tag is what both engines honour (Podman ignores a separate `tag`).
    const stream = await docker.importImage(createReadStream(tarPath), { repo: tag });
    await new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(stream, (error) => (error === null ? resolve() : reject(error)));
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
