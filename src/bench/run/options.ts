/**
 * What a caller of `runSuite` (and the queue coordinator, which plans the same way) can ask for,
 * and what a run reports back.
 */
import type { AgentHarnessV1 } from "../../agents/index.js";
import type { SandboxKind, SandboxV1, SetupNetworkChoice } from "../../env/index.js";
import type { ModelPrice } from "../../model/index.js";
import type { SuiteCheck } from "../check/check.js";
import type { RunKey } from "../store/results.js";
import type { SuiteSelection } from "../suite/load.js";
import type { AgentKind, Configuration } from "../suite/schema.js";
import type { Suite } from "../suite/types.js";
import type { VariantOption } from "../suite/variants.js";
import type { RunListeners } from "./events.js";
import type { ModelEndpointOption } from "./model-endpoint.js";
import type { Predictions } from "./predictions.js";

/** A registered sandbox kind (`local`, `container`, `unsafe`, or one added with `registerSandbox`). */
export type { SandboxKind };

/**
 * What a run is asked for. Its parts: the inputs (suite, selection, configurations, variants,
 * predictions, run directory), the policy (repeats, concurrency, budget, attempts, check, reuse),
 * the environment (sandbox, cache, model endpoint, prices, images, network) and the listener
 * (`RunListeners`: one `onEvent`, or one callback per kind).
 */
export interface RunSuiteOptions extends RunListeners {
  /** A loaded suite, or the folder to load it from. */
  readonly suite: Suite | string;
  readonly runDir: string;
  /** Configuration ids to run; all of the suite's when absent. */
  readonly configs?: readonly string[];
  /** Replace the agent of every selected configuration. */
  readonly agentOverride?: AgentKind;
  /** Replace the model of every selected configuration. */
  readonly modelOverride?: string;
  readonly concurrency?: number;
  readonly repeats?: number;
  readonly budgetUsd?: number;
  /**
   * Runs already stored are always skipped; `resume: true` additionally requires the run
   * directory to hold an earlier run (so a typo in `--out` does not start afresh silently).
   */
  readonly resume?: boolean;
  /** The replay agent's recorded patches: a parsed set or a JSONL file path. */
  readonly predictions?: Predictions | string;
  /** A sandbox, or the kind to create (default `local`, i.e. bubblewrap). */
  readonly sandbox?: SandboxV1 | SandboxKind;
  /** Attempts per run key before it is given up (infrastructure failures only). Default 3. */
  readonly maxAttempts?: number;
  /** Where prepared bases and workspaces live; `defaultCacheDir()` when absent. */
  readonly cacheDir?: string;
  /** Endpoint and key for model-backed agents (a local gateway, the scripted server in tests). */
  readonly modelEndpoint?: ModelEndpointOption;
  /** Extra environment for agent processes. */
  readonly agentEnv?: Readonly<Record<string, string>>;
  /**
   * Prices that win over the built-in table (`model.prices` of the config): a run whose agent
   * reports tokens but no cost (Codex, builtin) costs its tokens at this price, for the budget.
   */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  /** Build the harness of a configuration (default: `createHarness` with this run's inputs). */
  readonly harnessFor?: (
    configuration: Configuration,
    defaults: () => AgentHarnessV1,
  ) => AgentHarnessV1;
  /**
   * Earlier run directories whose unassisted runs are reused when their fingerprint is this
   * run's (`./reuse.ts`); ignored with `freshBaseline`.
   */
  readonly reuse?: readonly string[];
  /** Run every unassisted run afresh even when `reuse` names sources. */
  readonly freshBaseline?: boolean;
  /** Recorded in the manifest. */
  readonly commandLine?: readonly string[];
  readonly signal?: AbortSignal;
  /** Which skills and requirements to run (`--skill`, `--requirement`); all when absent. */
  readonly selection?: SuiteSelection;
  /** Skill variants to add as arms (`--variant [skill:]name=dir`), beside the suite's own. */
  readonly variants?: readonly VariantOption[];
  /**
   * Run the verifier check first (default true; `--no-check` skips it): broken requirements get
   * no agent time and are stored flagged `broken-verifier`, weak ones run flagged
   * `weak-verifier`.
   */
  readonly check?: boolean;
  /** Share of checks passing untouched from which a verifier is weak (default ½). */
  readonly weakThreshold?: number;
  /** Setup's network: `auto` (default), `on`, `off`. */
  readonly setupNetwork?: SetupNetworkChoice;
  /** `FROM` image → local image, for environment-only tasks' Dockerfiles (`--base-image`). */
  readonly baseImages?: Readonly<Record<string, string>>;
}

export interface RunFailure {
  readonly key: RunKey;
  readonly attempts: number;
  readonly error: string;
}

export interface RunSuiteSummary {
  readonly runDir: string;
  readonly total: number;
  readonly alreadyDone: number;
  readonly executed: number;
  /** Unassisted runs copied from `reuse` sources instead of executed (included in `executed`). */
  readonly reused?: number;
  readonly failed: readonly RunFailure[];
  /** Runs not started because the budget was reached. */
  readonly notScheduled: number;
  /**
   * Runs stored without an agent because nothing could be measured: their skill's environment
   * failed (`environment-failure`) or the check found their verifier broken (`broken-verifier`).
   */
  readonly unmeasured?: number;
  /** Skills whose environment could not be prepared (or whose commit is missing), with why. */
  readonly environmentFailures?: readonly { readonly skill: string; readonly reason: string }[];
  /** The verifier check of this invocation, when it ran. */
  readonly check?: SuiteCheck;
  readonly stoppedByBudget: boolean;
  readonly aborted: boolean;
  readonly costUsd: number;
  readonly wallTimeMs: number;
}
