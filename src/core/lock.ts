/**
 * The one lock-file implementation (workspace bases, the wiki's build lock).
 *
 * A lock is a file created with O_EXCL holding its owner (pid, host, since). A lock whose owner
 * died on this host is stale and taken over; a lock from another host is only waited for, because
 * we cannot tell whether its owner lives.
 *
 * Taking over must be atomic. "Remove the stale file, then create" is not: two processes that both
 * saw the stale lock can interleave as A removes, A creates, B removes A's fresh lock, B creates —
 * and both hold it. So the removal is guarded: a taker first creates (O_EXCL) a marker named after
 * the stale file's identity (inode and change time), then, holding the marker, checks that the lock
 * path still names that very file and only then removes it. Only the one marker holder can remove
 * that file, and a file created later has another identity, so a live lock is never removed. Whoever
 * then creates the lock file first (the taker or anyone else) holds it; the rest wait as usual.
 * A taker that dies inside that short step leaves its marker, and that one stale lock is then
 * waited for until the timeout, whose message names the lock file to delete.
 */
import { open, rm, stat } from "node:fs/promises";
import { hostname } from "node:os";
import { InfrastructureError } from "./errors.js";

export interface LockOptions {
  /** Give up waiting after this long (preparing a base can take minutes: the default is 1 h). */
  readonly timeoutMs?: number;
  readonly pollMs?: number;
  /** Checked between polls; when it returns true the wait ends without taking the lock. */
  readonly done?: () => Promise<boolean>;
  /** Says what the holder does, for the timeout message (default: "preparing the same base"). */
  readonly holderDoes?: string;
}

export type LockOutcome =
  | { readonly acquired: true; release(): Promise<void> }
  | { readonly acquired: false };

export interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly since: string;
}

/** What a lock file is: its identity on disk and the owner it records (when readable). */
interface LockFileState {
  readonly identity: string;
  readonly owner: Partial<LockOwner> | undefined;
  readonly text: string;
}

/**
 * Take an exclusive lock file, or wait for the holder to finish. On timeout an
 * `InfrastructureError` with code `core.lock-timeout` whose data names the path and the holder's pid
 * (when recorded).
 */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<LockOutcome> {
  const deadline = Date.now() + (options.timeoutMs ?? 60 * 60_000);
  const pollMs = options.pollMs ?? 100;
  for (;;) {
    if (options.done !== undefined && (await options.done())) return { acquired: false };
    const handle = await open(path, "wx").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST") return undefined;
      throw error;
    });
    if (handle !== undefined) {
      const owner: LockOwner = {
        pid: process.pid,
        host: hostname(),
        since: new Date().toISOString(),
      };
      try {
        await handle.writeFile(JSON.stringify(owner));
      } finally {
        await handle.close();
      }
      let released = false;
      return {
        acquired: true,
        release: async () => {
          if (released) return;
          released = true;
          await rm(path, { force: true });
        },
      };
    }
    const state = await readLockFile(path);
    // Gone between our create and our read: the holder released it; try again at once.
    if (state === undefined) continue;
    if (isStale(state.owner) && (await takeOver(path, state))) continue;
    if (Date.now() >= deadline) {
      const pid = typeof state.owner?.pid === "number" ? state.owner.pid : undefined;
      throw new InfrastructureError(
        "core.lock-timeout",
        `timed out waiting for lock ${path} (held by another process ${options.holderDoes ?? "preparing the same base"}${pid === undefined ? "" : `, process ${pid}`})`,
        { retryable: true, data: { path, ...(pid === undefined ? {} : { pid }) } },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** The lock file's identity and content, or undefined when there is no lock file. */
async function readLockFile(path: string): Promise<LockFileState | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    // Identity and content come from the same open file, so they describe the same lock.
    const stats = await handle.stat({ bigint: true });
    const text = await handle.readFile("utf8");
    return { identity: identityOf(stats), owner: parseOwner(text), text };
  } finally {
    await handle.close();
  }
}

function identityOf(stats: { dev: bigint; ino: bigint; ctimeNs: bigint }): string {
  return `${stats.dev}-${stats.ino}-${stats.ctimeNs}`;
}

function parseOwner(text: string): Partial<LockOwner> | undefined {
  // An empty lock may be a holder between create and write; malformed is not ours to judge.
  if (text === "") return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === "object" ? (value as Partial<LockOwner>) : undefined;
  } catch {
    // Not JSON: an owner we cannot read, treated like an empty one (no file-system error here).
    return undefined;
  }
}

/**
 * Whether the recorded owner is a process on this host that no longer exists. A lock without a
 * host field was written by an older wiki build lock (pid only, always local): it counts as local.
 */
function isStale(owner: Partial<LockOwner> | undefined): boolean {
  if (owner === undefined || typeof owner.pid !== "number") return false;
  if (owner.host !== undefined && owner.host !== hostname()) return false;
  if (owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    // EPERM means the process exists but belongs to someone else: still alive.
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Remove the stale lock `seen` if, and only if, the lock path still names that file; true when
 * the lock path is now free (removed by us, or already gone). See the module comment.
 */
async function takeOver(path: string, seen: LockFileState): Promise<boolean> {
  const marker = `${path}.takeover-${seen.identity}`;
  const handle = await open(marker, "wx").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "EEXIST") return undefined;
    throw error;
  });
  // Another process is taking this very file over: let it, and look again after a poll.
  if (handle === undefined) return false;
  try {
    try {
      await handle.writeFile(JSON.stringify({ pid: process.pid, host: hostname() }));
    } finally {
      await handle.close();
    }
    const now = await stat(path, { bigint: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    if (now === undefined) return true;
    if (identityOf(now) !== seen.identity) return false;
    await rm(path, { force: true });
    return true;
  } finally {
    await rm(marker, { force: true });
  }
}
