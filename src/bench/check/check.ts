/**
 * The verifier check (protocol A.3/A.4) for any suite, however it was made: prepare each
 * skill's environment, run each requirement's verifier on the untouched repository (and on its
 * reference solution when there is one), and classify the requirement:
 *
 * - `broken`: the verifier measures nothing here — it timed out, reported no checks, crashed for
 *   a reason of its own (a helper module, pytest plugin or third-party package missing; see
 *   `diagnoseCollectionError`), its environment could not be prepared, its pinned commit or one
 *   of its files is missing, or the reference solution does not pass it. No agent time is spent
 *   on it; its runs are stored flagged `broken-verifier`.
 * - `weak`: it already passes at least `weakThreshold` (default ½) of its checks on the untouched
 *   repository — always when it passes all of them — or at least that share of its tests only
 *   grep source text (the keyword-only scan). It runs, flagged `weak-verifier`.
 * - `ok` otherwise. A verifier that cannot import the module the requirement asks to create is
 *   failing as it should: `ok`, with its pass ratio of 0.
 *
 * Measurements are cached per (environment, verifier, requirement, solution) digest under
 * `<cacheDir>/checks/`, so `bench run` re-uses what `bench check` measured.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { unlessMissing } from "../../core/fs.js";
import {
  type CollectionDiagnosis,
  findKeywordOnlyChecks,
  findTestTimeInstalls,
  type InstallCacheRecord,
  type KeywordOnlyCheck,
  keywordOnlyShare,
  type ScannedFile,
  testTimeNetworkProblem,
  treeDigest,
} from "../../env/index.js";
import type { EnvironmentOutcome, EnvironmentRecord } from "../run/environments.js";
import { environmentRecord } from "../run/environments.js";
import {
  type InventoryBatchReport,
  prefetchInventories,
  requirementInventoryTargets,
} from "../run/inventory-batch.js";
import type { SuiteVerifierRun } from "../run/verifier.js";
import { REQUIREMENTS_FOLDER, SKILLS_FOLDER } from "../suite/layout.js";
import { naturalCompare } from "../suite/load.js";
import { missingVerifierTools } from "../suite/tools.js";
import type { ExcludedPart, Suite, SuiteRequirement, SuiteSkill } from "../suite/types.js";
import { CHECK_FORMAT, type Measured, measure, measurementKept } from "./measure.js";
import { describeToolNeeds, type FailedCheck, type ToolNeed, toolNeeds } from "./missing-tools.js";
import { recordCheckLabels, type StoredCheckLabel } from "./stored-labels.js";

/** Share of checks passing on the untouched repository from which a verifier is weak. */
export const DEFAULT_WEAK_THRESHOLD = 0.5;
export type RequirementStatus = "ok" | "weak" | "broken";

/**
 * One run of a verifier on a prepared workspace, as the check keeps it: the run's figures, its
 * output capped to head and tail.
 */
export interface VerifierMeasurement
  extends Pick<
    SuiteVerifierRun,
    "passed" | "total" | "passRatio" | "flags" | "exitCode" | "timedOut" | "durationMs" | "output"
  > {
  /** It collected nothing, or every check errored in set-up. */
  readonly erroredBeforeChecking: boolean;
  /** The checks that failed or errored, with their messages (capped). */
  readonly failures?: readonly FailedCheck[];
  /**
   * Why it errored before checking (worked out from `output` on every read, so a cached
   * measurement gets the current diagnosis).
   */
  readonly diagnosis?: CollectionDiagnosis;
}

export interface RequirementCheck {
  readonly skill: string;
  readonly requirement: string;
  readonly status: RequirementStatus;
  /** Passed / all checks on the untouched repository; null when nothing could be measured. */
  readonly untouchedPassRatio: number | null;
  readonly reason: string;
  readonly untouched?: VerifierMeasurement;
  readonly reference?: VerifierMeasurement;
  /** Tests of the verifier that only grep source text. */
  readonly keywordOnly: readonly KeywordOnlyCheck[];
  /** Test functions found in the verifier's files (the keyword scan's denominator). */
  readonly testCount: number;
  /**
   * Set when every failing check fails only because a tool is missing here (`go`, `kustomize`):
   * the tools and how many checks need each. The status stays the verifier's; the row says it.
   */
  readonly toolNeeds?: readonly ToolNeed[];
  /** The measurement's cache digest; absent when nothing was run. */
  readonly digest?: string;
  /** True when the measurement came from the cache. */
  readonly cached: boolean;
}

export interface SuiteCheck {
  readonly format: typeof CHECK_FORMAT;
  readonly weakThreshold: number;
  readonly requirements: readonly RequirementCheck[];
  readonly environments: readonly EnvironmentRecord[];
  readonly durationMs: number;
}

export interface CheckProgress {
  readonly done: number;
  readonly total: number;
  readonly last?: RequirementCheck;
  /** What is being done now, for long work (preparing an environment, running a verifier). */
  readonly activity?: string;
}

export interface CheckSuiteOptions {
  readonly suite: Suite;
  /** Skills and requirements left out of the suite because of errors (reported as broken). */
  readonly excluded?: readonly ExcludedPart[];
  /** Each skill's prepared environment (shared with the runner, so each is prepared once). */
  readonly environmentFor: (skill: SuiteSkill) => Promise<EnvironmentOutcome>;
  readonly cacheDir: string;
  readonly weakThreshold?: number;
  /** Measure again even when the cache has a measurement. */
  readonly fresh?: boolean;
  /** Verifier runs at the same time (default 1); environments are prepared one at a time. */
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: CheckProgress) => void;
  /** How the verifiers' inventories were taken ahead (batched, already known, left alone and why). */
  readonly onInventories?: (report: InventoryBatchReport) => void;
}

/** A function, not an inline check, so TypeScript does not narrow `aborted` across awaits. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** Check every requirement of the suite; see the module comment. */
export async function checkSuite(options: CheckSuiteOptions): Promise<SuiteCheck> {
  const started = performance.now();
  const threshold = options.weakThreshold ?? DEFAULT_WEAK_THRESHOLD;
  const results: RequirementCheck[] = [];
  const environments: EnvironmentRecord[] = [];
  const excludedChecks = await excludedRequirementChecks(options.suite, options.excluded ?? []);
  const total =
    options.suite.skills.reduce((sum, skill) => sum + skill.requirements.length, 0) +
    excludedChecks.length;
  const progress = (last?: RequirementCheck, activity?: string) =>
    options.onProgress?.({
      done: results.length,
      total,
      ...(last === undefined ? {} : { last }),
      ...(activity === undefined ? {} : { activity }),
    });
  for (const check of excludedChecks) {
    results.push(check);
    progress(check);
  }
  const jobs: { skill: SuiteSkill; requirement: SuiteRequirement; index: number }[] = [];
  const slots: (RequirementCheck | undefined)[] = [];
  const environmentOf = new Map<string, EnvironmentOutcome>();
  for (const skill of options.suite.skills) {
    if (aborted(options.signal)) break;
    progress(undefined, `preparing the environment of ${skill.id}`);
    const environment = await options.environmentFor(skill);
    environmentOf.set(skill.id, environment);
    environments.push(environmentRecord(environment));
    for (const requirement of skill.requirements) {
      jobs.push({ skill, requirement, index: slots.length });
      slots.push(undefined);
    }
  }
  if (!aborted(options.signal)) {
    // The inventories the runs will need of requirements measured before (so nothing of theirs
    // runs now), taken ahead in batches (one process collects many verifiers:
    // `run/inventory-batch.ts`); what a batch cannot answer for certain is taken alone when first
    // asked. A requirement measured now takes its inventory from its untouched run's own session
    // (`verifyCandidate`): collecting it first too would collect every verifier twice.
    progress(undefined, "taking the verifiers' inventories");
    const batchable: Parameters<typeof requirementInventoryTargets>[0][number][] = [];
    for (const { skill, requirement } of jobs) {
      const environment = environmentOf.get(skill.id);
      if (environment?.ok !== true) continue;
      if (testTimeProblem((await keywordScan(requirement)).files, environment) !== undefined)
        continue;
      if (!(await measurementKept(skill, requirement, environment, options))) continue;
      batchable.push({ skill, requirement, sandbox: environment.sandbox, base: environment.base });
    }
    const report = await prefetchInventories(
      await requirementInventoryTargets(batchable, options.signal),
    );
    options.onInventories?.(report);
  }
  let next = 0;
  const worker = async () => {
    for (;;) {
      const job = jobs[next];
      if (job === undefined || aborted(options.signal)) return;
      next += 1;
      const { skill, requirement } = job;
      const environment = environmentOf.get(skill.id) as EnvironmentOutcome;
      const keyword = await keywordScan(requirement);
      let check: RequirementCheck;
      if (!environment.ok) {
        check = {
          skill: skill.id,
          requirement: requirement.id,
          status: "broken",
          untouchedPassRatio: null,
          reason: environment.reason,
          keywordOnly: keyword.keywordOnly,
          testCount: keyword.testCount,
          cached: false,
        };
      } else if (testTimeProblem(keyword.files, environment) !== undefined) {
        // Known before running anything: the verifier would crash or wait out its time limit.
        check = {
          skill: skill.id,
          requirement: requirement.id,
          status: "broken",
          untouchedPassRatio: null,
          reason: testTimeProblem(keyword.files, environment) as string,
          keywordOnly: keyword.keywordOnly,
          testCount: keyword.testCount,
          cached: false,
        };
      } else {
        progress(undefined, `running the verifier of ${skill.id}/${requirement.id}`);
        const measured = await measure(skill, requirement, environment, options);
        check = withInstallScripts(
          withUnservedTestInstalls(
            withToolNeeds(
              classify(skill, requirement, measured, keyword, threshold),
              (await missingVerifierTools(requirement)).map((tool) => tool.program),
            ),
            testTimeProblem(keyword.files, environment, "test"),
            threshold,
          ),
          keyword.files,
          environment.base.setup?.caches ?? [],
        );
      }
      slots[job.index] = check;
      results.push(check);
      progress(check);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 1) }, () => worker()));
  // In suite order, whatever order the runs finished in.
  results.splice(
    excludedChecks.length,
    results.length - excludedChecks.length,
    ...slots.filter((slot): slot is RequirementCheck => slot !== undefined),
  );
  await recordCheckLabels(options.cacheDir, options.suite.root, await storedLabels(jobs, slots));
  return {
    format: CHECK_FORMAT,
    weakThreshold: threshold,
    requirements: results,
    environments,
    durationMs: performance.now() - started,
  };
}

/**
 * The rows `bench validate-suite` reads back: each measured requirement's label (`ok, 3 checks
 * need go`), keyed by the verifier it measured.
 */
async function storedLabels(
  jobs: readonly { skill: SuiteSkill; requirement: SuiteRequirement; index: number }[],
  slots: readonly (RequirementCheck | undefined)[],
): Promise<Map<string, StoredCheckLabel>> {
  const rows = new Map<string, StoredCheckLabel>();
  const measuredAt = new Date().toISOString().slice(0, 16).replace("T", " ");
  for (const { skill, requirement, index } of jobs) {
    const check = slots[index];
    if (check === undefined) continue;
    rows.set(`${skill.id}/${requirement.id}`, {
      status: check.status,
      label:
        check.toolNeeds === undefined
          ? check.status
          : `${check.status}, ${describeToolNeeds(check.toolNeeds)}`,
      untouchedPassRatio: check.untouchedPassRatio,
      verifierDigest: await treeDigest(requirement.verifier.folder),
      measuredAt: `${measuredAt} UTC`,
    });
  }
  return rows;
}

/** Excluded requirements (and every requirement of an excluded skill) as `broken`. */
async function excludedRequirementChecks(
  suite: Suite,
  excluded: readonly ExcludedPart[],
): Promise<RequirementCheck[]> {
  const checks: RequirementCheck[] = [];
  const describe = (part: ExcludedPart) =>
    part.problems
      .map(
        (problem) =>
          `${problem.path}${problem.line === undefined ? "" : `:${problem.line}`}: ${problem.message}`,
      )
      .join("; ");
  for (const part of excluded) {
    const reason = `${part.problems.some((problem) => /does not exist|missing|no verifier/.test(problem.message)) ? "missing file" : "invalid suite files"}: ${describe(part)}`;
    const base = {
      status: "broken" as const,
      untouchedPassRatio: null,
      keywordOnly: [],
      testCount: 0,
      cached: false,
    };
    if (part.requirement !== undefined) {
      checks.push({ skill: part.skill, requirement: part.requirement, reason, ...base });
      continue;
    }
    const folder = join(suite.root, SKILLS_FOLDER, part.skill, REQUIREMENTS_FOLDER);
    const requirements =
      part.requirements ??
      ((await unlessMissing(folder, readdir(folder, { withFileTypes: true }))) ?? [])
        .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
        .map((entry) => entry.name)
        .sort(naturalCompare);
    for (const requirement of requirements.length === 0 ? ["*"] : requirements) {
      checks.push({ skill: part.skill, requirement, reason, ...base });
    }
  }
  return checks;
}

async function keywordScan(
  requirement: SuiteRequirement,
): Promise<{ keywordOnly: KeywordOnlyCheck[]; testCount: number; files: ScannedFile[] }> {
  const files = [];
  for (const file of requirement.verifier.files) {
    if (!/\.(py|m?[jt]sx?|cjs|cts)$/.test(file)) continue;
    // The loader listed the file: unreadable now is an error, never an empty (keyword-free) file.
    const content = await readFile(join(requirement.verifier.folder, file), "utf8");
    files.push({ path: file, content });
  }
  const testCount = files.reduce(
    (sum, file) =>
      sum +
      (file.content.match(/^\s*(?:async\s+)?def\s+test\w*\s*\(/gm)?.length ?? 0) +
      (file.path.endsWith(".py")
        ? 0
        : (file.content.match(/\b(?:test|it)\s*\(\s*["'`]/g)?.length ?? 0)),
    0,
  );
  return { keywordOnly: findKeywordOnlyChecks(files), testCount, files };
}

/**
 * `needs network at test time: …` when the verifier installs at test time and no cache of the
 * environment serves it (setup was offline, the cache could not be filled, or the install
 * fetches from a VCS host).
 */
function testTimeProblem(
  files: readonly ScannedFile[],
  environment: EnvironmentOutcome & { ok: true },
  scope: "verifier" | "test" = "verifier",
): string | undefined {
  // The installs of single tests are weighed as the verifier's own when asked for.
  const installs = findTestTimeInstalls(files)
    .filter((install) => install.scope === scope)
    .map((install) => ({ ...install, scope: "verifier" as const }));
  return testTimeNetworkProblem(installs, {
    ...(environment.base.setupReport?.network === undefined
      ? {}
      : { network: environment.base.setupReport.network }),
    ...(environment.base.setupReport?.networkReason === undefined
      ? {}
      : { networkReason: environment.base.setupReport.networkReason }),
    ...(environment.base.setup?.caches === undefined
      ? {}
      : { caches: environment.base.setup.caches }),
    ...(environment.base.setupReport?.target === "tree"
      ? { steps: environment.base.setupReport.steps }
      : {}),
  });
}

/**
 * What a failing check's message shows when the installer itself failed: pip's own traceback, its
 * "no version" errors or its refusal of an externally managed interpreter (Debian's, as a hand run
 * outside a virtual environment meets it), npm's error lines, an offline cache miss or a name that
 * did not resolve.
 */
const INSTALL_FAILURE =
  /pip\/_internal|No matching distribution found|Could not find a version that satisfies|externally-managed-environment|\bpip3? install\b[^\n]*\bfailed\b|npm (?:ERR!|error)\b|ENOTCACHED|EAI_AGAIN/;

/**
 * The check once single tests that install at test time, with no cache to serve them (celery's v1
 * batch6 runs `pip install celery pytest` in six of its tests), are weighed by what the run
 * measured: the failing checks whose message shows the installer failing fail for the install,
 * whatever the agent does. When they are every failing check, no agent can change the score:
 * `broken`. When the checks that can pass here already pass from the threshold on untouched, the
 * low ratio was made by the install alone: `weak`. Otherwise the row stays as classified and says
 * how many checks the install decides. `problem` is where the scan found the installs.
 */
export function withUnservedTestInstalls(
  check: RequirementCheck,
  problem: string | undefined,
  threshold: number,
): RequirementCheck {
  const untouched = check.untouched;
  if (problem === undefined || untouched === undefined || check.status === "broken") return check;
  const where = problem.replace(/^needs network at test time: /, "");
  const failing = untouched.failures ?? [];
  const bound = failing.filter((failure) => INSTALL_FAILURE.test(failure.message));
  // The scan found installs, but no failing check shows one failing: nothing to weigh.
  if (bound.length === 0) return check;
  const names = bound.map((failure) => failure.name.split("::").at(-1) ?? failure.name);
  const listed = `${names.slice(0, 3).join(", ")}${names.length > 3 ? ` and ${names.length - 3} more` : ""}`;
  const evidence = `${bound.length} of the ${untouched.total} checks ${bound.length === 1 ? "fails" : "fail"} for a test-time install that cannot run here (${listed}: the installer's own error), not for the agent; ${where}`;
  if (bound.length === failing.length) {
    return {
      ...check,
      status: "broken",
      reason: `needs network at test time: every failing check fails for its install, so no agent can change the score here; ${evidence}`,
    };
  }
  const canPass = untouched.total - bound.length;
  if (check.status === "ok" && untouched.passed / canPass >= threshold) {
    return {
      ...check,
      status: "weak",
      reason: `already passes ${untouched.passed} of the ${canPass} checks that can pass here (${percent(untouched.passed / canPass)}) on the untouched repository: the rest fail for the install; ${evidence}`,
    };
  }
  return { ...check, reason: `${check.reason}; ${evidence}` };
}

/**
 * A verifier that timed out while its test-time `npm ci` (served by setup's install) reran the
 * repository's lifecycle scripts: the reason names them. That rerun, not npm's fetching (offline
 * from the cache it fails or succeeds at once), is where such a verifier's time goes — v1's
 * mcp-builder builds four TypeScript servers in `prepare`, then its test builds them again.
 */
export function withInstallScripts(
  check: RequirementCheck,
  files: readonly ScannedFile[],
  caches: readonly InstallCacheRecord[],
): RequirementCheck {
  if (check.untouched?.timedOut !== true && check.untouched?.flags.includes("timeout") !== true) {
    return check;
  }
  const served = caches.find((cache) => cache.installer === "npm")?.installs ?? [];
  for (const install of findTestTimeInstalls(files)) {
    const scripts = served.find((entry) => entry.command === install.command)?.scripts ?? [];
    if (install.installer !== "npm" || scripts.length === 0) continue;
    const listed = scripts.slice(0, 3).join(", ");
    const more = scripts.length > 3 ? ` and ${scripts.length - 3} more` : "";
    return {
      ...check,
      reason: `${check.reason}; its test-time \`${install.command}\` (${install.file}:${install.line}) reruns the repository's lifecycle scripts in every verifier run, which setup already ran once: ${listed}${more} — those builds, not npm (served offline from the cache), take the verifier's time; on a faster or less busy machine, or with a longer verifier limit (timeoutSeconds), it can finish`,
    };
  }
  return check;
}

/** The check with what its failing checks need, when they fail only for missing tools. */
export function withToolNeeds(check: RequirementCheck, tools: readonly string[]): RequirementCheck {
  const failures = check.untouched?.failures ?? [];
  if (check.untouched?.erroredBeforeChecking === true) return check;
  const needs = toolNeeds(failures, tools);
  if (needs.length === 0) return check;
  return {
    ...check,
    toolNeeds: needs,
    reason: `${describeToolNeeds(needs)}, which ${needs.length === 1 ? "is" : "are"} not installed here: those checks fail for the missing tool, not for the agent; ${check.reason}`,
  };
}

/** A ratio as a percentage with one decimal (`37.5%`), for reasons and tables. */
export function percent(ratio: number): string {
  return `${Math.round(ratio * 1000) / 10}%`;
}

/** The classification rules of the module comment, on one measurement. */
export function classify(
  skill: SuiteSkill,
  requirement: SuiteRequirement,
  measured: Measured,
  keyword: { keywordOnly: readonly KeywordOnlyCheck[]; testCount: number },
  threshold: number,
): RequirementCheck {
  const { untouched, reference } = measured;
  const common = {
    skill: skill.id,
    requirement: requirement.id,
    untouched,
    ...(reference === undefined ? {} : { reference }),
    keywordOnly: keyword.keywordOnly,
    testCount: keyword.testCount,
    digest: measured.digest,
    cached: measured.cached,
  };
  const broken = (reason: string): RequirementCheck => ({
    ...common,
    status: "broken",
    untouchedPassRatio: null,
    reason,
  });
  if (untouched.timedOut || untouched.flags.includes("timeout")) {
    return broken(
      `the verifier timed out on the untouched repository after ${Math.round(untouched.durationMs / 1000)} s`,
    );
  }
  let failingAsItShould: string | undefined;
  if (untouched.diagnosis !== undefined) {
    if (untouched.diagnosis.kind === "broken") return broken(untouched.diagnosis.reason);
    failingAsItShould = untouched.diagnosis.reason;
  } else if (untouched.flags.includes("no-checks") || untouched.total === 0) {
    return broken("the verifier reported no checks on the untouched repository");
  } else if (untouched.flags.includes("reward-missing")) {
    return broken("the verifier wrote no reward file on the untouched repository");
  }
  const ratio = failingAsItShould === undefined ? untouched.passRatio : 0;
  if (reference !== undefined) {
    const referenceBroken =
      reference.timedOut ||
      reference.diagnosis !== undefined ||
      reference.total === 0 ||
      reference.passRatio < 1;
    if (referenceBroken) {
      return {
        ...common,
        status: "broken",
        untouchedPassRatio: ratio,
        reason:
          reference.total === 0 && reference.exitCode === null && !reference.timedOut
            ? `the reference solution could not be put in place: ${reference.output.split("\n")[0]}`
            : `the reference solution does not pass the verifier (${reference.passed} of ${reference.total} checks${reference.diagnosis === undefined ? "" : `; ${reference.diagnosis.reason}`}${reference.timedOut ? "; timed out" : ""})`,
      };
    }
  }
  const keywordOnly = keywordOnlyShare(keyword.keywordOnly, keyword.testCount);
  const mostlyKeywordOnly = keyword.keywordOnly.length > 0 && keywordOnly.share >= threshold;
  if (ratio === 1 || ratio >= threshold) {
    return {
      ...common,
      status: "weak",
      untouchedPassRatio: ratio,
      reason: `already passes ${untouched.passed} of ${untouched.total} checks (${percent(ratio)}) on the untouched repository${ratio === 1 ? ": it cannot tell a solution from none" : ` (weak from ${percent(threshold)})`}${mostlyKeywordOnly ? `; ${keywordOnly.reason}` : ""}`,
    };
  }
  if (mostlyKeywordOnly) {
    return {
      ...common,
      status: "weak",
      untouchedPassRatio: ratio,
      reason: `${keywordOnly.reason}; passes ${untouched.passed} of ${untouched.total} checks untouched`,
    };
  }
  return {
    ...common,
    status: "ok",
    untouchedPassRatio: ratio,
    reason:
      failingAsItShould ??
      `passes ${untouched.passed} of ${untouched.total} checks (${percent(ratio)}) on the untouched repository${measured.referenceNote === undefined ? "" : `; ${measured.referenceNote}`}`,
  };
}

/** `--json` of `bench check`: exactly the fields the command documents. */
