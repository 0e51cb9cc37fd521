/**
 * Running a container as the image's own (often non-root) user: which user that is, its numeric
 * ids, and handing the host folders we bind-mount over to it. Without this an image ending in
 * `USER app` meets a workspace and reward folder owned by root and cannot write either.
 */
import { chmod, lchown, lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import type Docker from "dockerode";
import { InfrastructureError } from "../../core/errors.js";
import { SANDBOX_LABEL } from "./container.js";

export interface UserIds {
  readonly uid: number;
  readonly gid: number;
}

/** True for an empty user (the engine's default, root) and every spelling of root. */
export function isRootUser(user: string | undefined): boolean {
  if (user === undefined) return true;
  const name = user.trim().split(":")[0] ?? "";
  return name === "" || name === "root" || name === "0";
}

/** `uid` or `uid:gid` written with numbers only, else undefined (a name needs the image). */
export function numericUser(user: string): UserIds | undefined {
  const match = /^(\d+)(?::(\d+))?$/.exec(user.trim());
  if (match === null) return undefined;
  const uid = Number(match[1]);
  // A bare uid without a passwd entry runs with group 0 in both engines; with one, the engine
  // uses its primary group, which only the image knows: the caller asks the image then.
  return match[2] === undefined ? undefined : { uid, gid: Number(match[2]) };
}

/**
 * The image's `USER` (empty when it sets none, or when the image is missing: creating the
 * container then fails with the missing image's own error).
 */
export async function imageUser(docker: Docker, image: string): Promise<string> {
  let info: Docker.ImageInspectInfo;
  try {
    info = await docker.getImage(image).inspect();
  } catch (error) {
    if ((error as { statusCode?: unknown }).statusCode === 404) return "";
    throw error;
  }
  const user = info.Config?.User;
  return typeof user === "string" ? user : "";
}

/**
 * The numeric ids `user` has in `image`, asked of the image itself (`id -u; id -g` in a throwaway
 * container run as that user), since only its /etc/passwd knows a name's ids.
 */
export async function userIdsInImage(
  docker: Docker,
  image: string,
  user: string,
): Promise<UserIds> {
  const numeric = numericUser(user);
  if (numeric !== undefined) return numeric;
  const container = await docker.createContainer({
    Image: image,
    User: user,
    Cmd: ["/bin/sh", "-c", "id -u; id -g"],
    Entrypoint: [],
    Tty: true,
    Labels: { [SANDBOX_LABEL]: "user" },
    HostConfig: { NetworkMode: "none" },
  });
  try {
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    const output = (await container.logs({ stdout: true, stderr: true })).toString("utf8");
    const [uid, gid] = output
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== "")
      .map(Number);
    if (StatusCode !== 0 || uid === undefined || gid === undefined || !(uid >= 0 && gid >= 0)) {
      throw new InfrastructureError(
        "env.container-user-unknown",
        `image ${image} has no user "${user}" (id answered: ${output.trim().slice(0, 200) || `exit ${StatusCode}`}); set USER or [agent]/[verifier] user to a user the image defines`,
        { data: { image, user } },
      );
    }
    return { uid, gid };
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}

/**
 * Make `path` (and everything under it) the user's: `chown` when we may (root on the host, the
 * rootful engine maps ids one to one), else world-writable. Symbolic links are never followed,
 * so a link the workload left cannot hand a host file outside the folder to anyone.
 */
export async function handOver(path: string, ids: UserIds): Promise<void> {
  const asRoot = process.getuid?.() === 0;
  const visit = async (current: string): Promise<void> => {
    const stats = await lstat(current);
    if (stats.isSymbolicLink()) return;
    if (asRoot) await lchown(current, ids.uid, ids.gid);
    else await chmod(current, stats.mode | (stats.isDirectory() ? 0o777 : 0o666));
    if (!stats.isDirectory()) return;
    for (const name of await readdir(current)) await visit(join(current, name));
  };
  await visit(path);
}
