/**
 * From what came over the channel to a score: the checks of the verifier's own tests (canaries
 * left out) and, when a cross-check fails, the flag `tampered` with one line of evidence per
 * failed check. Pure: everything it needs is in its input, so each rule is unit-tested.
 *
 * The cross-checks (each line of evidence starts with the check's name):
 * - `channel`: the plugin connected (it did for the inventory), every record authenticated and in
 *   sequence, one connection, nothing after the last record;
 * - `plugins`: no pytest plugin registered after the session started (but those the verifier's
 *   own modules declare in `pytest_plugins`), no conftest.py loaded from outside the verifier and
 *   the repository; `plugin`: skillsmith's plugin did not fail;
 * - `id set`: the tests collected are exactly the inventory's plus the canaries (a module that
 *   failed to collect excuses its own tests: that is a collection error, not tampering);
 * - `outcomes`: one outcome per collected test, none for a test never collected, and no test
 *   reported passed whose function raised or never ran;
 * - `runner`: no module of the workspace was imported before the plugin; pytest's runner
 *   internals, the tracer and the test functions' code were not replaced;
 * - `canary`: the must-fail canary did not pass, the must-pass canary passed;
 * - `exit status`: a session that did not finish did not exit 0; pytest's own exit status agrees
 *   with the outcomes; the command's exit status is pytest's when the inventory showed it passes
 *   it on;
 * - `junit`: the JUnit file, when the verifier names one, was not removed and claims as many
 *   passes as the channel.
 */
import type { CheckResult, CheckStatus } from "../types.js";
import type { Canary } from "./canary.js";
import type { ChannelOutcome, ResultRecord } from "./channel.js";
import {
  canonicalId,
  type DefinedTest,
  type Locate,
  moduleOf,
  type PytestInventory,
  tripwireKey,
} from "./inventory.js";

export type IntegrityFlag = "tampered" | "collection-error" | "timeout" | "no-checks";

export interface ChannelRunInput {
  readonly inventory: PytestInventory;
  readonly canaries: readonly Canary[];
  readonly outcome: ChannelOutcome;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  /** The JUnit report the verifier names: its checks, `"missing"`, or undefined when it names none. */
  readonly junit: readonly CheckResult[] | "missing" | undefined;
  /** Whether a conftest.py loaded during the session is legitimately there. */
  readonly conftestAllowed: (sandboxPath: string) => boolean;
  /** This run's paths → locations, as for the inventory (`inventory.ts`). */
  readonly locate: Locate;
}

export interface IntegrityAssessment {
  /** The verifier's own tests (canaries left out), named as in a JUnit report. */
  readonly checks: readonly CheckResult[];
  readonly passed: number;
  readonly total: number;
  readonly passRatio: number;
  readonly flags: readonly IntegrityFlag[];
  /** One line per failed cross-check, `<check>: <what was found>`. */
  readonly evidence: readonly string[];
}

/** pytest's JUnit naming of a node id, as `parseJunitXml` shows it (`classname::name`). */
export function junitName(nodeid: string): string {
  const bracket = nodeid.indexOf("[");
  const path = bracket < 0 ? nodeid : nodeid.slice(0, bracket);
  const parameters = bracket < 0 ? "" : nodeid.slice(bracket);
  const names = path.split("::");
  names[0] = (names[0] ?? "").replaceAll("/", ".").replace(/\.py$/, "");
  const name = `${names.pop() ?? ""}${parameters}`;
  const classname = names.join(".");
  return classname === "" ? name : `${classname}::${name}`;
}

/** Whether a test is an instance of one read from source (`base` or `base[…]`). */
function instanceOf(id: string, test: DefinedTest): boolean {
  return id === test.base || id.startsWith(`${test.base}[`);
}

const LIST_LIMIT = 8;

function listed(ids: readonly string[]): string {
  const shown = ids.slice(0, LIST_LIMIT).join(", ");
  return ids.length > LIST_LIMIT ? `${shown} and ${ids.length - LIST_LIMIT} more` : shown;
}

interface Judged {
  readonly status: CheckStatus;
  readonly message?: string;
  /** Why the outcome contradicts what the plugin saw, when it does. */
  readonly contradiction?: string;
}

/** A test's status from its phase reports, checked against what the plugin observed. */
export function judgeResult(result: ResultRecord): Judged {
  const { setup, call, teardown } = result.phases;
  const message = (phase: string) => result.messages[phase];
  const withMessage = (status: CheckStatus, phase: string): Judged => {
    const text = message(phase);
    return text === undefined ? { status } : { status, message: text };
  };
  if (setup === undefined) {
    return {
      status: "error",
      message: "no setup phase was reported",
      contradiction: "no setup phase was reported",
    };
  }
  if (setup === "failed") return withMessage("error", "setup");
  if (setup === "skipped") return withMessage("skip", "setup");
  if (call === undefined) {
    return {
      status: "error",
      message: "no call phase was reported",
      contradiction: "its setup passed, but no call phase was reported",
    };
  }
  if (call === "failed") return withMessage("fail", "call");
  if (call === "skipped") return withMessage("skip", "call");
  const seen =
    result.observed === "unobserved" ? (result.wrapper ?? "not-called") : result.observed;
  if (seen !== "returned") {
    const what =
      seen === "not-called" || seen === "called"
        ? "its test function never ran to its end"
        : `its test function ${seen}`;
    return { status: "fail", message: `reported passed, but ${what}`, contradiction: what };
  }
  if (teardown === "failed") return withMessage("error", "teardown");
  return { status: "pass" };
}

type Tamper = (check: string, detail: string) => void;
type ChannelRecord = ChannelOutcome["records"][number];

/** Evidence from records that stand on their own: preloaded code, tripwires, plugin failures. */
function recordEvidence(input: ChannelRunInput, tamper: Tamper): void {
  const { inventory, outcome } = input;
  if (outcome.connections === 0 && !input.timedOut) {
    tamper(
      "channel",
      `skillsmith's pytest plugin never connected (it did when the verifier's tests were listed); the command exited ${input.exitCode}`,
    );
  }
  for (const violation of outcome.violations) tamper("channel", violation);
  for (const record of outcome.records) {
    if (record.type === "start" && (record.preloaded ?? []).length > 0) {
      tamper(
        "runner",
        `code from the workspace ran before skillsmith's plugin loaded: ${listed(record.preloaded ?? [])}`,
      );
    } else if (
      record.type === "tripwire" &&
      !(inventory.tripwireBaseline ?? []).includes(tripwireKey(record, input.locate))
    ) {
      const detail = record.detail === "" ? "" : ` (${record.detail})`;
      tamper(
        "tripwire",
        `${record.event}${detail} from code under test at ${input.locate(record.file)}:${record.line}`,
      );
    } else if (record.type === "plugin-error") {
      const last = record.error.trim().split("\n").at(-1) ?? "";
      tamper("plugin", `skillsmith's pytest plugin failed in ${record.where}: ${last}`);
    } else if (record.type === "registered") {
      registeredEvidence(input, record, tamper);
    }
  }
}

function registeredEvidence(
  input: ChannelRunInput,
  record: Extract<ChannelRecord, { type: "registered" }>,
  tamper: Tamper,
): void {
  const declared = record.file !== null && input.inventory.declaredPlugins.includes(record.object);
  if (!record.conftest && !declared) {
    tamper(
      "plugins",
      `a pytest plugin was registered after the session started: "${record.name}" (${record.object})`,
    );
  } else if (record.conftest && record.file !== null && !input.conftestAllowed(record.file)) {
    tamper(
      "plugins",
      `a conftest.py that is neither the verifier's nor the repository's was loaded: ${record.file}`,
    );
  }
}

/** What the session collected, by canonical id, and the excuses collection errors give. */
interface Collection {
  readonly ids: readonly string[] | undefined;
  readonly set: ReadonlySet<string>;
  readonly idOf: ReadonlyMap<string, string>;
  /** A test by this run's node id where it has one. */
  readonly shown: (id: string) => string;
  readonly nodeidOf: ReadonlyMap<string, string>;
  /** The test's module (or folder) failed to collect: not tampering. */
  readonly excused: (id: string) => boolean;
  readonly errors: number;
}

function collectionOf(input: ChannelRunInput): Collection {
  const records = input.outcome.records;
  const collected = records.find((record) => record.type === "collected");
  const collectErrors = records.filter((record) => record.type === "collect-error");
  const items = collected?.type === "collected" ? collected.items : undefined;
  const idOf = new Map<string, string>();
  const nodeidOf = new Map<string, string>();
  for (const item of items ?? []) {
    const id = canonicalId(item.nodeid, item.path, input.locate);
    idOf.set(item.nodeid, id);
    nodeidOf.set(id, item.nodeid);
  }
  const errored = collectErrors.map((record) =>
    record.path === null || record.path === undefined ? record.nodeid : input.locate(record.path),
  );
  const ids = items === undefined ? undefined : [...idOf.values()];
  return {
    ids,
    set: new Set(ids ?? []),
    idOf,
    nodeidOf,
    shown: (id) => nodeidOf.get(id) ?? id,
    excused: (id) =>
      errored.some(
        (prefix) => prefix === "" || moduleOf(id) === prefix || id.startsWith(`${prefix}/`),
      ),
    errors: collectErrors.length,
  };
}

/** `id set`: exactly the inventory's tests and the canaries were collected. */
function idSetEvidence(
  input: ChannelRunInput,
  collection: Collection,
  finished: boolean,
  tamper: Tamper,
): void {
  const { inventory } = input;
  const collectedIds = collection.ids;
  if (collectedIds === undefined) {
    if (finished)
      tamper("id set", "the session finished without reporting which tests it collected");
    return;
  }
  const canaryIds = input.canaries.map((canary) => canary.id);
  const expectedExact = [...inventory.collected.map((test) => test.id), ...canaryIds];
  const expectedSet = new Set(expectedExact);
  const missing = expectedExact.filter((id) => !collection.set.has(id) && !collection.excused(id));
  const inflated: string[] = [];
  for (const test of inventory.defined) {
    const instances = collectedIds.filter((id) => instanceOf(id, test)).length;
    if (test.exact === true && instances > test.min) {
      inflated.push(`${test.base} (${instances} instances, its source defines ${test.min})`);
    }
    if (instances < test.min && !collection.excused(test.base)) {
      missing.push(
        test.min > 1 ? `${test.base} (${instances} of at least ${test.min} instances)` : test.base,
      );
    }
  }
  if (missing.length > 0) {
    tamper(
      "id set",
      `${missing.length} test(s) the verifier defines were not collected: ${listed(missing)}`,
    );
  }
  if (inflated.length > 0) {
    tamper(
      "id set",
      `${inflated.length} test(s) were collected more often than their source parametrises them: ${listed(inflated)}`,
    );
  }
  const extra = collectedIds.filter(
    (id) => !expectedSet.has(id) && !inventory.defined.some((test) => instanceOf(id, test)),
  );
  if (extra.length > 0) {
    tamper(
      "id set",
      `${extra.length} test(s) the verifier does not define were collected: ${listed(extra.map(collection.shown))}`,
    );
  }
}

/** Each reported test judged; `outcomes` and `runner` evidence from the results and probes. */
function judgeAll(
  input: ChannelRunInput,
  collection: Collection,
  tamper: Tamper,
): Map<string, Judged> {
  const judged = new Map<string, Judged>();
  const probesSeen = new Map<string, string>();
  const contradictions: string[] = [];
  for (const result of input.outcome.records) {
    if (result.type !== "result") continue;
    const id = collection.idOf.get(result.nodeid) ?? result.nodeid;
    if (judged.has(id)) tamper("outcomes", `${result.nodeid} was reported twice`);
    if (collection.ids !== undefined && !collection.set.has(id)) {
      tamper("outcomes", `an outcome arrived for ${result.nodeid}, which was never collected`);
    }
    const verdict = judgeResult(result);
    judged.set(id, verdict);
    if (verdict.contradiction !== undefined) {
      contradictions.push(`${result.nodeid} (${verdict.contradiction})`);
    }
    for (const probe of result.probes) {
      if (!probesSeen.has(probe)) probesSeen.set(probe, result.nodeid);
    }
  }
  if (contradictions.length > 0) {
    tamper(
      "outcomes",
      `${contradictions.length} test(s) were reported passed against what skillsmith's plugin saw: ${listed(contradictions)}`,
    );
  }
  for (const [probe, first] of probesSeen) tamper("runner", `${probe} (found before ${first} ran)`);
  const finish = input.outcome.records.find((record) => record.type === "finish");
  if (finish?.type === "finish") {
    for (const name of finish.replaced) {
      if (![...probesSeen.keys()].some((probe) => probe.startsWith(`${name} `))) {
        tamper("runner", `${name} was replaced (found when the session finished)`);
      }
    }
  }
  return judged;
}

/** `outcomes` (unreported tests) and `exit status` evidence. */
function exitEvidence(
  input: ChannelRunInput,
  collection: Collection,
  judged: ReadonlyMap<string, Judged>,
  tamper: Tamper,
): void {
  const records = input.outcome.records;
  const finish = records.find((record) => record.type === "finish");
  const failures = [...judged.values()].filter(
    (verdict) => verdict.status === "fail" || verdict.status === "error",
  ).length;
  if (finish?.type !== "finish") {
    if (input.outcome.connections > 0 && !input.timedOut && input.exitCode === 0) {
      const last = records.at(-1)?.type ?? "none";
      tamper(
        "exit status",
        `the command exited 0, but pytest's session never finished (the plugin's last record: ${last})`,
      );
    }
    return;
  }
  const unreported = (collection.ids ?? []).filter(
    (id) => !judged.has(id) && !collection.excused(id),
  );
  const stoppedEarly =
    (finish.shouldfail !== null || finish.shouldstop !== null) &&
    failures >= Math.max(1, finish.maxfail);
  if (unreported.length > 0 && collection.errors === 0 && !stoppedEarly) {
    tamper(
      "outcomes",
      `no outcome was reported for ${unreported.length} collected test(s): ${listed(unreported.map(collection.shown))}`,
    );
  }
  if (finish.exitstatus === 0 && failures > 0) {
    tamper(
      "exit status",
      `pytest's session ended with exit status 0 although ${failures} test(s) failed`,
    );
  }
  if (
    input.inventory.exitStatusPropagates &&
    !input.timedOut &&
    input.exitCode !== finish.exitstatus
  ) {
    tamper(
      "exit status",
      `the command exited with ${input.exitCode}, but pytest's session ended with exit status ${finish.exitstatus}`,
    );
  }
}

function canaryEvidence(
  input: ChannelRunInput,
  collection: Collection,
  judged: ReadonlyMap<string, Judged>,
  tamper: Tamper,
): void {
  for (const canary of input.canaries) {
    const verdict = judged.get(canary.id);
    if (verdict === undefined) continue;
    if (canary.expect === "fail" && verdict.status === "pass") {
      tamper("canary", `the must-fail canary ${collection.shown(canary.id)} was reported passed`);
    } else if (canary.expect === "pass" && verdict.status !== "pass") {
      tamper(
        "canary",
        `the must-pass canary ${collection.shown(canary.id)} was reported ${verdict.status}${verdict.message === undefined ? "" : ` (${verdict.message})`}`,
      );
    }
  }
}

/** The verifier's own checks, in the inventory's order, canaries left out. */
function verifierChecks(
  input: ChannelRunInput,
  collection: Collection,
  judged: ReadonlyMap<string, Judged>,
  finished: boolean,
): CheckResult[] {
  const notRun = (id: string): string =>
    collection.excused(id)
      ? "not collected: a collection error stopped it"
      : !finished
        ? `no outcome: pytest ended before it ran (exit ${input.exitCode})`
        : "no outcome was reported";
  const checkOf = (id: string, inventoryNodeid: string): CheckResult => {
    const verdict = judged.get(id);
    const name = junitName(collection.nodeidOf.get(id) ?? inventoryNodeid);
    if (verdict === undefined) return { name, status: "error", message: notRun(id) };
    return verdict.message === undefined
      ? { name, status: verdict.status }
      : { name, status: verdict.status, message: verdict.message };
  };
  const checks: CheckResult[] = [];
  for (const test of input.inventory.collected) checks.push(checkOf(test.id, test.nodeid));
  for (const test of input.inventory.defined) {
    const instances = (collection.ids ?? []).filter((id) => instanceOf(id, test));
    if (instances.length === 0) checks.push(checkOf(test.base, test.nodeid));
    else for (const id of instances) checks.push(checkOf(id, id));
  }
  return checks;
}

function junitEvidence(
  input: ChannelRunInput,
  collection: Collection,
  realPassed: number,
  finished: boolean,
  tamper: Tamper,
): void {
  if (input.junit === "missing" && input.inventory.junitWritten && finished) {
    tamper(
      "junit",
      "the JUnit report the verifier names is gone (every finished session writes it): removed or replaced",
    );
  } else if (Array.isArray(input.junit)) {
    const canaryNames = new Set(
      input.canaries.map((canary) => junitName(collection.shown(canary.id))),
    );
    const junitPassed = input.junit.filter(
      (check) => check.status === "pass" && !canaryNames.has(check.name),
    ).length;
    // Both come from the same pytest session: an honest one writes the same passes to each.
    if (junitPassed !== realPassed) {
      tamper(
        "junit",
        `the JUnit report claims ${junitPassed} passed check(s), the channel ${realPassed}`,
      );
    }
  }
}

export function assessChannelRun(input: ChannelRunInput): IntegrityAssessment {
  const evidence: string[] = [];
  const tamper: Tamper = (check, detail) => {
    const line = `${check}: ${detail}`;
    if (!evidence.includes(line)) evidence.push(line);
  };
  const finished = input.outcome.records.some((record) => record.type === "finish");
  recordEvidence(input, tamper);
  const collection = collectionOf(input);
  idSetEvidence(input, collection, finished, tamper);
  const judged = judgeAll(input, collection, tamper);
  exitEvidence(input, collection, judged, tamper);
  canaryEvidence(input, collection, judged, tamper);
  const checks = verifierChecks(input, collection, judged, finished);
  const realPassed = checks.filter((check) => check.status === "pass").length;
  junitEvidence(input, collection, realPassed, finished, tamper);

  const flags: IntegrityFlag[] = [];
  if (input.timedOut) flags.push("timeout");
  if (evidence.length > 0) flags.push("tampered");
  if (collection.errors > 0) flags.push("collection-error");
  if (flags.length === 0 && checks.length === 0) flags.push("no-checks");
  return {
    checks,
    passed: realPassed,
    total: checks.length,
    passRatio: flags.length > 0 || checks.length === 0 ? 0 : realPassed / checks.length,
    flags,
    evidence,
  };
}
