import { open, readFile, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { InfrastructureError } from "../../core/errors.js";

export interface LockOptions {
  /** Give up waiting after this long (preparing a base can take minutes: the default is 1 h). */
  readonly timeoutMs?: number;
  readonly pollMs?: number;
  /** Checked between polls; when it returns true the wait ends without taking the lock. */
  readonly done?: () => Promise<boolean>;
}

export type LockOutcome =
  | { readonly acquired: true; release(): Promise<void> }
  | { readonly acquired: false };

interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly since: string;
}

/**
 * Take an exclusive lock file (created with O_EXCL, so exactly one process wins), or wait for the
 * holder to finish. A lock left by a process that died on this host is stale and taken over; a
 * lock from another host is only waited for, because we cannot tell whether its owner lives.
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
      await handle.writeFile(JSON.stringify(owner));
      await handle.close();
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
    if (await isStale(path)) {
      await rm(path, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new InfrastructureError(
        "lock-timeout",
        `timed out waiting for lock ${path} (held by another process preparing the same base)`,
        { retryable: true, data: { path } },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

async function isStale(path: string): Promise<boolean> {
  const text = await readFile(path, "utf8").catch(() => undefined);
  // An empty or unreadable lock may be a holder between create and write: not stale yet.
  if (text === undefined || text === "") return false;
  let owner: Partial<LockOwner>;
  try {
    owner = JSON.parse(text) as Partial<LockOwner>;
  } catch {
    return false;
  }
  if (owner.host !== hostname() || typeof owner.pid !== "number") return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    // EPERM means the process exists but belongs to someone else: still alive.
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}
