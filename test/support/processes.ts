/**
 * Waiting on things that happen in other processes: a child's exit, and a condition polled
 * until it holds.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";

/** Resolves with the child's exit code and signal, at once when it has already exited. */
export function exitOf(
  child: ChildProcess,
): Promise<{ code: number | null; signal: string | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolveExit) =>
    child.once("exit", (code, signal) => resolveExit({ code, signal })),
  );
}

/** Polls `probe` every 50 ms until it returns a value; throws naming `what` after the timeout. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 90_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

/** A process counts as alive when it exists and is not a zombie awaiting its reaper. */
export function processAlive(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z/.test(status);
  } catch {
    return false;
  }
}
