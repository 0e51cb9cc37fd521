import { existsSync } from "node:fs";
import type Docker from "dockerode";
import { requireOptional } from "../../core/optional.js";
import { SandboxUnavailableError } from "./errors.js";

/**
 * Finding a Docker Engine API that answers (Docker's socket, Podman's rootful or rootless one,
 * or `DOCKER_HOST`), for the container sandbox and anything else that talks to the engine.
 */

export interface DockerConnection {
  readonly docker: Docker;
  /** What answered, e.g. `unix:///run/podman/podman.sock`. */
  readonly endpoint: string;
}

/**
 * Endpoints to try, in order: `DOCKER_HOST` (unix:// or tcp://), Docker's socket, Podman's
 * rootful socket, then Podman's rootless one for the current user.
 */
export function candidateEndpoints(env: NodeJS.ProcessEnv = process.env): string[] {
  const endpoints: string[] = [];
  if (env.DOCKER_HOST !== undefined && env.DOCKER_HOST !== "") endpoints.push(env.DOCKER_HOST);
  endpoints.push("unix:///var/run/docker.sock", "unix:///run/podman/podman.sock");
  const uid = process.getuid?.();
  if (uid !== undefined && uid !== 0) endpoints.push(`unix:///run/user/${uid}/podman/podman.sock`);
  return [...new Set(endpoints)];
}

/**
 * dockerode, loaded on first connection rather than with this module: it costs ~0.4 s of
 * start-up that only the container sandbox needs, and an optional peer dependency. CommonJS
 * (`export =`), hence `require`.
 */
function dockerode(): typeof Docker {
  return requireOptional<typeof Docker>("dockerode", "the container sandbox");
}

function dockerFor(endpoint: string): Docker {
  const Docker = dockerode();
  if (endpoint.startsWith("unix://"))
    return new Docker({ socketPath: endpoint.slice("unix://".length) });
  const url = new URL(endpoint.replace(/^tcp:/, "http:"));
  return new Docker({
    host: url.hostname,
    port: url.port === "" ? 2375 : Number(url.port),
    protocol: url.protocol === "https:" ? "https" : "http",
  });
}

async function answers(docker: Docker, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      docker.ping().then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
  } catch {
    // A probe of one candidate endpoint: any failure means "not this one", and the caller
    // names every endpoint it tried when none answers.
    return false;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** The first endpoint whose `/_ping` answers, or a `SandboxUnavailableError` naming all tried. */
export async function connectDocker(
  options: {
    readonly env?: NodeJS.ProcessEnv;
    readonly timeoutMs?: number;
    /** Replace the default candidates (see `candidateEndpoints`). */
    readonly endpoints?: readonly string[];
  } = {},
): Promise<DockerConnection> {
  const tried: string[] = [];
  for (const endpoint of options.endpoints ?? candidateEndpoints(options.env)) {
    tried.push(endpoint);
    if (endpoint.startsWith("unix://") && !existsSync(endpoint.slice("unix://".length))) continue;
    const docker = dockerFor(endpoint);
    if (await answers(docker, options.timeoutMs ?? 3_000)) return { docker, endpoint };
  }
  throw new SandboxUnavailableError(
    "env.container-engine-unreachable",
    `no Docker/Podman API answered (tried ${tried.join(", ")}). Start Docker, or Podman's API ` +
      "from / with `cd / && podman system service --time=0 unix:///run/podman/podman.sock &` " +
      "(conmon writes an `oom` file into the service's working folder; see " +
      "scripts/ci-containers.sh), set DOCKER_HOST, use the local sandbox, or pass " +
      "--unsafe-no-sandbox to run without any isolation.",
    { data: { tried }, retryable: true },
  );
}
