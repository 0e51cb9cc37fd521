/**
 * The paired runner (protocol A.5), scheduled in this process: for every configuration × skill ×
 * requirement × arm × repeat not yet in the store, run it with `executeWithRetries` on at most
 * `concurrency` lanes, until the work is done, the budget is reached or the signal aborts.
 *
 * The flow, a module each: `plan.ts` (options, keys, run directory and manifest), `gate.ts`
 * (environments and the verifier check before any agent runs), `prepare.ts` (sandbox, bases,
 * harnesses), `execute.ts` (one run: workspace → agent → verifier → result, with retries),
 * `store-result.ts` (committing a result), `progress.ts` (counters). The queue path
 * (`../queue/`) plans and executes with the same functions; only the scheduling differs.
 */
import { runLanes } from "../../core/limit.js";
import { defaultCacheDir, type PreparedBase } from "../../env/index.js";
import { writeManifest } from "../store/manifest.js";
import { formatRunKey } from "../store/results.js";
import type { SuiteSkill } from "../suite/types.js";
import {
  type ExecutionContext,
  executeWithRetries,
  InfraFailure,
  type RetryPolicy,
} from "./execute.js";
import { gateRuns } from "./gate.js";
import { modelSpecOf } from "./model-endpoint.js";
import type { RunFailure, RunSuiteOptions, RunSuiteSummary } from "./options.js";
import { openRunDirectory, type PlannedRun, planRun } from "./plan.js";
import { harnessesFor, openSandbox } from "./prepare.js";
import { progressReporter } from "./progress.js";
import { BaselineSources, fingerprints } from "./reuse.js";
import { storeRunResult } from "./store-result.js";
import { requireTaskImages } from "./task-environment.js";

/** Run every missing run of a suite; see the module comment. */
export async function runSuite(options: RunSuiteOptions): Promise<RunSuiteSummary> {
  const started = performance.now();
  const plan = await planRun(options);
  const { suite, runDir, concurrency, maxAttempts } = plan;

  const ownSandbox = typeof options.sandbox === "string" || options.sandbox === undefined;
  const sandbox =
    typeof options.sandbox === "object"
      ? options.sandbox
      : await openSandbox(options.sandbox ?? "local", options.onWarning, [
          suite.root,
          runDir,
          options.cacheDir ?? defaultCacheDir(),
          ...(plan.predictions === undefined ? [] : [plan.predictions.file]),
        ]);

  // Environment-only tasks whose FROM images are not here: one error naming them all.
  await requireTaskImages(suite.skills, sandbox, options.baseImages).catch(async (error) => {
    if (ownSandbox) await sandbox.dispose?.();
    throw error;
  });
  const enforcement = sandbox.limitEnforcement?.();
  for (const note of enforcement?.notes ?? []) {
    if (note.includes("NOT")) options.onWarning?.(`warning: sandbox limits: ${note}`);
  }
  const opened = await openRunDirectory(plan, options, sandbox.kind, enforcement);
  const { store, planned, alreadyDone } = opened;
  let { manifest } = opened;
  try {
    const cacheDir = options.cacheDir ?? defaultCacheDir();
    // Environments and the verifier check before any agent runs (see gate.ts).
    const gate = await gateRuns({
      suite,
      excluded: plan.excluded,
      store,
      planned,
      configurations: plan.configurations,
      repeats: plan.repeats,
      sandbox,
      cacheDir,
      options,
      record: (result) => storeRunResult(store, runDir, result),
    });
    const pending = gate.pending;
    manifest = { ...manifest, ...gate.manifest };
    await writeManifest(runDir, manifest);
    const baseFor = async (skill: SuiteSkill): Promise<PreparedBase> => {
      const outcome = await gate.environmentFor(skill);
      if (outcome.ok) return outcome.base;
      throw new InfraFailure(outcome.reason);
    };
    const harnessOf = harnessesFor(suite, plan.predictions, options.harnessFor, options.prices);
    const fingerprintOf = fingerprints({
      baseFor,
      harnessName: (configuration) => harnessOf(configuration).name,
      modelSpec: modelSpecOf,
      agentVersions: manifest.versions.agents,
      sandbox: sandbox.kind,
      ...(plan.predictions === undefined
        ? {}
        : {
            replayPatch: (run: PlannedRun) =>
              plan.predictions?.patchFor({ ...run.key, arm: run.key.arm }),
          }),
    });
    const byKey = new Map(planned.map((run) => [formatRunKey(run.key), run]));
    const sources =
      options.freshBaseline === true || (options.reuse ?? []).length === 0
        ? undefined
        : await BaselineSources.open(options.reuse ?? [], runDir);
    let reused = 0;

    let done = 0;
    let running = 0;
    const failed: RunFailure[] = [];
    let stoppedByBudget = false;
    let executedMs = 0;
    let finishedRuns = 0;
    let next = 0;
    const progress = progressReporter(options, store, () => {
      const remaining = pending.length - next + running;
      const average = finishedRuns === 0 ? undefined : executedMs / finishedRuns;
      const etaMs = average === undefined ? undefined : (average * remaining) / concurrency;
      return { total: pending.length, alreadyDone, done, running, failed: failed.length, etaMs };
    });
    progress();

    const context: ExecutionContext = {
      sandbox,
      baseFor,
      harnessOf,
      ...(options.modelEndpoint === undefined ? {} : { modelEndpoint: options.modelEndpoint }),
      ...(options.agentEnv === undefined ? {} : { agentEnv: options.agentEnv }),
      ...(options.prices === undefined ? {} : { prices: options.prices }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
    const retry: RetryPolicy = {
      ledger: store,
      maxAttempts,
      record: async (result) => {
        const run = byKey.get(formatRunKey(result));
        const fingerprint = run === undefined ? undefined : await fingerprintOf(run);
        const flags = gate.weak.has(`${result.skill}/${result.requirement}`)
          ? [...result.flags, "weak-verifier"]
          : result.flags;
        return storeRunResult(store, runDir, {
          ...result,
          flags,
          ...(fingerprint === undefined ? {} : { fingerprint }),
        });
      },
      ...(options.onWarning === undefined ? {} : { onWarning: options.onWarning }),
    };
    // A lane asks for its next run only when it is free, so the budget and the signal are checked
    // between runs, never in the middle of one.
    const take = (): PlannedRun | undefined => {
      if (options.signal?.aborted === true) return undefined;
      if (options.budgetUsd !== undefined && store.totalCostUsd() >= options.budgetUsd) {
        if (next < pending.length) stoppedByBudget = true;
        return undefined;
      }
      const run = pending[next];
      if (run === undefined) return undefined;
      next += 1;
      running += 1;
      progress();
      return run;
    };
    const execute = async (run: PlannedRun): Promise<void> => {
      const copied =
        sources === undefined
          ? undefined
          : await sources.reuse(run, await fingerprintOf(run), runDir);
      if (copied !== undefined) {
        const stored = await storeRunResult(store, runDir, copied);
        running -= 1;
        done += 1;
        reused += 1;
        progress({ ...run.key, status: stored.status, passRatio: stored.passRatio });
        return;
      }
      const runStarted = performance.now();
      const outcome = await executeWithRetries(run, context, retry);
      running -= 1;
      executedMs += performance.now() - runStarted;
      finishedRuns += 1;
      if (outcome.kind === "scored") {
        done += 1;
        progress({
          ...run.key,
          status: outcome.result.status,
          passRatio: outcome.result.passRatio,
        });
      } else if (outcome.kind === "failed") {
        failed.push(outcome.failure);
        progress({ ...run.key, status: "infra_error" });
      } else {
        progress();
      }
    };
    try {
      await runLanes(concurrency, take, execute);
    } finally {
      sources?.close();
      if (ownSandbox) await sandbox.dispose?.();
    }
    await writeManifest(runDir, { ...manifest, updatedAt: new Date().toISOString() });
    return {
      runDir,
      total: planned.length,
      alreadyDone,
      executed: done,
      reused,
      failed,
      notScheduled: pending.length - next,
      stoppedByBudget,
      aborted: options.signal?.aborted === true,
      costUsd: store.totalCostUsd(),
      wallTimeMs: performance.now() - started,
      unmeasured: gate.unmeasured,
      environmentFailures: gate.environmentFailures,
      ...(gate.check === undefined ? {} : { check: gate.check }),
    };
  } finally {
    store.close();
  }
}
