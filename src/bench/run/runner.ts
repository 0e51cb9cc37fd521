/**
 * The paired runner (protocol A.5), scheduled in this process: a `RunSession` (`session.ts`)
 * with the `LocalScheduler` (`local-scheduler.ts`). For every configuration × skill ×
 * requirement × arm × repeat not yet in the store, run it with `executeWithRetries` on at most
 * `concurrency` lanes, until the work is done, the budget is reached or the signal aborts.
 *
 * The flow, a module each: `plan.ts` (options, keys, run directory and manifest), `gate.ts`
 * (environments and the verifier check before any agent runs), `prepare.ts` (sandbox, bases,
 * harnesses), `execute.ts` (one run: workspace → agent → verifier → result, with retries),
 * `store-result.ts` (committing a result), `progress.ts` (counters), `events.ts` (what a listener
 * hears). The queue path (`../queue/`) is the same session with another scheduler.
 */
import { LocalScheduler } from "./local-scheduler.js";
import type { RunSuiteOptions, RunSuiteSummary } from "./options.js";
import { RunSession } from "./session.js";

/** Run every missing run of a suite in this process; see the module comment. */
export async function runSuite(options: RunSuiteOptions): Promise<RunSuiteSummary> {
  const scheduler = new LocalScheduler({
    ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
    ...(options.harnessFor === undefined ? {} : { harnessFor: options.harnessFor }),
  });
  return new RunSession(options, scheduler).run();
}
