/**
 * The in-process scheduler: the session's pending runs on at most `concurrency` lanes
 * (`runLanes`), each executed with `executeWithRetries` in the session's sandbox. A lane asks for
 * its next run only when it is free, so the budget and the signal are checked between runs,
 * never in the middle of one. `--reuse` is decided here by this machine's fingerprint of a run.
 */
import type { AgentHarnessV1 } from "../../agents/index.js";
import { InternalError } from "../../core/errors.js";
import { runLanes } from "../../core/limit.js";
import type { PreparedBase, SandboxKind, SandboxV1 } from "../../env/index.js";
import { formatRunKey } from "../store/results.js";
import type { SuiteSkill } from "../suite/types.js";
import {
  type ExecutionContext,
  executeWithRetries,
  InfraFailure,
  type RetryPolicy,
} from "./execute.js";
import { modelSpecOf } from "./model-endpoint.js";
import type { RunSuiteOptions } from "./options.js";
import type { PlannedRun } from "./plan.js";
import { harnessesFor } from "./prepare.js";
import { fingerprints } from "./reuse.js";
import type { ScheduledWork, Scheduler } from "./session.js";

export interface LocalSchedulerOptions {
  /** A sandbox, or the kind the session opens (default `local`, i.e. bubblewrap). */
  readonly sandbox?: SandboxV1 | SandboxKind;
  /** Build the harness of a configuration (default: `createHarness` with this run's inputs). */
  readonly harnessFor?: RunSuiteOptions["harnessFor"];
}

export class LocalScheduler implements Scheduler {
  readonly sandbox: SandboxV1 | SandboxKind;
  readonly executesHere = true;
  private readonly harnessFor: RunSuiteOptions["harnessFor"];

  constructor(options: LocalSchedulerOptions = {}) {
    this.sandbox = options.sandbox ?? "local";
    this.harnessFor = options.harnessFor;
  }

  async execute(work: ScheduledWork): Promise<void> {
    const { plan, options, store, pending, tracker, sources } = work;
    const { sandbox, environmentFor } = work;
    if (sandbox === undefined || environmentFor === undefined) {
      throw new InternalError("bench.run-no-sandbox", "the local scheduler runs without a sandbox");
    }
    const baseFor = async (skill: SuiteSkill): Promise<PreparedBase> => {
      const outcome = await environmentFor(skill);
      if (outcome.ok) return outcome.base;
      throw new InfraFailure(outcome.reason);
    };
    const harnessOf = harnessesFor(plan.suite, plan.predictions, this.harnessFor, options.prices);
    const fingerprintOf = fingerprints({
      baseFor,
      harnessName: (configuration) => harnessOf(configuration).name,
      modelSpec: modelSpecOf,
      agentVersions: work.manifest.versions.agents,
      sandbox: sandbox.kind,
      ...(plan.predictions === undefined
        ? {}
        : { replayPatch: (run: PlannedRun) => plan.predictions?.patchFor(run.key) }),
    });
    const context: ExecutionContext = {
      sandbox,
      baseFor,
      harnessOf: (configuration): AgentHarnessV1 => harnessOf(configuration),
      ...(options.modelEndpoint === undefined ? {} : { modelEndpoint: options.modelEndpoint }),
      ...(options.agentEnv === undefined ? {} : { agentEnv: options.agentEnv }),
      ...(options.prices === undefined ? {} : { prices: options.prices }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
    const byKey = new Map(pending.map((run) => [formatRunKey(run.key), run]));
    const retry: RetryPolicy = {
      ledger: store,
      maxAttempts: plan.maxAttempts,
      record: async (result) => {
        const run = byKey.get(formatRunKey(result));
        const fingerprint = run === undefined ? undefined : await fingerprintOf(run);
        return tracker.storeResult(fingerprint === undefined ? result : { ...result, fingerprint });
      },
      onWarning: (message) => work.events.warn(message, "warning"),
    };
    let next = 0;
    let running = 0;
    const take = (): PlannedRun | undefined => {
      if (!tracker.mayStart(pending.length - next)) return undefined;
      const run = pending[next];
      if (run === undefined) return undefined;
      next += 1;
      running += 1;
      tracker.setRunning(running);
      tracker.progress();
      return run;
    };
    const execute = async (run: PlannedRun): Promise<void> => {
      const copied =
        sources === undefined
          ? undefined
          : await sources.reuse(run, await fingerprintOf(run), plan.runDir);
      if (copied !== undefined) {
        const stored = await tracker.storeResult(copied, true);
        running -= 1;
        tracker.setRunning(running);
        tracker.scored(run, stored, true);
        return;
      }
      const outcome = await executeWithRetries(run, context, retry);
      running -= 1;
      tracker.setRunning(running);
      if (outcome.kind === "scored") tracker.scored(run, outcome.result);
      else if (outcome.kind === "failed") tracker.failed(outcome.failure);
      else tracker.progress();
    };
    tracker.progress();
    try {
      await runLanes(plan.concurrency, take, execute);
    } finally {
      tracker.notScheduled(pending.length - next);
    }
  }
}
