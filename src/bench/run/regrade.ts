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
import { readManifest, writeManifest } from "../store/manifest.js";
import { formatRunKey, ResultsStore, type RunResult, variantName } from "../store/results.js";
import { loadSuite } from "../suite/load.js";
import type { Configuration } from "../suite/schema.js";
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
  const runDir = resolve(options.runDir);
  const outDir = resolve(options.outDir);
  const manifest = await readManifest(runDir);
  if (manifest === undefined) {
    throw new UsageError("regrade-not-a-run", `${options.runDir}: no run there (no manifest.json)`);
  }
  if (outDir === runDir || (await readManifest(outDir)) !== undefined) {
    throw new UsageError(
      "regrade-out-exists",
      `--out ${options.outDir}: already holds a run; re-grading writes a new run directory`,
    );
  }
  const suitePath = resolve(options.suite ?? manifest.suite.path);
  const suite = await loadSuite(suitePath);
  const source = ResultsStore.openReadOnly(runDir);
  let old: RunResult[];
  try {
    old = source.results();
  } finally {
    source.close();
  }

  const cacheDir = options.cacheDir ?? defaultCacheDir();
  const ownSandbox = typeof options.sandbox !== "object";
  const sandbox =
    typeof options.sandbox === "object"
      ? options.sandbox
      : await openSandbox(options.sandbox ?? "local", options.onWarning, [
          suitePath,
          runDir,
          outDir,
          cacheDir,
        ]);
  const baseFor = preparedBases(sandbox, cacheDir);
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
      const skill = suite.skills.find((item) => item.id === result.skill);
      const requirement = skill?.requirements.find((item) => item.id === result.requirement);
      const configuration = manifest.configurations.find((item) => item.id === result.config) as
        | Configuration
        | undefined;
      let reason =
        skill === undefined || requirement === undefined
          ? "the suite has no such skill or requirement any more"
          : configuration === undefined
            ? "the manifest has no such configuration"
            : notRegradable(result);
      let regraded: RunResult | undefined;
      if (
        reason === undefined &&
        skill !== undefined &&
        requirement !== undefined &&
        configuration !== undefined
      ) {
        try {
          {
            const diff = result.patch?.diff ?? "";
            const context: ExecutionContext = {
              sandbox,
              baseFor,
              // The replay harness applies the stored change: no agent, no model.
              harnessOf: () => createHarness("replay", { patchFor: () => diff }),
            };
            // A variant given on the command line is not in the suite; the replay harness
            // installs nothing anyway (the patch is the agent's output), so any folder will do.
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
            if (fresh === undefined) reason = "aborted";
            else if (fresh.workspaceDigest !== result.workspaceDigest)
              // The same bytes or it is not the same experiment (new commit, setup, base).
              reason =
                "the suite now prepares a different base than the one the agent started from";
            else if (fresh.status !== "completed")
              reason = "the stored patch did not apply to a fresh workspace";
            else regraded = fresh;
          }
        } catch (error) {
          reason = `the re-run failed: ${messageOf(error)}`;
        }
      }
      const copied: RunResult =
        regraded === undefined
          ? {
              ...result,
              provenance: {
                kind: "regraded",
                runDir,
                key,
                passRatio: result.passRatio,
                rescored: false,
                ...(reason === undefined ? {} : { reason }),
              },
            }
          : {
              ...result,
              // The verifier's side is new; the agent's side (trajectory, usage, times) is the run's.
              passRatio: regraded.passRatio,
              passed: regraded.passed,
              total: regraded.total,
              checks: regraded.checks,
              flags: regraded.flags,
              requiredFiles: regraded.requiredFiles,
              verifierMs: regraded.verifierMs,
              ...(regraded.verifier === undefined ? {} : { verifier: regraded.verifier }),
              provenance: {
                kind: "regraded",
                runDir,
                key,
                passRatio: result.passRatio,
                rescored: true,
              },
            };
      const { fingerprint: _fingerprint, ...withoutFingerprint } = copied;
      if (copied.trajectoryFile !== undefined) {
        const target = join(outDir, copied.trajectoryFile);
        await mkdir(dirname(target), { recursive: true });
        await copyFile(join(runDir, copied.trajectoryFile), target);
      }
      // A re-graded row is not a fresh run of its fingerprint: none is kept, so it is never reused.
      stored.push(await storeRunResult(store, outDir, withoutFingerprint));
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
