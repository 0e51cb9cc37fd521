import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { pipeline } from "node:stream/promises";
import type Docker from "dockerode";
import { InfrastructureError, UsageError } from "../../core/errors.js";
import { runProcess } from "../../core/process.js";
import { treeDigest } from "../workspace/digest.js";
import { SANDBOX_LABEL } from "./container.js";
import { buildImageFromTar, imageId, packBuildContext } from "./image-build.js";

/**
 * Images built from a task's own Dockerfile and build context (Harbor `environment/`), through
 * the Docker Engine API, once per content hash: the context's tree digest, the Dockerfile as
 * built (after base-image mapping) and the ids of the images it starts from. No registry is
 * used: every `FROM` image must be present locally, or be mapped to one that is
 * (`--base-image ubuntu:24.04=localhost/skillsmith-base:bookworm`).
 */

const TASK_IMAGE_REPOSITORY = "localhost/skillsmith-task";
/** Name of the rewritten Dockerfile inside the build context (beside the task's own). */
const BUILT_DOCKERFILE = ".skillsmith.Dockerfile";
/** Harbor's default for `build_timeout_sec`. */
export const DEFAULT_BUILD_TIMEOUT_SECONDS = 600;

/** `from=to` pairs: a `FROM` image and the local image to build from instead. */
export type BaseImageMap = Readonly<Record<string, string>>;

/** Parse `--base-image` values (`from=to`); a malformed one is the user's mistake. */
export function parseBaseImageMap(values: readonly string[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf("=");
    const from = value.slice(0, at).trim();
    const to = value.slice(at + 1).trim();
    if (at <= 0 || from === "" || to === "") {
      throw new UsageError(
        "env.base-image-invalid",
        `--base-image expects <image>=<local image>, e.g. ubuntu:24.04=localhost/skillsmith-base:bookworm (got "${value}")`,
      );
    }
    map[from] = to;
  }
  return map;
}

export interface FromLine {
  /** 0-based line index in the Dockerfile. */
  readonly line: number;
  readonly image: string;
  /** `AS <name>`, when the stage is named. */
  readonly stage?: string;
}

/**
 * The `FROM` lines of a Dockerfile. A `FROM` naming an earlier stage is not an image to get,
 * and neither is `scratch`; `--platform=` flags are skipped. Build arguments in the image name
 * (`FROM ${BASE}`) are left as written (they then name no local image and are reported).
 */
export function fromLines(dockerfile: string): FromLine[] {
  const lines: FromLine[] = [];
  dockerfile.split("\n").forEach((text, line) => {
    const match = /^\s*FROM\s+(.*)$/i.exec(text);
    if (match === null) return;
    const words = (match[1] ?? "").trim().split(/\s+/);
    const flagsSkipped = words.filter((word) => !word.startsWith("--"));
    const image = flagsSkipped[0];
    if (image === undefined || image === "") return;
    const stage =
      flagsSkipped[1]?.toLowerCase() === "as" && flagsSkipped[2] !== undefined
        ? flagsSkipped[2]
        : undefined;
    lines.push({ line, image, ...(stage === undefined ? {} : { stage }) });
  });
  return lines;
}

/** The images a Dockerfile pulls from (not earlier stages, not `scratch`), in order. */
export function externalImages(dockerfile: string): string[] {
  const stages = new Set<string>();
  const images: string[] = [];
  for (const from of fromLines(dockerfile)) {
    if (!stages.has(from.image.toLowerCase()) && from.image !== "scratch") images.push(from.image);
    if (from.stage !== undefined) stages.add(from.stage.toLowerCase());
  }
  return [...new Set(images)];
}

/** The Dockerfile with each external `FROM` image replaced by its mapping, and what was used. */
export function mapBaseImages(
  dockerfile: string,
  map: BaseImageMap,
): { text: string; used: Record<string, string> } {
  const lines = dockerfile.split("\n");
  const used: Record<string, string> = {};
  const stages = new Set<string>();
  for (const from of fromLines(dockerfile)) {
    const target = map[from.image];
    if (target !== undefined && !stages.has(from.image.toLowerCase())) {
      const original = lines[from.line] ?? "";
      // Replace the image word only, keeping flags and `AS name`.
      lines[from.line] = original.replace(
        new RegExp(`(\\s)${escapeRegExp(from.image)}(\\s|$)`),
        `$1${target}$2`,
      );
      used[from.image] = target;
    }
    if (from.stage !== undefined) stages.add(from.stage.toLowerCase());
  }
  return { text: lines.join("\n"), used };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

export interface TaskImageRequest {
  readonly docker: Docker;
  /** The build context folder (Harbor: the task's `environment/`). */
  readonly contextDir: string;
  /** The Dockerfile's text (already without skill copies). */
  readonly dockerfile: string;
  /** Shown in errors: which task this is (e.g. the skill id). */
  readonly taskName: string;
  readonly baseImages?: BaseImageMap;
  /** Build-time network: Harbor builds with the network; `none` keeps builds offline. */
  readonly network?: "host" | "none";
  readonly buildTimeoutMs?: number;
  readonly onLog?: (line: string) => void;
}

export interface TaskImage {
  readonly image: string;
  /** Content hash naming the image (also its tag's suffix). */
  readonly key: string;
  /** The images the Dockerfile starts from, as written. */
  readonly fromImages: readonly string[];
  /** The `--base-image` mappings that applied. */
  readonly mappedBaseImages: Readonly<Record<string, string>>;
  readonly reused: boolean;
  readonly durationMs: number;
}

const building = new Map<string, Promise<TaskImage>>();
/**
 * Builds that failed in this process, by tag: the same context and base images fail the same
 * way, so the runner's retries (one per run and attempt) get the first failure back at once
 * instead of rebuilding for minutes each. A new process builds again.
 */
const failedBuilds = new Map<string, unknown>();

/**
 * Build (or reuse) the image of a task's environment. Throws a `UsageError` naming every `FROM`
 * image that is not present locally (no registry is used), with the `--base-image` flag that
 * maps it; a failed build is an `InfrastructureError` with the tail of the build log.
 */
export async function buildTaskImage(request: TaskImageRequest): Promise<TaskImage> {
  const started = performance.now();
  const { docker } = request;
  const mapping = request.baseImages ?? {};
  const { text, used } = mapBaseImages(request.dockerfile, mapping);
  const fromImages = externalImages(request.dockerfile);
  const builtFrom = externalImages(text);
  const ids: string[] = [];
  const missing: string[] = [];
  for (const image of builtFrom) {
    const id = await imageId(docker, image);
    if (id === undefined) missing.push(image);
    else ids.push(id);
  }
  if (missing.length > 0) {
    const unmapped = missing.filter((image) => !Object.values(used).includes(image));
    const hint =
      unmapped.length > 0
        ? `; map ${unmapped.length === 1 ? "it" : "each"} to a local image with ${unmapped.map((image) => `--base-image ${image}=localhost/skillsmith-base:bookworm`).join(" ")}`
        : "; build or load the mapped image first";
    throw new UsageError(
      "env.task-base-image-missing",
      `the environment/Dockerfile of task ${request.taskName} starts FROM ${missing.join(", ")}, which ${missing.length === 1 ? "is" : "are"} not present locally, and no registry is used${hint}`,
      { data: { task: request.taskName, missing, mapped: used } },
    );
  }
  const key = createHash("sha256")
    .update(
      JSON.stringify([
        "skillsmith-task-image-v1",
        await treeDigest(request.contextDir),
        text,
        ids,
        request.network ?? "host",
      ]),
    )
    .digest("hex");
  const tag = `${TASK_IMAGE_REPOSITORY}:${key.slice(0, 24)}`;
  const inFlight = building.get(tag);
  if (inFlight !== undefined) return inFlight;
  if (failedBuilds.has(tag)) throw failedBuilds.get(tag);
  const work = (async (): Promise<TaskImage> => {
    const result = (reused: boolean): TaskImage => ({
      image: tag,
      key,
      fromImages,
      mappedBaseImages: used,
      reused,
      durationMs: performance.now() - started,
    });
    if ((await imageId(docker, tag)) !== undefined) return result(true);
    try {
      await buildFromContext(request, text, tag, key);
    } catch (error) {
      failedBuilds.set(tag, error);
      throw error;
    }
    return result(false);
  })();
  building.set(tag, work);
  try {
    return await work;
  } finally {
    building.delete(tag);
  }
}

async function buildFromContext(
  request: TaskImageRequest,
  dockerfile: string,
  tag: string,
  key: string,
): Promise<void> {
  const { docker } = request;
  const folder = await mkdtemp(join(tmpdir(), "skillsmith-task-build-"));
  try {
    await writeFile(join(folder, BUILT_DOCKERFILE), dockerfile);
    const tarPath = join(folder, "context.tar");
    // The context as the task ships it, plus the rewritten Dockerfile beside it.
    const tarFailure = await packBuildContext(tarPath, [
      "-C",
      request.contextDir,
      ".",
      "-C",
      folder,
      BUILT_DOCKERFILE,
    ]);
    if (tarFailure !== undefined) {
      throw new InfrastructureError(
        "env.task-context-failed",
        `tar of ${request.contextDir} failed: ${tarFailure}`,
      );
    }
    const controller = new AbortController();
    const timeoutMs = request.buildTimeoutMs ?? DEFAULT_BUILD_TIMEOUT_SECONDS * 1000;
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const { failure, log } = await buildImageFromTar(
        docker,
        tarPath,
        {
          t: tag,
          dockerfile: BUILT_DOCKERFILE,
          rm: true,
          forcerm: true,
          // No pull is asked for: every FROM image was checked to be present locally.
          networkmode: request.network === "none" ? "none" : "host",
          labels: { [SANDBOX_LABEL]: "task-environment", [`${SANDBOX_LABEL}.key`]: key },
          abortSignal: controller.signal,
        },
        request.onLog,
      );
      if (failure !== undefined) {
        throw new InfrastructureError(
          "env.task-build-failed",
          `building the environment of task ${request.taskName} failed: ${failure}; last build output: ${log.slice(-1_500).trim()}`,
          { data: { tag, log: log.slice(-8_000) } },
        );
      }
    } catch (error) {
      if (controller.signal.aborted) {
        throw new InfrastructureError(
          "env.task-build-timeout",
          `building the environment of task ${request.taskName} took longer than ${Math.round(timeoutMs / 1000)} s (build_timeout_sec)`,
          { cause: error },
        );
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * Copy a folder of an image (the task's working directory) to an empty host folder, through a
 * created-but-never-started container: the run's workspace starts as the image has it. A
 * folder the image does not have gives an empty workspace.
 */
export async function copyFolderFromImage(
  docker: Docker,
  image: string,
  folder: string,
  destination: string,
): Promise<void> {
  await mkdir(destination, { recursive: true });
  const container = await docker.createContainer({
    Image: image,
    Cmd: ["true"],
    Entrypoint: [],
    Labels: { [SANDBOX_LABEL]: "copy" },
  });
  const scratch = await mkdtemp(join(tmpdir(), "skillsmith-image-copy-"));
  try {
    let archive: NodeJS.ReadableStream;
    try {
      archive = await container.getArchive({ path: posix.join(folder, ".") });
    } catch (error) {
      if ((error as { statusCode?: unknown }).statusCode === 404) return;
      throw error;
    }
    const tarPath = join(scratch, "folder.tar");
    await pipeline(archive, createWriteStream(tarPath));
    // The archive holds the folder under its own name (`./` or `<name>/`): strip that level.
    const extract = await runProcess("tar", [
      "-x",
      "-f",
      tarPath,
      "-C",
      destination,
      "--strip-components=1",
      "--no-same-owner",
    ]);
    if (extract.exitCode !== 0) {
      throw new InfrastructureError(
        "env.task-workdir-copy-failed",
        `cannot copy ${folder} out of ${image}: ${extract.stderr.trim()}`,
      );
    }
  } finally {
    // Best-effort: the container never ran, and a leftover is labelled and harmless; a failure
    // to remove it must not hide the copy's own error.
    await container.remove({ force: true }).catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
}
