/**
 * One verifier run's channel folder: a private host folder holding a copy of skillsmith's pytest
 * plugin and the channel's socket, mounted read-only into the sandbox, plus the environment that
 * makes pytest load the plugin first (`PYTEST_ADDOPTS=-p …`, `PYTHONPATH`). Read-only: the code
 * under test can connect to the socket (Linux checks no write permission on a socket's mount)
 * but cannot replace the plugin, plant a socket of its own, or leave anything behind.
 */
import { chmod, copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { packageRoot } from "../../../core/paths.js";
import type { Mount } from "../../sandbox/types.js";
import { BYTECODE_MOUNT_PATH } from "./bytecode-cache.js";
import { type ChannelHello, type ChannelOutcome, ChannelServer } from "./channel.js";

export const PLUGIN_MODULE = "skillsmith_verifier_channel";
/** Where the channel folder appears inside bubblewrap and container sandboxes. */
export const CHANNEL_MOUNT_PATH = "/run/skillsmith-verifier";
/** Where the run's writable scratch folder (the plugin's fresh bytecode caches) appears. */
export const SCRATCH_MOUNT_PATH = "/run/skillsmith-verifier-scratch";
const SOCKET_NAME = "channel.sock";

/** The plugin's source in the installed package (shipped through `package.json` `files`). */
export function pluginSourcePath(): string {
  return join(packageRoot(), "src", "env", "verifier", "python", `${PLUGIN_MODULE}.py`);
}

export interface VerifierChannel {
  /** Environment for the verifier's process (merge over the verifier's own). */
  readonly env: Readonly<Record<string, string>>;
  /** The read-only mount of the channel folder; none for the unsafe sandbox. */
  readonly mounts: readonly Mount[];
  /** Stop listening, collect what arrived and remove the folder. */
  finish(): Promise<ChannelOutcome>;
}

/**
 * A channel folder under the system temporary folder (a Unix socket path has to stay under 108
 * bytes, so not under a caller's possibly deep scratch folder). `hostPaths`: the sandbox has no
 * mount namespace (`unsafe`), so the plugin is told the host paths.
 */
export async function openVerifierChannel(
  hello: ChannelHello,
  options: {
    readonly hostPaths: boolean;
    readonly env?: Readonly<Record<string, string>>;
    /** The shared bytecode cache (`bytecode-cache.ts`): filled by inventories, read by runs. */
    readonly bytecodeCache?: string;
    /**
     * Appended to the channel's and the scratch folder's mount paths, so several channels can
     * share one sandbox (`inventory-batch.ts`: one per verifier of a batch).
     */
    readonly mountSuffix?: string;
  },
): Promise<VerifierChannel> {
  const suffix = options.mountSuffix ?? "";
  const channelMount = `${CHANNEL_MOUNT_PATH}${suffix}`;
  const scratchMount = `${SCRATCH_MOUNT_PATH}${suffix}`;
  const base = tmpdir().length > 60 ? "/tmp" : tmpdir();
  const folder = await mkdtemp(join(base, "skillsmith-channel-"));
  // The plugin's fresh bytecode caches go here, not into the sandbox's /tmp: skillsmith owns the
  // folder and removes it in `finish`, also when pytest was killed or `os._exit`ed (left to the
  // plugin they piled up, hundreds of folders). Writable for whatever user the sandbox runs as.
  const scratch = await mkdtemp(join(base, "skillsmith-verifier-scratch-"));
  const removeBoth = async () => {
    await rm(folder, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  };
  try {
    await chmod(scratch, 0o1777);
    await mkdir(join(folder, "python"));
    await copyFile(pluginSourcePath(), join(folder, "python", `${PLUGIN_MODULE}.py`));
    const server = await ChannelServer.listen(join(folder, SOCKET_NAME), hello);
    const inside = options.hostPaths ? folder : channelMount;
    // The unsafe sandbox (host paths, no mounts) uses its own cache folder by its host path; its
    // code under test could write it, as it could the interpreter's files (bytecode-cache.ts).
    const shared = options.bytecodeCache;
    // Only an inventory (alone or with the untouched repository's run), where no agent's code
    // has run, writes the shared cache.
    const fill = shared !== undefined && hello.mode !== "run";
    const own = options.env ?? {};
    const env: Record<string, string> = {
      // pytest's cache goes to the scratch folder: the verifier's folder is read-only.
      PYTEST_ADDOPTS: joinNonEmpty(
        " ",
        `-p ${PLUGIN_MODULE} -o cache_dir=${posix.join(options.hostPaths ? scratch : scratchMount, "pytest-cache")}`,
        own.PYTEST_ADDOPTS,
      ),
      PYTHONPATH: joinNonEmpty(":", posix.join(inside, "python"), own.PYTHONPATH),
      SKILLSMITH_VERIFIER_CHANNEL: posix.join(inside, SOCKET_NAME),
      PYTHONDONTWRITEBYTECODE: "1",
      // Bytecode caches are looked up only under a read-only folder skillsmith fills (or an
      // empty one): a `.pyc` planted in a writable `__pycache__` beside a verifier's helper is
      // never loaded instead of it.
      PYTHONPYCACHEPREFIX: bytecodePrefix(shared, options.hostPaths, inside),
      SKILLSMITH_VERIFIER_SCRATCH: options.hostPaths ? scratch : scratchMount,
      ...(fill ? { SKILLSMITH_VERIFIER_BYTECODE_FILL: "1" } : {}),
    };
    return {
      env,
      mounts: options.hostPaths
        ? []
        : [
            { hostPath: folder, sandboxPath: channelMount, readOnly: true },
            { hostPath: scratch, sandboxPath: scratchMount, readOnly: false },
            ...(shared === undefined
              ? []
              : [{ hostPath: shared, sandboxPath: BYTECODE_MOUNT_PATH, readOnly: !fill }]),
          ],
      finish: async () => {
        try {
          return await server.finish();
        } finally {
          await removeBoth();
        }
      },
    };
  } catch (error) {
    await removeBoth();
    throw error;
  }
}

/** Where the session's interpreter looks up bytecode: the shared cache as the sandbox sees it. */
function bytecodePrefix(shared: string | undefined, hostPaths: boolean, inside: string): string {
  if (shared === undefined) return posix.join(inside, "pycache");
  return hostPaths ? shared : BYTECODE_MOUNT_PATH;
}

function joinNonEmpty(separator: string, first: string, second: string | undefined): string {
  return second === undefined || second === "" ? first : `${first}${separator}${second}`;
}
