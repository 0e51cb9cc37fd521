/**
 * The inventory of a verifier: the test ids it defines, fixed before any agent's code is near
 * it. It comes from running the verifier's own command (so its selection options, ini files and
 * file arguments apply) with skillsmith's plugin in `inventory` mode, in a sandbox whose
 * workspace is an empty folder: pytest collects, nothing runs. A module that cannot be collected
 * without the deliverable (it imports a module the requirement asks to create) is read from its
 * source instead: its test functions and methods with `ast`, each parametrised one with the
 * number of instances its literal `parametrize` lists give at least.
 *
 * The same run tells whether the command passes pytest's exit status on (the plugin ends the
 * session with status 1) and whether the JUnit file the verifier names gets written. A command
 * that never loads the plugin (not pytest, or pytest with its own `PYTEST_ADDOPTS`), starts
 * pytest more than once, or cannot collect is `opaque`: its runs are read the old way, with the
 * checks that still apply (see `assess.ts`).
 */
import type { CheckResult } from "../types.js";
import type { ChannelOutcome } from "./channel.js";

/**
 * Tests are identified by where they are, not by pytest's node id alone: a node id is relative to
 * pytest's root folder, which a repository's ini file can move. A test's id is its file's
 * location (`verifier:<path>` for the verifier's own files, `workspace:<path>` for the
 * repository's, else the absolute path inside the sandbox) followed by the node id's rest
 * (`verifier:tests/test_calc.py::TestSub::test_sub[1]`).
 */
export type Locate = (sandboxPath: string) => string;

/** A node id's canonical id (see `Locate`); the node id itself when pytest gave no path. */
export function canonicalId(
  nodeid: string,
  path: string | null | undefined,
  locate: Locate,
): string {
  if (path === null || path === undefined) return nodeid;
  return `${locate(path)}${nodeid.slice(moduleOf(nodeid).length)}`;
}

export interface InventoryModule {
  /** pytest's node id of the module (`tests/test_calc.py`) in the inventory run. */
  readonly nodeid: string;
  /** Its location (`verifier:tests/test_calc.py`). */
  readonly location: string;
  /** Its file relative to the verifier's root, when it is one of the verifier's files. */
  readonly file?: string;
  /** Whether it was collected (else its tests come from its source). */
  readonly collected: boolean;
  /** Its module-level test functions (canaries join these). */
  readonly functions: readonly string[];
}

export interface InventoryTest {
  /** The canonical id (see `Locate`). */
  readonly id: string;
  /** pytest's node id in the inventory run (for names when the test is not collected later). */
  readonly nodeid: string;
}

/** A test read from the source of a module that could not be collected. */
export interface DefinedTest {
  /** Canonical id without parameters (`verifier:test_calc.py::TestSub::test_sub`). */
  readonly base: string;
  /** The same as pytest's node id in the inventory run. */
  readonly nodeid: string;
  /** Instances the real run must collect at least (parametrised: `base[…]`). */
  readonly min: number;
  readonly parametrised: boolean;
  /** The literal marks fix the number of instances: more than `min` were added by someone else. */
  readonly exact?: boolean;
}

export interface PytestInventory {
  readonly kind: "pytest";
  /** The tests pytest collected, after the command's own selection. */
  readonly collected: readonly InventoryTest[];
  readonly defined: readonly DefinedTest[];
  readonly modules: readonly InventoryModule[];
  /** pytest's `python_functions` patterns (a canary's name must match them). */
  readonly functionPatterns: readonly string[];
  /** The command exits with pytest's exit status. */
  readonly exitStatusPropagates: boolean;
  /** The JUnit file the verifier names was written (so a missing one later was removed). */
  readonly junitWritten: boolean;
  /** Plugin modules the verifier's own test modules load with `pytest_plugins`. */
  readonly declaredPlugins: readonly string[];
  /**
   * Tripwire events the untouched repository itself raised while collecting (`event file:line`,
   * its own code using frames or ctypes at import): not the agent's, so not evidence later.
   */
  readonly tripwireBaseline?: readonly string[];
  readonly versions: { readonly python: string; readonly pytest: string };
}

export interface OpaqueInventory {
  readonly kind: "opaque";
  /** Why the channel cannot be used for this verifier. */
  readonly reason: string;
  /**
   * Checks in the JUnit report written with an empty workspace: a later run's report must list at
   * least as many (names are not compared: some verifiers name checks after where they ran).
   */
  readonly junitChecks: number;
}

export type VerifierInventory = PytestInventory | OpaqueInventory;

export interface InventoryRun {
  /**
   * `inventory`: the command collected only (the default). `inventory-run`: it also ran the
   * tests, on an untouched repository (see `runAndTakeInventory`): what its tests did after
   * collecting is no part of the inventory.
   */
  readonly mode?: "inventory" | "inventory-run";
  readonly outcome: ChannelOutcome;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  /** Checks of the JUnit report the verifier names, when it wrote one. */
  readonly junit: readonly CheckResult[] | undefined;
  /** A file's path inside the sandbox → relative to the verifier's root (undefined outside). */
  readonly verifierFile: (sandboxPath: string) => string | undefined;
  readonly locate: Locate;
  /** The command's output, for the reason of an opaque inventory. */
  readonly output: string;
}

function opaque(reason: string, run: InventoryRun): OpaqueInventory {
  return {
    kind: "opaque",
    reason,
    junitChecks: run.junit?.length ?? 0,
  };
}

function tail(text: string): string {
  const lines = text.trim().split("\n");
  return lines.slice(-3).join(" | ").slice(-300);
}

/** The module part of a node id (`a/test_x.py::T::t[1]` → `a/test_x.py`). */
export function moduleOf(nodeid: string): string {
  const end = nodeid.indexOf("::");
  return end < 0 ? nodeid : nodeid.slice(0, end);
}

/** A tripwire event by where it happened, the same in the inventory and in a run. */
export function tripwireKey(
  record: { readonly event: string; readonly file: string; readonly line: number },
  locate: Locate,
): string {
  return `${record.event} ${locate(record.file)}:${record.line}`;
}

function tripwireBaselineOf(run: InventoryRun): { tripwireBaseline?: readonly string[] } {
  const { records } = run.outcome;
  // After a run's collection, its tests ran: what they raised is not collecting's, and a
  // baseline only excuses what collecting the untouched repository raises.
  const collectedAt = records.findIndex((record) => record.type === "collected");
  const before =
    run.mode === "inventory-run" && collectedAt >= 0 ? records.slice(0, collectedAt) : records;
  const keys = before.flatMap((record) =>
    record.type === "tripwire" ? [tripwireKey(record, run.locate)] : [],
  );
  return keys.length === 0 ? {} : { tripwireBaseline: keys };
}

/**
 * The exit status the plugin ended a listing session with: always 1 for an inventory; for an
 * `inventory-run`, pytest's own status, 0 turned into 1 (see the plugin's docstring).
 */
function listingExitStatus(run: InventoryRun, finish: ChannelOutcome["records"][number]): number {
  if (run.mode !== "inventory-run" || finish.type !== "finish") return 1;
  return finish.exitstatus === 0 ? 1 : finish.exitstatus;
}

export function inventoryFromRun(run: InventoryRun): VerifierInventory {
  const { outcome } = run;
  if (run.timedOut) return opaque("collecting timed out", run);
  if (outcome.connections === 0) {
    return opaque(
      `the command did not load skillsmith's pytest plugin (not pytest, or pytest with its own PYTEST_ADDOPTS or PYTHONPATH); exit ${run.exitCode}${tail(run.output).trim() === "" ? "" : `: ${tail(run.output)}`}`,
      run,
    );
  }
  if (outcome.connections > 1) return opaque("the command starts pytest more than once", run);
  if (outcome.violations.length > 0) return opaque(outcome.violations.join("; "), run);
  const failure = outcome.records.find((record) => record.type === "plugin-error");
  if (failure?.type === "plugin-error") {
    return opaque(`skillsmith's pytest plugin failed in ${failure.where}: ${failure.error}`, run);
  }
  const start = outcome.records.find((record) => record.type === "start");
  const collected = outcome.records.find((record) => record.type === "collected");
  const finish = outcome.records.find((record) => record.type === "finish");
  if (start?.type !== "start" || collected?.type !== "collected" || finish === undefined) {
    return opaque(
      `pytest did not finish collecting (exit ${run.exitCode}): ${tail(run.output)}`,
      run,
    );
  }

  const unreadable = outcome.records.find(
    (record) => record.type === "collect-error" && record.defined === undefined,
  );
  if (unreadable?.type === "collect-error") {
    // A conftest, package or folder that fails to collect hides tests we cannot name.
    return opaque(
      `collecting ${unreadable.nodeid || "the session"} failed outside a test module: ${unreadable.message ?? ""}`,
      run,
    );
  }

  const modules = new Map<
    string,
    { location: string; file?: string; collected: boolean; functions: Set<string> }
  >();
  const moduleEntry = (nodeid: string, path: string | null | undefined, isCollected: boolean) => {
    let entry = modules.get(nodeid);
    if (entry === undefined) {
      const file = path === null || path === undefined ? undefined : run.verifierFile(path);
      entry = {
        location: path === null || path === undefined ? nodeid : run.locate(path),
        ...(file === undefined ? {} : { file }),
        collected: isCollected,
        functions: new Set(),
      };
      modules.set(nodeid, entry);
    }
    return entry;
  };
  for (const item of collected.items) {
    const entry = moduleEntry(moduleOf(item.nodeid), item.path, true);
    if (item.kind === "function") entry.functions.add(item.name);
  }
  const defined: DefinedTest[] = [];
  for (const record of outcome.records) {
    if (record.type !== "collect-error" || record.defined === undefined) continue;
    const entry = moduleEntry(record.nodeid, record.path, false);
    for (const test of record.defined) {
      const rest = test.base.slice(record.nodeid.length);
      defined.push({
        base: `${entry.location}${rest}`,
        nodeid: test.base,
        min: test.min,
        parametrised: test.parametrised,
        ...(test.exact === true ? { exact: true } : {}),
      });
      // Module-level functions are `<module>::<name>` with no class in between.
      if (!rest.slice(2).includes("::")) entry.functions.add(rest.slice(2));
    }
  }
  return {
    kind: "pytest",
    collected: collected.items.map((item) => ({
      id: canonicalId(item.nodeid, item.path, run.locate),
      nodeid: item.nodeid,
    })),
    defined,
    modules: [...modules.entries()].map(([nodeid, entry]) => ({
      nodeid,
      location: entry.location,
      ...(entry.file === undefined ? {} : { file: entry.file }),
      collected: entry.collected,
      functions: [...entry.functions].sort(),
    })),
    functionPatterns: start.python_functions ?? ["test"],
    exitStatusPropagates: run.exitCode === listingExitStatus(run, finish),
    junitWritten: run.junit !== undefined,
    ...tripwireBaselineOf(run),
    declaredPlugins: [
      ...new Set([
        ...(collected.declared_plugins ?? []),
        ...outcome.records.flatMap((record) =>
          record.type === "collect-error" ? (record.declared_plugins ?? []) : [],
        ),
      ]),
    ].sort(),
    versions: { python: start.python, pytest: start.pytest },
  };
}
