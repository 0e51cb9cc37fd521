import { createReadStream } from "node:fs";
import type Docker from "dockerode";
import { InfrastructureError } from "../../core/errors.js";
import { runProcess } from "../../core/process.js";

/**
 * The image machinery the environment sandbox (`container.ts`) and task images
 * (`task-image.ts`) share: is an image there, pack a build context, build and follow the log.
 */

/**
 * The id of a local image, or undefined when the engine says it has none (HTTP 404). Any other
 * failure (engine unreachable, a 500) is an `InfrastructureError`: an engine that does not
 * answer must not read as "the image is missing", which would send the caller to rebuild or
 * fall back to another base image.
 */
export async function imageId(docker: Docker, name: string): Promise<string | undefined> {
  try {
    return (await docker.getImage(name).inspect()).Id;
  } catch (error) {
    if ((error as { statusCode?: unknown }).statusCode === 404) return undefined;
    throw new InfrastructureError(
      "env.container-engine-failed",
      `cannot inspect image ${name}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error, retryable: true, data: { image: name } },
    );
  }
}

/**
 * Pack a build context with GNU tar: `members` are tar's arguments after `-c -f <tarPath>`
 * (`-C <folder> <entry>…` groups, transforms). Returns tar's stderr when it failed, undefined
 * when the archive was written; the caller names its own error.
 */
export async function packBuildContext(
  tarPath: string,
  members: readonly string[],
): Promise<string | undefined> {
  const tar = await runProcess("tar", ["-c", "-f", tarPath, ...members]);
  return tar.exitCode === 0 ? undefined : tar.stderr.trim();
}

export interface ImageBuildOutcome {
  /** Why the build failed (the engine's error, or "no image was produced"); undefined when built. */
  readonly failure: string | undefined;
  /** Everything the build printed, in order. */
  readonly log: string;
}

/**
 * Build `options.t` from the tar at `tarPath`, passing each log line to `onLog`, and check the
 * image exists afterwards (an engine may end a failed build without an error event). A failed
 * stream (abort, engine gone) rejects; a build error is returned in `failure`.
 */
export async function buildImageFromTar(
  docker: Docker,
  tarPath: string,
  options: Docker.ImageBuildOptions & { readonly t: string },
  onLog?: (text: string) => void,
): Promise<ImageBuildOutcome> {
  const stream = await docker.buildImage(createReadStream(tarPath), options);
  const log: string[] = [];
  const failure = await new Promise<string | undefined>((resolve, reject) => {
    let message: string | undefined;
    docker.modem.followProgress(
      stream,
      (error) => (error === null ? resolve(message) : reject(error)),
      (event: { stream?: string; error?: string; errorDetail?: { message?: string } }) => {
        if (typeof event.stream === "string") {
          log.push(event.stream);
          onLog?.(event.stream);
        }
        if (event.error !== undefined) message = event.errorDetail?.message ?? event.error;
      },
    );
  });
  const produced = failure === undefined && (await imageId(docker, options.t)) !== undefined;
  return {
    failure: failure ?? (produced ? undefined : "no image was produced"),
    log: log.join(""),
  };
}
