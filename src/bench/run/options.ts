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
import type { ExcludedPart, Suite } from "../suite/types.js";
import type { VariantOption } from "../suite/variants.js";
import type { RunListeners } from "./events.js";
import type { ModelEndpointOption } from "./model-endpoint.js";
import type { Predictions } from "./predictions.js";

/** A registered sandbox kind (`local`, `container`, `unsafe`, or one added with `registerSandbox`). */
export type { SandboxKind };

/**
 * What is run: the suite (a folder, a loaded suite, or a selection loaded with
 * `loadSuiteSelection` whose left-out parts are then reported as if the run had loaded it), which
 * of it, the configurations with their overrides, the variants, the replay predictions and the
 * run directory the results go to.
 */
export interface RunInputs {
  /**
   * The folder to load the suite from, a loaded suite, or a loaded selection (`{suite, excluded}`,
   * so a caller that loaded the suite already — the CLI, to name the run directory — hands it
   * over and it is not loaded twice).
   */
  readonly suite: Suite | string | LoadedSuiteSelection;
  readonly runDir: string;
  /** Which skills and requirements to run (`--skill`, `--requirement`); all when absent. */
  readonly selection?: SuiteSelection;
  /** Configuration ids to run; all of the suite's when absent. */
  readonly configs?: readonly string[];
  /** Replace the agent of every selected configuration. */
  readonly agentOverride?: AgentKind;
  /** Replace the model of every selected configuration. */
  readonly modelOverride?: string;
  /** Skill variants to add as arms (`--variant [skill:]name=dir`), beside the suite's own. */
  readonly variants?: readonly VariantOption[];
  /**
   * Distractor skills (absolute Agent Skills folders, `--distractor <dir>`) installed in every arm
   * of every skill, the unassisted one included, beside the suite's own (`distractors:`).
   */
  readonly distractors?: readonly string[];
  /** The replay agent's recorded patches: a parsed set or a JSONL file path. */
  readonly predictions?: Predictions | string;
  /** Recorded in the manifest. */
  readonly commandLine?: readonly string[];
}

/** How the run goes about it: repeats, lanes, budget, attempts, the check first, reuse. */
export interface RunPolicy {
  readonly repeats?: number;
  readonly concurrency?: number;
  readonly budgetUsd?: number;
  /** Attempts per run key before it is given up (infrastructure failures only). Default 3. */
  readonly maxAttempts?: number;
  /**
   * Runs already stored are always skipped; `resume: true` additionally requires the run
   * directory to hold an earlier run (so a typo in `--out` does not start afresh silently).
   */
  readonly resume?: boolean;
  /**
   * Run the verifier check first (default true; `--no-check` skips it): broken requirements get
   * no agent time and are stored flagged `broken-verifier`, weak ones run flagged
   * `weak-verifier`.
   */
  readonly check?: boolean;
  /** Share of checks passing untouched from which a verifier is weak (default ½). */
  readonly weakThreshold?: number;
  /**
   * Earlier run directories whose unassisted runs are reused when their fingerprint is this
   * run's (`./reuse.ts`); ignored with `freshBaseline`.
   */
  readonly reuse?: readonly string[];
  /** Run every unassisted run afresh even when `reuse` names sources. */
  readonly freshBaseline?: boolean;
}

/**
 * Where and with what the run executes: the sandbox, the cache of prepared bases, the model
 * endpoint and agent environment, prices, base images, setup's network, the harness factory and
 * the abort signal.
 */
export interface RunEnvironment {
  /** A sandbox, or the kind to create (default `local`, i.e. bubblewrap). */
  readonly sandbox?: SandboxV1 | SandboxKind;
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
  /** Setup's network: `auto` (default), `on`, `off`. */
  readonly setupNetwork?: SetupNetworkChoice;
  /** `FROM` image → local image, for environment-only tasks' Dockerfiles (`--base-image`). */
  readonly baseImages?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

/**
 * What a run is asked for, its four groups in one object: the inputs (`RunInputs`), the policy
 * (`RunPolicy`), the environment (`RunEnvironment`) and the listener (`RunListeners`: one
 * `onEvent`, or one callback per kind). Each stage takes only the groups it reads.
 */
export interface RunSuiteOptions extends RunInputs, RunPolicy, RunEnvironment, RunListeners {}

/** A suite selection as `loadSuiteSelection` returns it: what runs, and what was left out. */
export interface LoadedSuiteSelection {
  readonly suite: Suite;
  readonly excluded: readonly ExcludedPart[];
}

/** Whether `suite` is a loaded selection (`{suite, excluded}`) rather than a suite. */
export function isLoadedSelection(suite: RunInputs["suite"]): suite is LoadedSuiteSelection {
  return typeof suite === "object" && "excluded" in suite && "suite" in suite;
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
