/**
 * `bench regrade`: re-score stored runs with the (possibly new) verifiers of a suite without
 * running any agent. Each stored patch (`RunResult.patch`, the agent's final change) is applied
 * to a fresh workspace of the same prepared base by the replay harness, the requirement's
 * verifier runs as in `bench run` (same sandbox, inventory, channel, flags), and the result is
 * written to a new run directory with the original trajectory, usage and wall times, marked
 * `provenance: regraded` with the old pass ratio. Nothing is re-scored that would not be the same
 * experiment; such runs are copied as they were, with the reason:
 *
 * - the agent timed out or hit a memory/process limit (the run scores 0 whatever the verifier says);
 * - no patch was stored (an older store), it was cut at the size limit, redaction changed it, or
 *   it is incomplete (a nested repository);
 * - the fresh workspace differs from the one the agent started from (its tree digest: another
 *   commit, setup or base);
 * - the suite no longer has the skill or requirement;
 * - the patch no longer applies, or the re-run was lost to infrastructure.
 */
import { copyFile, mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { createHarness } from "../../agents/index.js";
import { UsageError } from "../../core/errors.js";
import { defaultCacheDir, type SandboxKind, type SandboxV1, treeDigest } from "../../env/index.js";
import { flagsForceZero } from "../../env/verifier/flags.js";
import { type RunManifest, readManifest, writeManifest } from "../store/manifest.js";
import { formatRunKey, ResultsStore, type RunResult, variantName } from "../store/results.js";
import { loadSuite } from "../suite/load.js";
import type { Suite } from "../suite/types.js";
import { type ExecutionContext, executeRun, messageOf } from "./execute.js";
import { openSandbox, preparedBases } from "./prepare.js";
import { storeRunResult } from "./store-result.js";

export interface RegradeOptions {
  /** The run directory whose stored runs are re-scored (read only). */
  readonly runDir: string;
  /** A suite with new verifiers; the suite the run used (its manifest) when absent. */
  readonly suite?: string;
  /** The new run directory; must not hold a run yet. */
  readonly outDir: string;
  readonly sandbox?: SandboxV1 | SandboxKind;
  readonly cacheDir?: string;
  readonly commandLine?: readonly string[];
  readonly onWarning?: (message: string) => void;
  readonly onProgress?: (done: number, total: number) => void;
}

export interface RegradedRun {
  readonly key: string;
  readonly old: number;
  readonly new: number;
  readonly rescored: boolean;
  readonly reason?: string;
}

export interface RequirementChange {
  readonly config: string;
  readonly skill: string;
  readonly requirement: string;
  readonly arm: string;
  /** Mean score over repeats (flags that zero a run zero it), old and new verifier. */
  readonly old: number;
  readonly new: number;
  /** `100·(new − old)`, points. */
  readonly delta: number;
}

export interface RegradeSummary {
  readonly runDir: string;
  readonly outDir: string;
  readonly suite: string;
  readonly runs: readonly RegradedRun[];
  readonly rescored: number;
  readonly kept: number;
  readonly requirements: readonly RequirementChange[];
}

function scoreOf(result: RunResult): number {
  return flagsForceZero(result.flags) || result.status === "timeout" ? 0 : result.passRatio;
}

/** Why a stored run cannot be re-scored, or undefined when it can. */
function notRegradable(result: RunResult): string | undefined {
  if (result.status === "timeout" || result.flags.includes("agent-timeout"))
    return "the agent timed out: the run scores 0 whatever a verifier says";
  const limit = result.flags.find((flag) => flag === "oom" || flag === "process-limit");
  if (limit !== undefined) return `a limit was hit (${limit}): kept as scored`;
  if (result.patch === undefined) return "no patch stored (run made before patches were kept)";
  if (result.patch.truncated) return "the stored patch was cut at the size limit";
  if (result.patch.redacted) return "redaction changed the stored patch, so it is not the agent's";
  if (result.patch.incomplete !== undefined)
    return `the stored patch is incomplete: ${result.patch.incomplete}`;
  return undefined;
}

export async function regradeRunDir(options: RegradeOptions): Promise<RegradeSummary> {
  const { runDir, outDir, manifest, suite, old } = await regradeInputs(options);
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  const ownSandbox = typeof options.sandbox !== "object";
  const sandbox =
    typeof options.sandbox === "object"
      ? options.sandbox
      : await openSandbox(options.sandbox ?? "local", options.onWarning, [
          suite.root,
          runDir,
          outDir,
          cacheDir,
        ]);
  const target: RegradeTarget = {
    suite,
    manifest,
    sandbox,
    baseFor: preparedBases(sandbox, cacheDir),
  };
  const store = ResultsStore.open(outDir);
  const runs: RegradedRun[] = [];
  const stored: RunResult[] = [];
  try {
    const now = new Date().toISOString();
    await writeManifest(outDir, {
      ...manifest,
      createdAt: now,
      updatedAt: now,
      suite: { path: suite.root, name: suite.name, digest: await treeDigest(suite.root) },
      commandLines: [
        ...manifest.commandLines,
        ...(options.commandLine === undefined ? [] : [[...options.commandLine]]),
      ],
    });
    for (const [index, result] of old.entries()) {
      const key = formatRunKey(result);
      const { reason, regraded } = await regradeOne(result, target);
      const copied = regradedRow(result, regraded, { runDir, key, reason });
      stored.push(await storeCopied(copied, runDir, outDir, store));
      runs.push({
        key,
        old: scoreOf(result),
        new: scoreOf(copied),
        rescored: regraded !== undefined,
        ...(reason === undefined ? {} : { reason }),
      });
      if (reason !== undefined && regraded === undefined)
        options.onWarning?.(`${key}: kept as it was (${reason})`);
      options.onProgress?.(index + 1, old.length);
    }
  } finally {
    store.close();
    if (ownSandbox) await sandbox.dispose?.();
  }
  return {
    runDir,
    outDir,
    suite: suite.root,
    runs,
    rescored: runs.filter((run) => run.rescored).length,
    kept: runs.filter((run) => !run.rescored).length,
    requirements: requirementChanges(old, stored),
  };
}

/** The run directory's manifest and stored results, and the suite to re-grade them with. */
async function regradeInputs(options: RegradeOptions): Promise<{
  readonly runDir: string;
  readonly outDir: string;
  readonly manifest: RunManifest;
  readonly suite: Suite;
  readonly old: RunResult[];
}> {
  const runDir = resolve(options.runDir);
  const outDir = resolve(options.outDir);
  const manifest = await readManifest(runDir);
  if (manifest === undefined) {
    throw new UsageError(
      "bench.regrade-not-a-run",
      `${options.runDir}: no run there (no manifest.json)`,
    );
  }
  if (outDir === runDir || (await readManifest(outDir)) !== undefined) {
    throw new UsageError(
      "bench.regrade-out-exists",
      `--out ${options.outDir}: already holds a run; re-grading writes a new run directory`,
    );
  }
  const suite = await loadSuite(resolve(options.suite ?? manifest.suite.path));
  const source = ResultsStore.openReadOnly(runDir);
  try {
    return { runDir, outDir, manifest, suite, old: source.results() };
  } finally {
    source.close();
  }
}

/** What re-grading a run needs: the suite, the old run's configurations, a sandbox and bases. */
interface RegradeTarget {
  readonly suite: Suite;
  readonly manifest: RunManifest;
  readonly sandbox: SandboxV1;
  readonly baseFor: ExecutionContext["baseFor"];
}

/** The stored run re-scored by the suite's verifier, or why it is kept as it was. */
async function regradeOne(
  result: RunResult,
  target: RegradeTarget,
): Promise<{ readonly reason?: string | undefined; readonly regraded?: RunResult }> {
  const skill = target.suite.skills.find((item) => item.id === result.skill);
  const requirement = skill?.requirements.find((item) => item.id === result.requirement);
  const configuration = target.manifest.configurations.find((item) => item.id === result.config);
  if (skill === undefined || requirement === undefined)
    return { reason: "the suite has no such skill or requirement any more" };
  if (configuration === undefined) return { reason: "the manifest has no such configuration" };
  const reason = notRegradable(result);
  if (reason !== undefined) return { reason };
  try {
    const diff = result.patch?.diff ?? "";
    const context: ExecutionContext = {
      sandbox: target.sandbox,
      baseFor: target.baseFor,
      // The replay harness applies the stored change: no agent, no model.
      harnessOf: () => createHarness("replay", { patchFor: () => diff }),
    };
    // A variant given on the command line is not in the suite; the replay harness installs
    // nothing anyway (the patch is the agent's output), so any folder will do.
    const name = variantName(result.arm);
    const runSkill =
      name === undefined || skill.variants?.[name] !== undefined
        ? skill
        : { ...skill, variants: { ...skill.variants, [name]: skill.skillFolders } };
    const fresh = await executeRun(
      { key: result, configuration, skill: runSkill, requirement },
      context,
      1,
      new Date().toISOString(),
    );
    if (fresh === undefined) return { reason: "aborted" };
    if (fresh.workspaceDigest !== result.workspaceDigest)
      // The same bytes or it is not the same experiment (new commit, setup, base).
      return {
        reason: "the suite now prepares a different base than the one the agent started from",
      };
    if (fresh.status !== "completed")
      return { reason: "the stored patch did not apply to a fresh workspace" };
    return { regraded: fresh };
  } catch (error) {
    return { reason: `the re-run failed: ${messageOf(error)}` };
  }
}

/**
 * The row the new run directory stores: the run as it was (with why), or with the verifier's side
 * new and the agent's side (trajectory, usage, times) the run's.
 */
function regradedRow(
  result: RunResult,
  regraded: RunResult | undefined,
  origin: { readonly runDir: string; readonly key: string; readonly reason?: string | undefined },
): RunResult {
  const provenance = {
    kind: "regraded" as const,
    runDir: origin.runDir,
    key: origin.key,
    passRatio: result.passRatio,
  };
  if (regraded === undefined) {
    return {
      ...result,
      provenance: {
        ...provenance,
        rescored: false,
        ...(origin.reason === undefined ? {} : { reason: origin.reason }),
      },
    };
  }
  return {
    ...result,
    passRatio: regraded.passRatio,
    passed: regraded.passed,
    total: regraded.total,
    checks: regraded.checks,
    flags: regraded.flags,
    requiredFiles: regraded.requiredFiles,
    verifierMs: regraded.verifierMs,
    ...(regraded.verifier === undefined ? {} : { verifier: regraded.verifier }),
    provenance: { ...provenance, rescored: true },
  };
}

/** Store a copied row in the new run directory, with its raw log file when it has one. */
async function storeCopied(
  copied: RunResult,
  runDir: string,
  outDir: string,
  store: ResultsStore,
): Promise<RunResult> {
  const { fingerprint: _fingerprint, ...withoutFingerprint } = copied;
  if (copied.trajectoryFile !== undefined) {
    const target = join(outDir, copied.trajectoryFile);
    await mkdir(dirname(target), { recursive: true });
    await copyFile(join(runDir, copied.trajectoryFile), target);
  }
  // A re-graded row is not a fresh run of its fingerprint: none is kept, so it is never reused.
  return storeRunResult(store, outDir, withoutFingerprint);
}

/** Mean score per (config, skill, requirement, arm), old against new. */
function requirementChanges(
  old: readonly RunResult[],
  fresh: readonly RunResult[],
): RequirementChange[] {
  const groups = new Map<string, { old: number[]; new: number[] }>();
  const keyOf = (result: RunResult) =>
    JSON.stringify([result.config, result.skill, result.requirement, result.arm]);
  for (const result of old) {
    const group = groups.get(keyOf(result)) ?? { old: [], new: [] };
    group.old.push(scoreOf(result));
    groups.set(keyOf(result), group);
  }
  for (const result of fresh) groups.get(keyOf(result))?.new.push(scoreOf(result));
  const mean = (values: readonly number[]) =>
    values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
  return [...groups.entries()].map(([key, group]) => {
    const [config, skill, requirement, arm] = JSON.parse(key) as string[];
    const before = mean(group.old);
    const after = mean(group.new);
    return {
      config: config ?? "",
      skill: skill ?? "",
      requirement: requirement ?? "",
      arm: arm ?? "",
      old: before,
      new: after,
      delta: 100 * (after - before),
    };
  });
}
