/**
 * The two verifier runs the integrity checks need, independent of where a verifier's files live
 * (`runVerifier` copies them into the workspace, suite verifiers mount them beside it): the
 * inventory run (the command in `inventory` mode on an empty workspace) and a scored run with
 * the channel open. Callers supply `execute`, which runs the command in their sandbox with the
 * channel's environment and mounts added, and the path mappings only they know.
 */
import { readFile, writeFile } from "node:fs/promises";
import { unlessMissing } from "../../../core/fs.js";
import type { Mount, SandboxExecResult } from "../../sandbox/types.js";
import { flagForLimit } from "../flags.js";
import type { CheckResult } from "../types.js";
import { assessChannelRun, type IntegrityAssessment, type IntegrityFlag } from "./assess.js";
import { type Canary, type CanaryPlan, canarySource, planCanaries } from "./canary.js";
import type { ChannelOutcome } from "./channel.js";
import {
  inventoryFromRun,
  type Locate,
  type OpaqueInventory,
  type PytestInventory,
  type VerifierInventory,
} from "./inventory.js";
import { openVerifierChannel } from "./plugin.js";

export interface ChannelAdditions {
  readonly env: Readonly<Record<string, string>>;
  readonly mounts: readonly Mount[];
}

export interface IntegritySessionOptions {
  /** Run the verifier's command with these added; resolves when its process tree has ended. */
  readonly execute: (additions: ChannelAdditions) => Promise<SandboxExecResult>;
  /** The sandbox has no mount namespace (`unsafe`): the plugin gets host paths. */
  readonly hostPaths: boolean;
  /** The verifier's own environment, merged with the channel's (PYTEST_ADDOPTS, PYTHONPATH). */
  readonly env?: Readonly<Record<string, string>>;
  /** The shared bytecode cache's host folder (`verifierBytecodeCache`), when the sandbox has one. */
  readonly bytecodeCache?: string;
}

/**
 * Open a channel with `hello`, run the verifier's command over it, and close it once the
 * command has ended (also when it threw): what the command returned and what the plugin sent.
 */
async function executeOverChannel(
  hello: Parameters<typeof openVerifierChannel>[0],
  options: IntegritySessionOptions,
): Promise<{ execution: SandboxExecResult; outcome: ChannelOutcome }> {
  const channel = await openVerifierChannel(hello, {
    hostPaths: options.hostPaths,
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.bytecodeCache === undefined ? {} : { bytecodeCache: options.bytecodeCache }),
  });
  let execution: SandboxExecResult;
  let outcome: ChannelOutcome;
  try {
    execution = await options.execute({ env: channel.env, mounts: channel.mounts });
  } finally {
    outcome = await channel.finish();
  }
  return { execution, outcome };
}

/** Take a verifier's inventory: its command, plugin in `inventory` mode, an empty workspace. */
export async function takeInventory(
  options: IntegritySessionOptions & {
    readonly readJunit: () => Promise<readonly CheckResult[] | undefined>;
    readonly verifierFile: (sandboxPath: string) => string | undefined;
    readonly locate: Locate;
  },
): Promise<VerifierInventory> {
  const { execution, outcome } = await executeOverChannel(
    { mode: "inventory", canaries: [] },
    options,
  );
  return inventoryFromRun({
    outcome,
    exitCode: execution.exitCode,
    timedOut: execution.timedOut,
    junit: await options.readJunit(),
    verifierFile: options.verifierFile,
    locate: options.locate,
    output: `${execution.stdout}\n${execution.stderr}`,
  });
}

/** What one `inventory-run` session gave (`runAndTakeInventory`). */
export type ListedRun =
  /** The inventory, and the run scored against it as a scored run would be (no canaries). */
  | { readonly kind: "scored"; readonly inventory: PytestInventory; readonly run: ScoredChannelRun }
  /**
   * The plugin never loaded (not pytest, or pytest told to skip it), so the session was the plain
   * command: its opaque inventory is the one an inventory run gives, and the run is to be read
   * the plain way.
   */
  | { readonly kind: "opaque"; readonly inventory: OpaqueInventory }
  /** Neither can be trusted from this session (timed out, limit hit, …): take them apart. */
  | { readonly kind: "unusable"; readonly reason: string };

/**
 * Run the verifier on an untouched repository (`bench check`'s run, where no agent's code is
 * near) and take its inventory from the same pytest session: the plugin in `inventory-run` mode
 * reports what an inventory reports while the tests run. What it collected is the inventory; the
 * run is assessed against it like any scored run, except that its exit status is not compared
 * (the plugin turns a passing session's 0 into 1, to learn whether the command passes it on).
 */
export async function runAndTakeInventory(
  options: IntegritySessionOptions & {
    readonly readJunit: () => Promise<readonly CheckResult[] | "missing" | undefined>;
    readonly verifierFile: (sandboxPath: string) => string | undefined;
    readonly conftestAllowed: (sandboxPath: string) => boolean;
    readonly locate: Locate;
  },
): Promise<ListedRun> {
  const { execution, outcome } = await executeOverChannel(
    { mode: "inventory-run", canaries: [] },
    options,
  );
  if (execution.timedOut || execution.limitHit !== undefined) {
    // Running the tests may take longer than collecting them: no verdict on the inventory.
    return { kind: "unusable", reason: "the run hit a limit" };
  }
  const junit = await options.readJunit();
  const inventory = inventoryFromRun({
    mode: "inventory-run",
    outcome,
    exitCode: execution.exitCode,
    timedOut: false,
    junit: junit === "missing" ? undefined : junit,
    verifierFile: options.verifierFile,
    locate: options.locate,
    output: `${execution.stdout}\n${execution.stderr}`,
  });
  if (inventory.kind === "opaque") {
    return outcome.connections === 0
      ? { kind: "opaque", inventory }
      : { kind: "unusable", reason: inventory.reason };
  }
  const assessment = assessChannelRun({
    inventory: { ...inventory, exitStatusPropagates: false },
    canaries: [],
    outcome,
    exitCode: execution.exitCode,
    timedOut: false,
    junit,
    conftestAllowed: options.conftestAllowed,
    locate: options.locate,
  });
  return { kind: "scored", inventory, run: { execution, assessment, canaries: [], outcome } };
}

/**
 * Plan this run's canaries and append them to the module they join, in the run's own copy of
 * the verifier (`hostFile` maps a verifier-relative file to that copy). Undefined when the
 * verifier has no module to put them in.
 */
export async function injectCanaries(
  inventory: PytestInventory,
  hostFile: (file: string) => string,
): Promise<CanaryPlan | undefined> {
  const sources = new Map<string, string>();
  for (const module of inventory.modules) {
    if (module.file === undefined || !module.file.endsWith(".py")) continue;
    // A module that is not there gets no canary; one that is there but unreadable is an
    // error naming it (silently skipped, it would weaken the tamper check unnoticed).
    const path = hostFile(module.file);
    const text = await unlessMissing(path, readFile(path, "utf8"));
    if (text !== undefined) sources.set(module.file, text);
  }
  const usable: PytestInventory = {
    ...inventory,
    modules: inventory.modules.filter(
      (module) => module.file !== undefined && sources.has(module.file),
    ),
  };
  const plan = planCanaries(usable, (file) => sources.get(file) ?? "");
  if (plan === undefined) return undefined;
  const source = sources.get(plan.file) ?? "";
  await writeFile(hostFile(plan.file), `${source}${canarySource(plan, source)}`);
  return plan;
}

export interface ScoredChannelRun {
  readonly execution: SandboxExecResult;
  readonly assessment: IntegrityAssessment;
  readonly canaries: readonly Canary[];
  /** What came over the channel (a Harbor reward is reconciled with it: `reward-check.ts`). */
  readonly outcome: ChannelOutcome;
}

/**
 * Run the verifier with the channel open and assess what came back. `plan` is this run's
 * canaries (`injectCanaries`); `sandboxPathOf` maps a verifier file to where the sandbox shows it,
 * so the plugin can recognise them by file and name.
 */
export async function runWithChannel(
  options: IntegritySessionOptions & {
    readonly inventory: PytestInventory;
    readonly plan: CanaryPlan | undefined;
    readonly sandboxPathOf: (file: string) => string;
    readonly readJunit: () => Promise<readonly CheckResult[] | "missing" | undefined>;
    readonly conftestAllowed: (sandboxPath: string) => boolean;
    readonly locate: Locate;
  },
): Promise<ScoredChannelRun> {
  const { plan } = options;
  const canaries = plan?.canaries ?? [];
  const canaryFile = plan === undefined ? "" : options.sandboxPathOf(plan.file);
  const { execution, outcome } = await executeOverChannel(
    { mode: "run", canaries: canaries.map((canary) => `${canaryFile}::${canary.name}`) },
    options,
  );
  const assessment = assessChannelRun({
    inventory: options.inventory,
    canaries,
    outcome,
    exitCode: execution.exitCode,
    timedOut: execution.timedOut,
    junit: await options.readJunit(),
    conftestAllowed: options.conftestAllowed,
    locate: options.locate,
  });
  return { execution, assessment, canaries, outcome };
}

/**
 * For verifiers the channel cannot serve: the scored run's JUnit report must list at least the
 * checks the one written with an empty workspace lists (fewer: some were removed). Evidence, or
 * undefined when the check holds.
 */
export function junitShortfall(
  inventoryChecks: number,
  checks: readonly CheckResult[] | undefined,
): string | undefined {
  if (inventoryChecks === 0) return undefined;
  if (checks === undefined) {
    return `junit: the JUnit report is gone, though the verifier writes one (${inventoryChecks} check(s)) even with an empty workspace`;
  }
  if (checks.length >= inventoryChecks) return undefined;
  return `id set: the JUnit report lists ${checks.length} check(s), fewer than the ${inventoryChecks} it lists with an empty workspace`;
}

/**
 * A sandbox limit the verifier hit (`SandboxExecResult.limitHit`; a timeout counts) is the
 * verdict on the run: its flag (`oom`, `process-limit`, `timeout`) first, with the limit's own
 * detail as evidence, score 0. Whatever else the assessment found stays beside it.
 */
export function withLimitHit(
  assessment: IntegrityAssessment,
  execution: SandboxExecResult,
): {
  readonly flags: readonly (IntegrityFlag | ReturnType<typeof flagForLimit>)[];
  readonly evidence: readonly string[];
  readonly passRatio: number;
} {
  const hit = execution.limitHit ?? (execution.timedOut ? { limit: "time" as const } : undefined);
  if (hit === undefined) return assessment;
  const flag = flagForLimit(hit.limit);
  return {
    flags: [flag, ...assessment.flags.filter((other) => other !== flag && other !== "no-checks")],
    evidence: [
      ...(execution.limitHit === undefined ? [] : [execution.limitHit.detail]),
      ...assessment.evidence,
    ],
    passRatio: 0,
  };
}

/** A memo of inventories by key; a failed inventory is retried by the next caller. */
export class InventoryMemo {
  private readonly entries = new Map<string, Promise<VerifierInventory>>();

  /** Whether `key` is taken or being taken in this process. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  get(key: string, take: () => Promise<VerifierInventory>): Promise<VerifierInventory> {
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = take();
      this.entries.set(key, entry);
      entry.catch(() => this.entries.delete(key));
    }
    return entry;
  }
}
