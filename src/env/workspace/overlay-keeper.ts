/**
 * An overlay mount held by a small shell process for the life of one workspace: it mounts, says
 * so on its standard output, and waits on its standard input; when skillsmith closes that input
 * (`release`), it unmounts (lazily when something still holds the mount) and exits.
 *
 * Why a process kept, not `mount` now and `umount` later: starting a process costs skillsmith's
 * main thread 10–15 ms of CPU on the build machines (Node forks a process the size of its own
 * heap; `perf/README.md`), and every run and every check makes one workspace. One start instead of
 * two is about 12 ms less per workspace. And the input also closes when skillsmith dies, even of
 * SIGKILL, so the keeper unmounts then too: a killed run no longer leaves its overlay mounted
 * until the next sweep (`sweepStaleWorkspaces` still removes the holder).
 *
 * The keeper runs in a process group of its own and is not among the groups the CLI kills on a
 * signal (`core/process-groups.ts`): killed before it unmounts, it would leave the mount behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { InfrastructureError } from "../../core/errors.js";

/** `$1`: the overlay's options, `$2`: the mount point. Exit 1: not mounted; 2: not unmounted. */
const KEEPER_SCRIPT = [
  'mount -t overlay overlay -o "$1" "$2" || exit 1',
  "echo mounted",
  // Whatever arrives, or end of input (skillsmith gone), ends the wait.
  "read -r _ || true",
  'umount "$2" 2>/dev/null || umount -l "$2" || exit 2',
].join("\n");

/** How long a mount may take before the keeper is killed and the mount reported failed. */
const MOUNT_TIMEOUT_MS = 60_000;
/** How long an unmount may take before the caller unmounts the usual way. */
const UNMOUNT_TIMEOUT_MS = 60_000;
const STDERR_LIMIT = 4_000;

export interface HeldMount {
  /**
   * Unmount and wait for the keeper to end. Resolves once the mount is gone; `fallback` (the
   * usual `umount` of the mount point) is called when the keeper could not (it was killed, or
   * its unmount failed or took too long), and its error is the one thrown.
   */
  release(fallback: () => Promise<void>): Promise<void>;
}

/** Mount an overlay at `mountPoint` with `options`, held until `release`. */
export async function holdOverlay(options: string, mountPoint: string): Promise<HeldMount> {
  const keeper = spawn("sh", ["-c", KEEPER_SCRIPT, "sh", options, mountPoint], {
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  let stderr = "";
  keeper.stderr?.setEncoding("utf8");
  keeper.stderr?.on("data", (chunk: string) => {
    if (stderr.length < STDERR_LIMIT) stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => {
    keeper.once("close", (code) => resolve(code));
    keeper.once("error", () => resolve(null));
  });
  const mounted = await waitForMount(keeper, exited);
  if (!mounted) {
    throw new InfrastructureError(
      "env.overlay-mount-failed",
      `cannot mount an overlay workspace at ${mountPoint}: ${stderr.trim() || "the mount did not finish"}`,
    );
  }
  // The workspace's users keep the process alive, not the keeper: a library caller that never
  // disposes still lets Node exit, and the keeper then unmounts on the end of its input.
  setReferenced(keeper, false);
  let released: Promise<void> | undefined;
  return {
    release: (fallback) => {
      released ??= (async () => {
        setReferenced(keeper, true);
        keeper.stdin?.end();
        const code = await withTimeout(exited, UNMOUNT_TIMEOUT_MS);
        if (code === 0) return;
        killGroup(keeper);
        await fallback();
      })();
      return released;
    },
  };
}

/** Whether the keeper said `mounted` (false: it exited, failed to start, or took too long). */
async function waitForMount(
  keeper: ChildProcess,
  exited: Promise<number | null>,
): Promise<boolean> {
  let stdout = "";
  const said = new Promise<boolean>((resolve) => {
    keeper.stdout?.setEncoding("utf8");
    keeper.stdout?.on("data", (chunk: string) => {
      stdout += chunk;
      if (stdout.includes("mounted\n")) resolve(true);
    });
  });
  const outcome = await withTimeout(
    Promise.race([said, exited.then(() => false)]),
    MOUNT_TIMEOUT_MS,
  );
  if (outcome === true) return true;
  killGroup(keeper);
  return false;
}

function setReferenced(keeper: ChildProcess, referenced: boolean): void {
  for (const handle of [keeper, keeper.stdin, keeper.stdout, keeper.stderr]) {
    const target = handle as { ref?: () => void; unref?: () => void } | null;
    if (referenced) target?.ref?.();
    else target?.unref?.();
  }
}

function killGroup(keeper: ChildProcess): void {
  if (keeper.pid === undefined || keeper.exitCode !== null) return;
  try {
    process.kill(-keeper.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** `promise`'s value, or undefined after `ms`. */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
