import { randomBytes } from "node:crypto";
import { chmod, mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { InfrastructureError, UsageError } from "../../core/errors.js";
import { fsOutcome, unreadableError } from "../../core/fs.js";
import { runProcess } from "../../core/process.js";
import { cleanAgentSkillFolders } from "../../skill/install.js";
import { readSystemFile } from "../system-file.js";
import type { PreparedBase } from "./base.js";
import { type HeldMount, holdOverlay } from "./overlay-keeper.js";
import { OWNER_FILE, ownerIsGone, readOwner, writeOwner } from "./owner.js";

/**
 * How a run's workspace is made from its base.
 * - `overlay`: a kernel overlayfs mount with the base as the read-only lower layer and a fresh
 *   upper layer per run. Constant time whatever the repository size; every write (including
 *   in-place edits) lands in the upper layer, so the base can never change. Needs the right to
 *   mount (root, or CAP_SYS_ADMIN).
 * - `reflink`: `cp -a --reflink=always` — copy-on-write clones of every file (btrfs, XFS, bcachefs).
 * - `copy`: `cp -a` — a plain recursive copy; always works, costs a full write of the tree.
 * Hard links are deliberately not offered: an agent that edits a file in place (most editors and
 * `fs.writeFile` truncate and rewrite the same inode) would change the base and every other run.
 *
 * Measured (perf/workspace.bench.ts, 5,000 files, ext4, 2 shared cores): overlay ~70 ms
 * including the skill-folder clean-up walk, against 5–7 s for `git clone file://` + checkout on
 * a loaded machine (~100×); a plain copy costs about as much as the clone (~1×), which is why
 * overlay is preferred. An overlay mount survives a process killed with SIGKILL, so each
 * workspace's holder records its owner process (`owner.ts`), and every materialisation and base
 * preparation first sweeps the holders whose owner is gone (`sweepStaleWorkspaces`).
 */
export type MaterialiseMethod = "overlay" | "reflink" | "copy";

export interface MaterialiseOptions {
  /** `auto` (default) picks the first that works here: overlay, reflink, copy. */
  readonly method?: MaterialiseMethod | "auto";
  /** Parent folder for workspaces; default `<cacheDir>/workspaces` (same filesystem as bases). */
  readonly root?: string;
  /** Leave the workspace on disk after `dispose()` (for `--keep`). */
  readonly keep?: boolean;
  /** Remove agent-skill folders before handing the workspace out (default true). */
  readonly cleanSkillFolders?: boolean;
}

export interface Workspace {
  /** The workspace folder on the host; its last segment is the repository name. */
  readonly path: string;
  /** Where sandboxes show it (`/workspace/<name>` unless the base says otherwise). */
  readonly mountPath: string;
  readonly method: MaterialiseMethod;
  readonly base: PreparedBase;
  /**
   * An overlay workspace's upper layer on the host: every path the workspace's users created,
   * changed (data or metadata) or deleted has an entry there, and nothing else does (the kernel
   * copies a file up before any change), so it names every path that may differ from the base.
   * Mounted with `redirect_dir=off`: a renamed folder is copied, never redirected to its base
   * folder. Absent for copied workspaces.
   */
  readonly upperLayer?: string;
  /** Agent-skill folders removed from this workspace before handing it out (absolute paths). */
  readonly removedSkillFolders: readonly string[];
  /**
   * Remove the workspace (unless `keep`). With `keep`, an overlay workspace is first copied to a
   * plain folder — a mount would not survive a reboot — and the kept path is returned.
   */
  dispose(): Promise<{ readonly keptAt?: string }>;
}

const probed = new Map<string, MaterialiseMethod>();

/**
 * Make a fresh workspace from a prepared base. Every workspace of one base starts byte-identical
 * to the base (same `treeDigest`), `.git` included, and has its own git state.
 */
export async function materialiseWorkspace(
  base: PreparedBase,
  options: MaterialiseOptions = {},
): Promise<Workspace> {
  const root = options.root ?? join(base.cacheDir, "workspaces");
  await mkdir(root, { recursive: true });
  await sweepStaleWorkspaces(root);
  const requested = options.method ?? "auto";
  let method = requested === "auto" ? await detectMethod(root, base.tree) : requested;
  const overlayUsable = overlaySafePath(base.tree) && overlaySafePath(join(root, base.key));
  if (requested === "auto" && method === "overlay" && !overlayUsable) method = "copy";
  const holder = join(root, `${base.key}-${randomBytes(6).toString("hex")}`);
  await mkdir(holder);
  const path = join(holder, base.repositoryName);
  let held: HeldMount | undefined;
  try {
    // Before the mount: a process killed at any later point leaves a holder the sweep recognises.
    await writeOwner(holder);
    if (method === "overlay") held = await mountOverlay(base.tree, holder, path);
    else await copyTree(base.tree, path, method === "reflink" ? "always" : "never");
    const removedSkillFolders =
      options.cleanSkillFolders === false ? [] : await cleanAgentSkillFolders(path);
    let disposed: Promise<{ keptAt?: string }> | undefined;
    return {
      path,
      mountPath: base.workspaceMountPath,
      method,
      base,
      ...(method === "overlay" ? { upperLayer: join(holder, UPPER_LAYER) } : {}),
      removedSkillFolders,
      dispose: () => {
        disposed ??= disposeWorkspace(holder, path, held, options.keep === true);
        return disposed;
      },
    };
  } catch (error) {
    // Cleanup on the way out of a failure: the original error is the one to report.
    if (held !== undefined) await held.release(() => unmount(path)).catch(() => undefined);
    await rm(holder, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The cheapest method that works for workspaces under `root` made from bases like `lower`,
 * found by trying each once on a tiny tree (cached per root for the life of the process).
 */
export async function detectMethod(root: string, lower: string): Promise<MaterialiseMethod> {
  const cached = probed.get(root);
  if (cached !== undefined) return cached;
  let method: MaterialiseMethod = "copy";
  const probe = join(root, `.probe-${randomBytes(6).toString("hex")}`);
  try {
    await mkdir(join(probe, "lower"), { recursive: true });
    await writeOwner(probe);
    await writeFile(join(probe, "lower", "file"), "probe\n");
    if (overlaySafePath(lower) && overlaySafePath(probe)) {
      const merged = join(probe, "merged");
      try {
        const probeMount = await mountOverlay(join(probe, "lower"), probe, merged);
        await probeMount.release(() => unmount(merged));
        method = "overlay";
      } catch {
        // No permission to mount, or no overlayfs here: fall through to a slower method, which
        // gives the same workspace, so nothing is lost by not knowing why.
      }
    }
    if (method === "copy") {
      const cloned = await runProcess("cp", [
        "--reflink=always",
        join(probe, "lower", "file"),
        join(probe, "clone"),
      ]);
      if (cloned.exitCode === 0) method = "reflink";
    }
  } finally {
    await rm(probe, { recursive: true, force: true });
  }
  probed.set(root, method);
  return method;
}

/** overlayfs option strings use `,` and `:` as separators; paths holding them cannot be passed. */
function overlaySafePath(path: string): boolean {
  return !/[,:\\]/.test(path);
}

/** The folder of an overlay workspace's holder that is the overlay's upper layer. */
const UPPER_LAYER = ".upper";

/** The overlay of `lower` at `merged`, its layers in `holder`, held until released. */
async function mountOverlay(lower: string, holder: string, merged: string): Promise<HeldMount> {
  const upper = join(holder, UPPER_LAYER);
  const work = join(holder, ".work");
  await mkdir(upper, { recursive: true });
  await mkdir(work, { recursive: true });
  await mkdir(merged, { recursive: true });
  // The merged root takes the upper layer's permissions; make them the base's.
  await chmod(upper, (await stat(lower)).mode & 0o7777);
  return holdOverlay(
    // No `redirect_dir` (the default of most kernels, said here so it holds on all): a folder
    // renamed in the workspace is copied up, so every upper folder shows its own base folder's
    // entries and nothing else's, which the patch capture relies on (`Workspace.upperLayer`).
    `lowerdir=${lower},upperdir=${upper},workdir=${work},redirect_dir=off`,
    merged,
  );
}

/**
 * Whether `mountinfo` (the text of `/proc/self/mountinfo`) lists a mount at `path`. Its mount
 * point is the fifth field, with space, tab, newline and backslash written as octal escapes.
 */
export function mountedAt(mountinfo: string, path: string): boolean {
  return mountinfo.split("\n").some((line) => {
    const point = line.split(" ")[4];
    return (
      point !== undefined &&
      point.replace(/\\([0-7]{3})/g, (_, octal: string) =>
        String.fromCharCode(Number.parseInt(octal, 8)),
      ) === path
    );
  });
}

async function unmount(path: string): Promise<void> {
  const result = await runProcess("umount", [path]);
  if (result.exitCode !== 0) {
    // Already unmounted (by a person or a cleanup script): the goal is reached, nothing to fail.
    const mountinfo = await readSystemFile("/proc/self/mountinfo").catch(() => undefined);
    if (mountinfo !== undefined && !mountedAt(mountinfo, path)) return;
    // A process still inside the workspace keeps it busy; detach it so removal can proceed.
    const lazy = await runProcess("umount", ["-l", path]);
    if (lazy.exitCode !== 0) {
      throw new InfrastructureError(
        "env.overlay-unmount-failed",
        `cannot unmount workspace ${path}: ${result.stderr.trim()}`,
      );
    }
  }
}

async function copyTree(from: string, to: string, reflink: "always" | "never"): Promise<void> {
  // `cp -a` keeps modes, timestamps and symbolic links; the trailing `/.` copies the contents
  // (dotfiles and `.git` included) into the new folder.
  const result = await runProcess("cp", ["-a", `--reflink=${reflink}`, `${from}/.`, to]);
  if (result.exitCode !== 0) {
    throw new InfrastructureError(
      "env.workspace-copy-failed",
      `cannot copy base ${from} to ${to}: ${result.spawnError?.message ?? result.stderr.trim()}`,
    );
  }
}

/** `held`: an overlay workspace's mount; undefined for a copied one. */
async function disposeWorkspace(
  holder: string,
  path: string,
  held: HeldMount | undefined,
  keep: boolean,
): Promise<{ keptAt?: string }> {
  if (held !== undefined) {
    if (keep) {
      const keptHolder = `${holder}-kept`;
      await mkdir(keptHolder, { recursive: true });
      const keptAt = join(keptHolder, path.slice(holder.length + 1));
      await copyTree(path, keptAt, "never");
      await held.release(() => unmount(path));
      await rm(holder, { recursive: true, force: true });
      return { keptAt };
    }
    await held.release(() => unmount(path));
    await rm(holder, { recursive: true, force: true });
    return {};
  }
  if (keep) {
    // A kept workspace outlives this process: without an owner record it is never swept.
    await rm(join(holder, OWNER_FILE), { force: true });
    return { keptAt: path };
  }
  await rm(holder, { recursive: true, force: true });
  return {};
}

export interface SweepReport {
  /** Holders removed because their owner process is gone. */
  readonly removed: readonly string[];
  /** Holders of gone owners left in place because a mount in them could not be undone. */
  readonly failed: readonly { readonly path: string; readonly error: string }[];
}

const sweeping = new Map<string, Promise<SweepReport>>();

/**
 * Unmount and remove the workspaces under `root` whose owner process is gone (SIGKILLed runs,
 * crashes). Workspaces of live processes — this one's included — and holders without an owner
 * record are never touched. Never throws: a sweep is housekeeping and must not fail a run.
 * Concurrent calls for one root share a sweep.
 */
export function sweepStaleWorkspaces(root: string): Promise<SweepReport> {
  const running = sweeping.get(root);
  if (running !== undefined) return running;
  const sweep = sweepOnce(root).finally(() => sweeping.delete(root));
  sweeping.set(root, sweep);
  return sweep;
}

async function sweepOnce(root: string): Promise<SweepReport> {
  const removed: string[] = [];
  const failed: { path: string; error: string }[] = [];
  // No root yet: nothing to sweep. A root that is there but cannot be listed is reported as
  // failed (naming it), not taken for an empty one.
  const listed = await fsOutcome(readdir(root, { withFileTypes: true }));
  if (listed.kind === "missing") return { removed, failed };
  if (listed.kind === "unreadable") {
    failed.push({ path: root, error: unreadableError(root, listed.error).message });
    return { removed, failed };
  }
  let mounts: string[] | undefined;
  for (const entry of listed.value) {
    if (!entry.isDirectory()) continue;
    const holder = join(root, entry.name);
    const owner = await readOwner(holder);
    if (owner === undefined || !ownerIsGone(owner)) continue;
    try {
      // Inside the `try`: without the mount table nothing is removed (see below).
      mounts ??= await mountPoints();
      // Deepest first, so nothing is unmounted from under another mount.
      const inside = mounts
        .filter((point) => point === holder || point.startsWith(`${holder}/`))
        .sort((left, right) => right.length - left.length);
      for (const point of inside) await unmount(point);
      await rm(holder, { recursive: true, force: true });
      removed.push(holder);
    } catch (error) {
      // Never remove a folder through a mount that is still there.
      failed.push({ path: holder, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return { removed, failed };
}

/**
 * Mount points of this mount namespace (`/proc/self/mountinfo` field 5, octal escapes undone);
 * none without /proc. A mount table that is there but unreadable is an error: taken as "no
 * mounts", the sweep would remove a folder through a mount that is still there.
 */
async function mountPoints(): Promise<string[]> {
  const text = (await readSystemFile("/proc/self/mountinfo")) ?? "";
  return text
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((field): field is string => field !== undefined && field !== "")
    .map((field) =>
      field.replace(/\\([0-7]{3})/g, (_match, octal: string) =>
        String.fromCharCode(Number.parseInt(octal, 8)),
      ),
    );
}

/** Parse a user's `--workspace-method` value. */
export function parseMaterialiseMethod(value: string): MaterialiseMethod | "auto" {
  if (value === "auto" || value === "overlay" || value === "reflink" || value === "copy")
    return value;
  throw new UsageError(
    "env.unknown-materialise-method",
    `unknown workspace method "${value}" (expected auto, overlay, reflink or copy)`,
  );
}
