import { createHash } from "node:crypto";
import { posix } from "node:path";
import { InputError } from "../../core/errors.js";
import { normalizeMountPath } from "./mount-path.js";

/** Where the workspace sits inside the build context tar (next to the Dockerfile). */
export const CONTEXT_WORKSPACE_FOLDER = "workspace";
export const DOCKERFILE_NAME = "Dockerfile";

export interface DockerfileInput {
  readonly baseImage: string;
  readonly workspaceMountPath: string;
  readonly commands: readonly string[];
  /** `ENV` before the commands: they and every later run see these variables. */
  readonly env?: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * The Dockerfile for a prepared environment: the base image, the workspace copied to its fixed
 * path, then each setup command as its own layer. Commands use the JSON (exec) form around
 * `/bin/sh -c` so that quotes, `$`, backslashes and newlines in a recipe reach the shell intact.
 */
export function generateDockerfile(input: DockerfileInput): string {
  const mountPath = normalizeMountPath(input.workspaceMountPath);
  if (!posix.isAbsolute(mountPath) || /\s/.test(mountPath)) {
    // WORKDIR has no quoting form; a path with blanks would be split.
    throw new InputError(
      "env.sandbox-mount-path",
      `workspace mount path "${input.workspaceMountPath}" must be absolute and without blanks`,
      { field: "workspaceMountPath" },
    );
  }
  const lines = [
    `FROM ${input.baseImage}`,
    `COPY ${JSON.stringify([`${CONTEXT_WORKSPACE_FOLDER}/`, `${mountPath}/`])}`,
    `WORKDIR ${mountPath}`,
  ];
  const variables = Object.entries(input.env ?? {});
  for (const [key] of variables) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) {
      throw new InputError(
        "env.sandbox-env-name",
        `"${key}" is not a valid environment variable name`,
        {
          field: "env",
        },
      );
    }
  }
  if (variables.length > 0) {
    // One instruction, so the variables add one layer; JSON string quoting is what the
    // Dockerfile parser accepts for ENV values.
    lines.push(
      `ENV ${variables.map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(" ")}`,
    );
  }
  for (const command of input.commands)
    lines.push(`RUN ${JSON.stringify(["/bin/sh", "-c", command])}`);
  const labels = Object.entries(input.labels ?? {});
  if (labels.length > 0) {
    lines.push(
      `LABEL ${labels.map(([key, value]) => `${JSON.stringify(key)}=${JSON.stringify(value)}`).join(" ")}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The content hash naming a prepared environment: everything that changes what is inside it
 * (repository and commit, the base image's id, the recipe, the mount path).
 */
export function environmentKey(parts: {
  readonly cacheKey: string;
  readonly baseImageId: string;
  readonly workspaceMountPath: string;
  readonly commands: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}): string {
  const canonical = JSON.stringify([
    "skillsmith-env-v1",
    parts.cacheKey,
    parts.baseImageId,
    normalizeMountPath(parts.workspaceMountPath),
    parts.commands,
    // Absent and empty name the same image as before variables existed.
    ...(parts.env === undefined || Object.keys(parts.env).length === 0
      ? []
      : [Object.entries(parts.env).sort(([left], [right]) => (left < right ? -1 : 1))]),
  ]);
  return createHash("sha256").update(canonical).digest("hex");
}
