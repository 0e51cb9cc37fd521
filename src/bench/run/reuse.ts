/**
 * Baseline reuse: when only the skill changed, the unassisted (`without`) runs of an earlier run
 * directory are copied instead of paying for the agent again — but only a run whose fingerprint
 * (`./fingerprint.ts`: base, agent and version, model, requirement and verifier, limits, sandbox,
 * skills installed) is identical. The sources are named explicitly (`--reuse <run-dir>`,
 * repeatable) rather than searched for in some history: which experiment a number came from
 * must be the user's decision, visible on the command line and in the manifest. Each copied row
 * says where it came from (`provenance`), and the report lists them. `--fresh-baseline` turns
 * reuse off.
 *
 * Repeat r of a key takes the r-th matching result (sources in the order given, then by
 * configuration and repeat), so one earlier run never stands for two repeats of the same key.
 */
import { copyFile, mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { UsageError } from "../../core/errors.js";
import { packageVersion } from "../../core/paths.js";
import type { PreparedBase } from "../../env/index.js";
import { readManifest } from "../store/manifest.js";
import {
  formatRunKey,
  RESULTS_FILE,
  ResultsStore,
  type RunFingerprint,
  type RunResult,
  variantName,
} from "../store/results.js";
import type { Configuration } from "../suite/schema.js";
import type { SuiteSkill } from "../suite/types.js";
import { agentBinary, FolderDigests, runFingerprint } from "./fingerprint.js";
import type { PlannedRun } from "./plan.js";

/**
 * The folders installed in a run's arm: the arm's own (none, the suite's skill, or a variant's),
 * then the skill's distractors, which every arm gets. The arm's own come first: a harness that
 * takes one `skillPath` gets the skill under test.
 */
export function installedFolders(skill: SuiteSkill, arm: PlannedRun["key"]["arm"]): string[] {
  return [...armOwnFolders(skill, arm), ...(skill.distractors ?? [])];
}

/** The folders of an arm without the distractors: none, the suite's skill, or a variant's. */
export function armOwnFolders(skill: SuiteSkill, arm: PlannedRun["key"]["arm"]): string[] {
  if (arm === "without") return [];
  if (arm === "with") return [...skill.skillFolders];
  const name = variantName(arm) ?? "";
  const folders = skill.variants?.[name];
  if (folders === undefined || folders.length === 0) {
    throw new UsageError(
      "bench.variant-unknown",
      `skill ${skill.id} has no variant "${name}" (its variants: ${Object.keys(skill.variants ?? {}).join(", ") || "none"})`,
    );
  }
  return [...folders];
}

export interface FingerprintContext {
  readonly baseFor: (skill: SuiteSkill) => Promise<PreparedBase>;
  readonly harnessName: (configuration: Configuration) => string;
  readonly modelSpec: (configuration: Configuration) => string;
  /** `versions.agents` of the run manifest. */
  readonly agentVersions: Readonly<Record<string, string>>;
  readonly sandbox: string;
  readonly replayPatch?: (run: PlannedRun) => string | undefined;
}

/** The fingerprint of each planned run, computed once per key. */
export function fingerprints(
  context: FingerprintContext,
): (run: PlannedRun) => Promise<RunFingerprint> {
  const digests = new FolderDigests();
  const cache = new Map<string, Promise<RunFingerprint>>();
  return (run) => {
    const id = formatRunKey(run.key);
    let fingerprint = cache.get(id);
    if (fingerprint === undefined) {
      fingerprint = (async () => {
        const binary = agentBinary(run.configuration.agent);
        const replayPatch =
          run.configuration.agent === "replay" ? context.replayPatch?.(run) : undefined;
        return runFingerprint(
          {
            configuration: run.configuration,
            skill: run.skill,
            requirement: run.requirement,
            base: await context.baseFor(run.skill),
            installed: installedFolders(run.skill, run.key.arm),
            harness: context.harnessName(run.configuration),
            modelSpec: context.modelSpec(run.configuration),
            agentVersion:
              binary === undefined
                ? `skillsmith ${packageVersion()}`
                : (context.agentVersions[binary] ?? "unknown"),
            skillsmithVersion: packageVersion(),
            sandbox: context.sandbox,
            ...(replayPatch === undefined ? {} : { replayPatch }),
          },
          digests,
        );
      })();
      cache.set(id, fingerprint);
      fingerprint.catch(() => cache.delete(id));
    }
    return fingerprint;
  };
}

/** Earlier run directories whose unassisted runs may stand in for this run's. */
export class BaselineSources {
  private constructor(
    private readonly sources: ReadonlyArray<{
      readonly runDir: string;
      readonly store: ResultsStore;
    }>,
  ) {}

  /** Open each directory read-only; one that holds no run, or is the run itself, is a usage error. */
  static async open(runDirs: readonly string[], ownRunDir: string): Promise<BaselineSources> {
    const sources: Array<{ runDir: string; store: ResultsStore }> = [];
    try {
      for (const given of runDirs) {
        const runDir = resolve(given);
        if (runDir === resolve(ownRunDir)) {
          throw new UsageError(
            "bench.reuse-self",
            `--reuse ${given}: that is this run's own directory (its runs are kept anyway)`,
          );
        }
        if ((await readManifest(runDir)) === undefined) {
          throw new UsageError(
            "bench.reuse-not-a-run",
            `--reuse ${given}: no earlier run there (no manifest.json and ${RESULTS_FILE})`,
          );
        }
        sources.push({ runDir, store: ResultsStore.openReadOnly(runDir) });
      }
    } catch (error) {
      for (const source of sources) source.store.close();
      throw error;
    }
    return new BaselineSources(sources);
  }

  get runDirs(): string[] {
    return this.sources.map((source) => source.runDir);
  }

  /**
   * A copy of an earlier unassisted result with the same fingerprint for `run`, re-keyed to it
   * and marked with where it came from, or undefined. Only the `without` arm is ever reused.
   */
  async reuse(
    run: PlannedRun,
    fingerprint: RunFingerprint,
    runDir: string,
  ): Promise<RunResult | undefined> {
    if (run.key.arm !== "without") return undefined;
    const candidates = this.sources.flatMap((source) =>
      source.store
        .resultsWithFingerprint(fingerprint.digest)
        .filter((result) => result.arm === "without")
        .map((result) => ({ source, result })),
    );
    const chosen = candidates[run.key.repeat - 1];
    if (chosen === undefined) return undefined;
    const { source, result } = chosen;
    let trajectoryFile = result.trajectoryFile;
    if (trajectoryFile !== undefined) {
      // The row may name a raw log under the source's trajectories/: copied, so this run
      // directory stays complete on its own.
      const target = join(runDir, trajectoryFile);
      await mkdir(dirname(target), { recursive: true });
      await copyFile(join(source.runDir, trajectoryFile), target);
      trajectoryFile = result.trajectoryFile;
    }
    return {
      ...result,
      ...run.key,
      ...(trajectoryFile === undefined ? {} : { trajectoryFile }),
      fingerprint,
      provenance: { kind: "reused", runDir: source.runDir, key: formatRunKey(result) },
    };
  }

  close(): void {
    for (const source of this.sources) source.store.close();
  }
}
