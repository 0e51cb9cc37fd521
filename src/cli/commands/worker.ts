import type { Command } from "commander";
import { redactRedisUrl, runQueueWorker } from "../../bench/index.js";
import { defaultCacheDir } from "../../env/index.js";
import { type CommandContext, log, printJson } from "../context.js";
import { collect, positiveInteger } from "./bench-options.js";

export interface WorkerCommandOptions {
  /**
   * Stop signals of a long-running worker: the first asks it to finish its runs and stop, the
   * second abandons them. The default listens for SIGINT and SIGTERM; tests pass their own.
   */
  readonly stopSignals?: () => { readonly stop: AbortSignal; readonly force: AbortSignal };
}

function terminationSignals(): { stop: AbortSignal; force: AbortSignal } {
  const stop = new AbortController();
  const force = new AbortController();
  const onSignal = () => {
    if (!stop.signal.aborted) {
      stop.abort();
      return;
    }
    force.abort();
    // A third signal gets the default behaviour: with Redis unreachable, BullMQ's clean-up can
    // wait for it indefinitely, and the person asking three times wants the process gone.
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return { stop: stop.signal, force: force.signal };
}

interface WorkerOptions {
  queue: string;
  concurrency?: number;
  lockDuration?: number;
  allowUnsafe?: boolean;
  acceptBaseUrl?: string[];
  json?: boolean;
}

/** `skillsmith worker`: execute the runs `bench run --queue` enqueues on Redis. */
export function registerWorker(
  program: Command,
  context: CommandContext,
  commandOptions: WorkerCommandOptions = {},
): void {
  const { io } = context;
  program
    .command("worker")
    .description(
      "Execute the runs that `bench run --queue` enqueues on Redis (same sandboxes and agents); API keys come from this machine's environment",
    )
    .requiredOption(
      "--queue <url>",
      "redis://host:port/db or rediss://[user]:password@host:port/db (keep Redis off public networks)",
    )
    .option(
      "--concurrency <n>",
      "runs at the same time in this process (default 1)",
      positiveInteger("--concurrency"),
    )
    .option(
      "--lock-duration <ms>",
      "how long a run's lock lives without renewal; a killed worker's run is retried after it (default 30000)",
      positiveInteger("--lock-duration"),
    )
    .option(
      "--allow-unsafe",
      "accept runs enqueued with --sandbox unsafe (agents and verifiers without isolation)",
    )
    .option(
      "--accept-base-url <url>",
      "a model base URL a job may name when this worker (which sets none of its own) sends its API key there (repeatable)",
      collect,
      [],
    )
    .option("--json", "print {completed, failed} as JSON on stdout when stopped")
    .action(async (options: WorkerOptions) => {
      const signals = (commandOptions.stopSignals ?? terminationSignals)();
      log(io, `worker: ${redactRedisUrl(options.queue)}; stop with Ctrl-C (twice to abandon runs)`);
      const summary = await runQueueWorker({
        queue: options.queue,
        ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
        ...(options.lockDuration === undefined ? {} : { lockDurationMs: options.lockDuration }),
        allowUnsafe: options.allowUnsafe === true,
        ...((options.acceptBaseUrl ?? []).length === 0
          ? {}
          : { acceptBaseUrls: options.acceptBaseUrl }),
        cacheDir: defaultCacheDir(io.env),
        env: io.env,
        signal: signals.stop,
        forceSignal: signals.force,
        onLog: (message) => log(io, message),
      });
      if (options.json === true) printJson(io, summary);
      else log(io, `worker stopped: ${summary.completed} jobs completed, ${summary.failed} failed`);
    });
}
