/**
 * One requirement's measurement for `bench check`: its verifier on the untouched repository and,
 * when the requirement has one, on its reference solution, each in a fresh workspace of the
 * skill's prepared environment; cached by everything that can change what it measures.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { applyDiff } from "../../core/apply-diff.js";
import { formatTag } from "../../core/format-tag.js";
import { formatTagSchema, readingOlderTags } from "../../core/format-tag-schema.js";
import { writeFileAtomic } from "../../core/fs.js";
import { parseJsonResult } from "../../core/parse.js";
import { runProcess } from "../../core/process.js";
import { diagnoseCollectionError, treeDigest } from "../../env/index.js";
import type { EnvironmentOutcome } from "../run/environments.js";
import { verifyCandidate } from "../run/verifier.js";
import { capVerifierOutput } from "../store/results.js";
import type { SuiteRequirement, SuiteSkill } from "../suite/types.js";
import type { CheckSuiteOptions, VerifierMeasurement } from "./check.js";

export const CHECK_FORMAT = formatTag("check", 1);
/**
 * Bump when what a measurement holds changes, or how a verifier is run changes what it measures
 * (3: a verifier test running pytest itself no longer meets the channel plugin; 4: failing
 * checks kept with their messages, and the inventory taken in an untouched copy of the repository,
 * as for the runs, not an empty folder): older cache entries are then not read.
 */
const MEASUREMENT_VERSION = 4;
/** The tag of a cached measurement (`<cacheDir>/checks/<digest>.json`). */
const MEASUREMENT_CACHE_FORMAT = formatTag("check-measurement", 1);
/** Characters of a failing check's message kept (enough for the exception's first line). */
const FAILURE_MESSAGE_CHARS = 400;

export interface Measured {
  readonly untouched: VerifierMeasurement;
  readonly reference?: VerifierMeasurement;
  /** Why the reference solution was not run, when there is one. */
  readonly referenceNote?: string;
  readonly digest: string;
  readonly cached: boolean;
}

async function measurementDigest(
  skill: SuiteSkill,
  requirement: SuiteRequirement,
  environment: Extract<EnvironmentOutcome, { ok: true }>,
): Promise<string> {
  const { verifier, solution } = requirement;
  const solutionDigest =
    solution === undefined
      ? null
      : solution.kind === "patch"
        ? createHash("sha256")
            .update(await readFile(solution.path))
            .digest("hex")
        : await treeDigest(solution.path);
  return createHash("sha256")
    .update(
      JSON.stringify([
        CHECK_FORMAT,
        MEASUREMENT_VERSION,
        environment.base.key,
        environment.base.digest,
        await treeDigest(verifier.folder),
        {
          command: verifier.command,
          files: verifier.files,
          mountPath: verifier.mountPath,
          cwd: verifier.cwd,
          junit: verifier.junit ?? null,
          rewardFile: verifier.rewardFile ?? null,
          timeoutSeconds: verifier.timeoutSeconds ?? null,
        },
        skill.environment?.limits ?? null,
        requirement.fileOperations,
        createHash("sha256").update(requirement.raw).digest("hex"),
        solutionDigest,
      ]),
    )
    .digest("hex");
}

const verifierMeasurementSchema = z.object({
  passed: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  passRatio: z.number().min(0).max(1),
  flags: z.array(z.string()),
  exitCode: z.number().int().nullable(),
  timedOut: z.boolean(),
  durationMs: z.number().nonnegative(),
  output: z.string(),
  erroredBeforeChecking: z.boolean(),
  failures: z.array(z.object({ name: z.string(), message: z.string() })).exactOptional(),
  // No `diagnosis`: it is worked out again on every read (`withDiagnoses`), and the object
  // schema drops whatever the file says.
});

/** A cached measurement; entries written before the tag have none (the digest keys the rest). */
const cachedMeasurementSchema = readingOlderTags(
  z.object({
    format: formatTagSchema(MEASUREMENT_CACHE_FORMAT),
    untouched: verifierMeasurementSchema,
    reference: verifierMeasurementSchema.exactOptional(),
    referenceNote: z.string().exactOptional(),
  }),
  MEASUREMENT_CACHE_FORMAT,
  [{ style: "none" }],
);

/**
 * The measurement cached in `cacheFile`, or undefined when there is none to trust: missing,
 * unreadable, not JSON, or not a measurement (a damaged or planted file). The caller then
 * measures again and rewrites it: the cache only saves time, and a measurement is never taken
 * from a file its schema refuses.
 */
export async function readCachedMeasurement(
  cacheFile: string,
): Promise<Omit<Measured, "digest" | "cached"> | undefined> {
  const text = await readFile(cacheFile, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = parseJsonResult(cachedMeasurementSchema, text);
  if (!parsed.ok) return undefined;
  const { format: _format, ...measured } = parsed.value;
  return measured;
}

/**
 * Whether `measure` will find this requirement's measurement kept (and so run nothing): then the
 * runs need its verifier's inventory taken ahead; otherwise its untouched run takes it.
 */
export async function measurementKept(
  skill: SuiteSkill,
  requirement: SuiteRequirement,
  environment: Extract<EnvironmentOutcome, { ok: true }>,
  options: CheckSuiteOptions,
): Promise<boolean> {
  if (options.fresh === true) return false;
  const digest = await measurementDigest(skill, requirement, environment);
  return (
    (await readCachedMeasurement(join(options.cacheDir, "checks", `${digest}.json`))) !== undefined
  );
}

export async function measure(
  skill: SuiteSkill,
  requirement: SuiteRequirement,
  environment: Extract<EnvironmentOutcome, { ok: true }>,
  options: CheckSuiteOptions,
): Promise<Measured> {
  const digest = await measurementDigest(skill, requirement, environment);
  const cacheFile = join(options.cacheDir, "checks", `${digest}.json`);
  if (options.fresh !== true) {
    const cached = await readCachedMeasurement(cacheFile);
    if (cached !== undefined) {
      return withDiagnoses({ ...cached, digest, cached: true }, requirement, environment);
    }
  }
  const untouched = await runOn(skill, requirement, environment, options, "untouched");
  let reference: VerifierMeasurement | undefined;
  let referenceNote: string | undefined;
  const solution = requirement.solution;
  if (solution?.kind === "script") {
    referenceNote = "the reference solution is a script (solve.sh); the check does not run it";
  } else if (solution !== undefined) {
    reference = await runOn(skill, requirement, environment, options, (workspace) =>
      applySolution(workspace, solution),
    );
  }
  const measured = {
    untouched,
    ...(reference === undefined ? {} : { reference }),
    ...(referenceNote === undefined ? {} : { referenceNote }),
  };
  await mkdir(join(options.cacheDir, "checks"), { recursive: true });
  await writeFileAtomic(
    cacheFile,
    `${JSON.stringify({ format: MEASUREMENT_CACHE_FORMAT, ...measured })}\n`,
  );
  return withDiagnoses({ ...measured, digest, cached: false }, requirement, environment);
}

function withDiagnoses(
  measured: Measured,
  requirement: SuiteRequirement,
  environment: Extract<EnvironmentOutcome, { ok: true }>,
): Measured {
  const diagnose = (measurement: VerifierMeasurement): VerifierMeasurement => {
    const { diagnosis: _cached, ...rest } = measurement;
    if (!measurement.erroredBeforeChecking) return rest;
    return {
      ...rest,
      diagnosis: diagnoseCollectionError({
        output: measurement.output,
        fileOperations: requirement.fileOperations,
        requirementText: requirement.raw,
        workspaceMountPath: environment.base.workspaceMountPath,
      }),
    };
  };
  return {
    ...measured,
    untouched: diagnose(measured.untouched),
    ...(measured.reference === undefined ? {} : { reference: diagnose(measured.reference) }),
  };
}

async function applySolution(
  workspace: string,
  solution: NonNullable<SuiteRequirement["solution"]>,
): Promise<string | undefined> {
  if (solution.kind === "files") {
    const copied = await runProcess("cp", ["-a", `${solution.path}/.`, workspace]);
    return copied.exitCode === 0
      ? undefined
      : `copying the solution failed: ${copied.stderr.trim()}`;
  }
  let diff: string;
  try {
    diff = await readFile(solution.path, "utf8");
  } catch (error) {
    return `the reference patch ${solution.path} cannot be read: ${(error as Error).message}`;
  }
  const applied = await applyDiff(workspace, diff);
  return applied.ok ? undefined : `the reference patch does not apply: ${applied.message}`;
}

async function runOn(
  skill: SuiteSkill,
  requirement: SuiteRequirement,
  environment: Extract<EnvironmentOutcome, { ok: true }>,
  options: CheckSuiteOptions,
  putInPlace: ((workspace: string) => Promise<string | undefined>) | "untouched",
): Promise<VerifierMeasurement> {
  const verification = await verifyCandidate({
    sandbox: environment.sandbox,
    skill,
    requirement,
    base: environment.base,
    // The untouched run also takes the verifier's inventory, when no one has yet.
    ...(putInPlace === "untouched"
      ? { untouched: true, putInPlace: async () => undefined }
      : { putInPlace }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  if (verification.kind === "not-in-place") {
    return {
      passed: 0,
      total: 0,
      passRatio: 0,
      flags: ["no-checks"],
      exitCode: null,
      timedOut: false,
      durationMs: 0,
      output: verification.problem,
      // Not the verifier's doing: the solution could not be put in place (see `output`).
      erroredBeforeChecking: false,
    };
  }
  const { run } = verification;
  const erroredBeforeChecking =
    run.flags.includes("collection-error") ||
    (run.checks.length > 0 && run.checks.every((check) => check.status === "error"));
  return {
    passed: run.passed,
    total: run.total,
    passRatio: run.passRatio,
    flags: run.flags,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    output: capVerifierOutput(run.output),
    erroredBeforeChecking,
    failures: run.checks
      .filter((check) => check.status === "fail" || check.status === "error")
      .map((check) => ({
        name: check.name,
        message: (check.message ?? "").slice(0, FAILURE_MESSAGE_CHARS),
      })),
  };
}
