/**
 * A shared bytecode cache for the verifier's Python, owned by skillsmith. The channel points
 * `PYTHONPYCACHEPREFIX` at a read-only folder so that a `.pyc` planted beside a verifier's helper
 * is never loaded; with that folder empty, every verifier session compiled pytest, pluggy and the
 * standard library from source (about two thirds of a session's CPU). This folder keeps the
 * defence and the cache: it is written only by an inventory run (no agent's code has run in its
 * workspace: an empty folder or an untouched copy of the repository), where skillsmith's plugin
 * compiles the interpreter's own modules it saw imported (never a file of the workspace, the
 * verifier or a temporary folder), and it is mounted read-only into every scored run. A `.pyc` is
 * used only while its source's size and modification time still match, so it never runs other
 * code than the source beside it would.
 *
 * The `unsafe` sandbox has no mounts, so nothing keeps the code under test out of its cache; it
 * gets a folder of its own (never shared with a sandbox kind that has read-only mounts), because
 * what it could plant there it can already write into the interpreter's own files, which `unsafe`
 * does not protect either. Without it every unsafe pytest session compiled pytest and the
 * standard library from source again (about 0.8 s of CPU each).
 */
import { createHash } from "node:crypto";
import { chmod, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { defaultCacheDir } from "../../workspace/cache.js";

/** Where the cache appears inside bubblewrap and container sandboxes. */
export const BYTECODE_MOUNT_PATH = "/run/skillsmith-verifier-bytecode";

export interface BytecodeCacheScope {
  /** The sandbox's registered kind: another kind may see another interpreter at the same path. */
  readonly sandboxKind: string;
  /** Container backends: the image, whose interpreter differs from the host's. */
  readonly image?: string;
}

/**
 * The host folder of the cache for one sandbox kind and image (under `root`, by default the
 * cache folder of prepared bases), created writable for whatever user the sandbox runs as.
 */
export async function verifierBytecodeCache(
  scope: BytecodeCacheScope,
  root: string = defaultCacheDir(),
): Promise<string> {
  const key = createHash("sha256")
    .update(JSON.stringify([scope.sandboxKind, scope.image ?? ""]))
    .digest("hex")
    .slice(0, 24);
  const folder = join(root, "verifier-bytecode", key);
  await mkdir(folder, { recursive: true });
  // Sticky and world-writable, as the run's scratch folder: a container's non-root user fills it.
  await chmod(folder, 0o1777);
  return folder;
}

/**
 * `{ bytecodeCache }` for an integrity session of a verifier run in `target`'s sandbox and
 * image.
 */
export async function bytecodeCacheOption(target: {
  readonly sandbox: { readonly kind: string };
  readonly image?: string;
}): Promise<{ readonly bytecodeCache?: string }> {
  const folder = await verifierBytecodeCache({
    sandboxKind: target.sandbox.kind,
    ...(target.image === undefined ? {} : { image: target.image }),
  });
  return { bytecodeCache: folder };
}
