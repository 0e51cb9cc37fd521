/**
 * The life of one run (protocol A.5), whoever executes it: a `RunSession` plans (options, suite,
 * keys), opens the run directory (manifest, store), gates (environments and the verifier check,
 * `gate.ts`), hands the runs worth an agent's time to its `Scheduler`, stores what comes back
 * (the weak-verifier flag, events) and sums up. Schedulers only decide *where and when* a run key
 * executes: `LocalScheduler` (`local-scheduler.ts`, lanes in this process) and the queue's
 * `QueueScheduler` (`../queue/coordinator.ts`, BullMQ workers). Everything a person can tell
 * apart between the two — what is stored, flagged, counted, reused, refused — lives here once.
 */
import { isAborted } from "../../core/limit.js";
import { defaultCacheDir, type SandboxKind, type SandboxV1 } from "../../env/index.js";
import { mergedUntouchedScores, type RunManifest, writeManifest } from "../store/manifest.js";
import type { ResultsStore, RunResult } from "../store/results.js";
import type { SuiteSkill } from "../suite/types.js";
import type { EnvironmentOutcome } from "./environments.js";
import { type RunEmitter, runEmitter, unenforcedLimitNotes } from "./events.js";
import { gateRuns, ungatedPending } from "./gate.js";
import type { RunFailure, RunSuiteOptions, RunSuiteSummary } from "./options.js";
import { openRunDirectory, type PlannedRun, planRun, type RunPlan } from "./plan.js";
import { openSandbox } from "./prepare.js";
import { progressReporter } from "./progress.js";
import { BaselineSources } from "./reuse.js";
import { storeRunResult } from "./store-result.js";
import { requireTaskImages } from "./task-environment.js";

/** What the session gives its scheduler: the runs to execute and where their results go. */
export interface ScheduledWork {
  readonly plan: RunPlan;
  readonly options: RunSuiteOptions;
  readonly store: ResultsStore;
  readonly manifest: RunManifest;
  /** The runs to execute, in plan order (the gate's verdict). */
  readonly pending: readonly PlannedRun[];
  /** The sandbox opened here, while the scheduler runs (only when it executes here). */
  readonly sandbox: SandboxV1 | undefined;
  /** Each skill's prepared environment, decided by the gate (only when it executes here). */
  readonly environmentFor: ((skill: SuiteSkill) => Promise<EnvironmentOutcome>) | undefined;
  /** `--reuse` sources, opened and refused by the session; undefined when nothing is reused. */
  readonly sources: BaselineSources | undefined;
  readonly tracker: RunTracker;
  readonly events: RunEmitter;
}

/** Executes run keys; the session owns everything else. */
export interface Scheduler {
  /** The sandbox runs execute in: one already open, or the kind to open (here or on workers). */
  readonly sandbox: SandboxV1 | SandboxKind;
  /**
   * Whether runs execute in this process: then the session keeps a sandbox open for the whole
   * run, checks task images and limit enforcement here, and always runs the gate (environments
   * are needed here); otherwise the gate runs here only for the verifier check.
   */
  readonly executesHere: boolean;
  /** Refuse what this scheduler cannot carry, and say what it changes, before anything is written. */
  admit?(options: RunSuiteOptions, events: RunEmitter): void;
  /** Execute `work.pending` (or stop early: budget, abort), reporting each outcome to the tracker. */
  execute(work: ScheduledWork): Promise<void>;
}

/**
 * The counters of one run and the one way results are stored: the scheduler reports what
 * happened, the tracker keeps the numbers, emits the events and applies the gate's flags.
 */
export class RunTracker {
  private done = 0;
  private reusedCount = 0;
  private runningCount = 0;
  private notScheduledCount = 0;
  private budgetStopped = false;
  private readonly failures: RunFailure[] = [];
  private started = performance.now();
  private total = 0;
  private weak: ReadonlySet<string> = new Set();
  private readonly report: ReturnType<typeof progressReporter>;

  constructor(
    private readonly store: ResultsStore,
    private readonly runDir: string,
    private readonly alreadyDone: number,
    private readonly options: Pick<RunSuiteOptions, "budgetUsd" | "signal">,
    private readonly events: RunEmitter,
  ) {
    this.report = progressReporter(
      events.listensToProgress
        ? { onProgress: (progress) => events.emit({ type: "progress", progress }) }
        : {},
      store,
      () => {
        const finished = this.done + this.failures.length;
        const remaining = Math.max(0, this.total - finished - this.notScheduledCount);
        const elapsed = performance.now() - this.started;
        return {
          total: this.total,
          alreadyDone,
          done: this.done,
          running: this.runningCount,
          failed: this.failures.length,
          etaMs: finished === 0 ? undefined : (elapsed / finished) * remaining,
        };
      },
    );
  }

  /**
   * The gate's verdict: `total` runs to execute now, and the weak verifiers (`skill/requirement`)
   * whose results are flagged. Execution (and the estimate of its end) starts here.
   */
  begin(total: number, weak: ReadonlySet<string>): void {
    this.total = total;
    this.weak = weak;
    this.started = performance.now();
  }

  /** Report the counters as they are now. */
  progress(): void {
    this.report();
  }

  aborted(): boolean {
    return isAborted(this.options.signal);
  }

  budgetReached(): boolean {
    const budget = this.options.budgetUsd;
    return budget !== undefined && this.store.totalCostUsd() >= budget;
  }

  /**
   * Whether another run may start: not once the signal aborted or the budget is reached; in the
   * latter case, with `remaining` runs not yet started, the run stopped for its budget.
   */
  mayStart(remaining: number): boolean {
    if (this.aborted()) return false;
    if (!this.budgetReached()) return true;
    if (remaining > 0) this.budgetStopped = true;
    return false;
  }

  get stoppedByBudget(): boolean {
    return this.budgetStopped;
  }

  /** How many runs execute now (the scheduler counts them its own way). */
  setRunning(count: number): void {
    this.runningCount = count;
  }

  /** Runs of this invocation never started (budget, abort). */
  notScheduled(count: number): void {
    this.notScheduledCount += count;
  }

  /**
   * Commit a result: flagged `weak-verifier` when the gate found its verifier weak (once, however
   * the result arrived), its raw log to a file when large; emits `run-stored` / `run-flagged`.
   */
  async storeResult(result: RunResult, reused = false): Promise<RunResult> {
    const flags =
      this.weak.has(`${result.skill}/${result.requirement}`) &&
      !result.flags.includes("weak-verifier")
        ? [...result.flags, "weak-verifier"]
        : result.flags;
    const stored = await storeRunResult(this.store, this.runDir, { ...result, flags });
    this.announce(stored, reused);
    return stored;
  }

  /** Commit a result the gate decided without running (no weak flag: nothing was measured). */
  async storeUnmeasured(result: RunResult): Promise<RunResult> {
    const stored = await storeRunResult(this.store, this.runDir, result);
    this.announce(stored, false);
    return stored;
  }

  /** A stored result counted as this invocation's: progress names it. */
  scored(run: PlannedRun, stored: Pick<RunResult, "status" | "passRatio">, reused = false): void {
    this.done += 1;
    if (reused) this.reusedCount += 1;
    this.report({ ...run.key, status: stored.status, passRatio: stored.passRatio });
  }

  /** A key given up: every attempt failed for infrastructure reasons (or its result was unusable). */
  failed(failure: RunFailure, reportProgress = true): void {
    this.failures.push(failure);
    if (reportProgress) this.report({ ...failure.key, status: "infra_error" });
  }

  summary(
    planned: number,
    gate: Pick<RunSuiteSummary, "unmeasured" | "environmentFailures" | "check">,
    sessionStarted: number,
  ): RunSuiteSummary {
    return {
      runDir: this.runDir,
      total: planned,
      alreadyDone: this.alreadyDone,
      executed: this.done,
      reused: this.reusedCount,
      ...gate,
      failed: [...this.failures],
      notScheduled: this.notScheduledCount,
      stoppedByBudget: this.budgetStopped,
      aborted: this.aborted(),
      costUsd: this.store.totalCostUsd(),
      wallTimeMs: performance.now() - sessionStarted,
    };
  }

  private announce(stored: RunResult, reused: boolean): void {
    const key = {
      config: stored.config,
      skill: stored.skill,
      requirement: stored.requirement,
      arm: stored.arm,
      repeat: stored.repeat,
    };
    this.events.emit({
      type: "run-stored",
      key,
      status: stored.status,
      passRatio: stored.passRatio,
      flags: stored.flags,
      reused,
    });
    if (stored.flags.length > 0)
      this.events.emit({ type: "run-flagged", key, flags: stored.flags });
  }
}

/** A sandbox of the session's, and whether the session disposes of it. */
interface OpenedSandbox {
  readonly sandbox: SandboxV1;
  own: boolean;
}

/** One run directory's plan → gate → execute → store → summary, with a scheduler. */
export class RunSession {
  readonly events: RunEmitter;

  constructor(
    private readonly options: RunSuiteOptions,
    private readonly scheduler: Scheduler,
  ) {
    this.events = runEmitter(options);
  }

  async run(): Promise<RunSuiteSummary> {
    const started = performance.now();
    const options = this.withEvents(this.options);
    const plan = await planRun(options);
    this.scheduler.admit?.(options, this.events);
    const sandbox = await this.openSandbox(plan, options);
    try {
      return await this.runWith(plan, options, sandbox, started);
    } finally {
      if (sandbox?.own === true) await sandbox.sandbox.dispose?.();
    }
  }

  /** The options with every callback routed through the session's events. */
  private withEvents(options: RunSuiteOptions): RunSuiteOptions {
    const {
      onEvent: _event,
      onProgress: _progress,
      onConnectionEvent: _connection,
      ...rest
    } = options;
    return {
      ...rest,
      onWarning: (message) => this.events.warn(message),
      onLog: (line) => this.events.log(line),
    };
  }

  /**
   * A sandbox here when runs execute here, or when the gate's verifier check needs one; for a
   * scheduler that executes elsewhere it serves the gate only.
   */
  private async openSandbox(
    plan: RunPlan,
    options: RunSuiteOptions,
  ): Promise<OpenedSandbox | undefined> {
    const { scheduler } = this;
    if (!scheduler.executesHere && options.check === false) return undefined;
    const own = typeof scheduler.sandbox !== "object";
    const sandbox =
      typeof scheduler.sandbox === "object"
        ? scheduler.sandbox
        : // openSandbox warns only of running without isolation.
          await openSandbox(scheduler.sandbox, (message) => this.events.warn(message, "danger"), [
            plan.suite.root,
            plan.runDir,
            options.cacheDir ?? defaultCacheDir(),
            ...(plan.predictions === undefined ? [] : [plan.predictions.file]),
          ]);
    if (!scheduler.executesHere) return { sandbox, own };
    // Environment-only tasks whose FROM images are not here: one error naming them all, whether
    // the sandbox was opened here or handed in.
    await requireTaskImages(plan.suite.skills, sandbox, options.baseImages).catch(async (error) => {
      if (own) await sandbox.dispose?.();
      throw error;
    });
    return { sandbox, own };
  }

  private async runWith(
    plan: RunPlan,
    options: RunSuiteOptions,
    opened: OpenedSandbox | undefined,
    started: number,
  ): Promise<RunSuiteSummary> {
    const { scheduler } = this;
    const sandbox = opened?.sandbox;
    const enforcement = scheduler.executesHere ? sandbox?.limitEnforcement?.() : undefined;
    if (enforcement !== undefined) {
      for (const note of unenforcedLimitNotes(enforcement)) {
        this.events.warn(`warning: sandbox limits: ${note}`, "warning");
      }
    }
    const sandboxKind =
      typeof scheduler.sandbox === "object" ? scheduler.sandbox.kind : scheduler.sandbox;
    const directory = await openRunDirectory(
      plan,
      options,
      sandbox?.kind ?? sandboxKind,
      enforcement,
    );
    const { store, planned, alreadyDone } = directory;
    let sources: BaselineSources | undefined;
    try {
      const tracker = new RunTracker(store, plan.runDir, alreadyDone, options, this.events);
      // Environments and the verifier check before any agent runs (see gate.ts); without a
      // sandbox here (a queue run with --no-check) the gate's earlier verdicts are re-decided.
      const gate =
        sandbox === undefined
          ? undefined
          : await gateRuns({
              suite: plan.suite,
              excluded: plan.excluded,
              store,
              planned,
              configurations: plan.configurations,
              repeats: plan.repeats,
              sandbox,
              cacheDir: options.cacheDir ?? defaultCacheDir(),
              options,
              record: (result) => tracker.storeUnmeasured(result),
            });
      if (opened?.own === true && !scheduler.executesHere) {
        // The sandbox served the gate; runs execute on workers.
        opened.own = false;
        await opened.sandbox.dispose?.();
      }
      const pending = gate?.pending ?? ungatedPending(store, planned, directory.pending);
      // Untouched scores add up over invocations: a resumed run checks only what is left to run.
      const manifest =
        gate === undefined
          ? directory.manifest
          : {
              ...directory.manifest,
              ...gate.manifest,
              ...mergedUntouchedScores(directory.manifest, gate.manifest),
            };
      if (gate !== undefined) await writeManifest(plan.runDir, manifest);
      sources =
        options.freshBaseline === true || (options.reuse ?? []).length === 0
          ? undefined
          : await BaselineSources.open(options.reuse ?? [], plan.runDir);
      tracker.begin(pending.length, gate?.weak ?? new Set());
      await scheduler.execute({
        plan,
        options,
        store,
        manifest,
        pending,
        sandbox: scheduler.executesHere ? sandbox : undefined,
        environmentFor: scheduler.executesHere ? gate?.environmentFor : undefined,
        sources,
        tracker,
        events: this.events,
      });
      await writeManifest(plan.runDir, { ...manifest, updatedAt: new Date().toISOString() });
      return tracker.summary(
        planned.length,
        gate === undefined
          ? {}
          : {
              unmeasured: gate.unmeasured,
              environmentFailures: gate.environmentFailures,
              ...(gate.check === undefined ? {} : { check: gate.check }),
            },
        started,
      );
    } finally {
      sources?.close();
      store.close();
    }
  }
}
