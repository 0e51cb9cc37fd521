import { spawn } from "node:child_process";
import { killGroup, liveGroups } from "./process-groups.js";

export interface RunOptions {
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Text written to the child's stdin, which is then closed. Without it stdin is closed at once. */
  readonly input?: string;
  /**
   * Bytes the child reads on file descriptor 3, which is then closed (bubblewrap reads its
   * seccomp program from a descriptor). Without it the child has no descriptor 3.
   */
  readonly descriptor3?: Uint8Array;
  /** Wall-clock limit; on expiry the whole process group gets SIGTERM, then SIGKILL after the grace. */
  readonly timeoutMs?: number;
  readonly killGraceMs?: number;
  /** Cap on captured bytes per stream, so a chatty child cannot exhaust memory. */
  readonly maxOutputBytes?: number;
  readonly signal?: AbortSignal;
  /** Called with each chunk of stdout as it arrives (for streaming logs and progress). */
  readonly onStdout?: (chunk: string) => void;
  readonly onStderr?: (chunk: string) => void;
}

export interface RunResult {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  readonly durationMs: number;
  /** Set when the program could not be started at all (e.g. ENOENT). */
  readonly spawnError?: NodeJS.ErrnoException;
}

export { killStartedProcessGroups } from "./process-groups.js";

/**
 * Run a program (argv form, no shell) in its own process group and capture its output. Never
 * rejects for the child's failure: the result says what happened. A timeout or abort kills the
 * whole tree: SIGTERM to the group, SIGKILL after `killGraceMs`.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const started = performance.now();
  const maxBytes = options.maxOutputBytes ?? 16 * 1024 * 1024;
  const grace = options.killGraceMs ?? 2_000;
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    let aborted = false;
    let spawnError: NodeJS.ErrnoException | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const child = spawn(command, [...args], {
      cwd: options.cwd,
      env: options.env === undefined ? process.env : stripUndefined(options.env),
      detached: true,
      stdio:
        options.descriptor3 === undefined
          ? ["pipe", "pipe", "pipe"]
          : ["pipe", "pipe", "pipe", "pipe"],
    });
    const group = child.pid;
    if (group !== undefined) liveGroups.add(group);

    const terminate = () => {
      if (group === undefined) return;
      killGroup(group, "SIGTERM");
      killTimer = setTimeout(() => killGroup(group, "SIGKILL"), grace);
      killTimer.unref();
    };
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            terminate();
          }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      terminate();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();

    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (stdout.length < maxBytes) stdout += chunk;
      options.onStdout?.(chunk);
    });
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < maxBytes) stderr += chunk;
      options.onStderr?.(chunk);
    });
    child.stdin.on("error", () => {
      // The child may exit without reading its input; that is not our failure.
    });
    child.stdin.end(options.input ?? "");
    const extra = child.stdio[3];
    if (
      options.descriptor3 !== undefined &&
      extra !== null &&
      extra !== undefined &&
      "write" in extra
    ) {
      extra.on("error", () => {
        // As with stdin: a child that exits without reading it is no failure of ours.
      });
      extra.end(options.descriptor3);
    }
    child.on("error", (error: NodeJS.ErrnoException) => {
      spawnError = error;
    });
    child.on("close", (exitCode, signal) => {
      if (timer !== undefined) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (group !== undefined) {
        // Grandchildren may outlive the leader (e.g. a backgrounded server): reap the group.
        killGroup(group, "SIGKILL");
        liveGroups.delete(group);
      }
      if (killTimer !== undefined) clearTimeout(killTimer);
      resolve({
        exitCode,
        signal,
        stdout: stdout.slice(0, maxBytes),
        stderr: stderr.slice(0, maxBytes),
        timedOut,
        aborted,
        durationMs: performance.now() - started,
        ...(spawnError === undefined ? {} : { spawnError }),
      });
    });
  });
}

function stripUndefined(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const clean: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) clean[key] = value;
  return clean;
}
