import { join, resolve } from "node:path";
import { UsageError } from "../../core/errors.js";
import { pathExists } from "../../core/fs.js";
import { applyRejections, holdVerdicts, readReview, suspiciousRuns } from "../review/index.js";
import { type RunManifest, readManifest } from "../store/manifest.js";
import {
  type AttemptRecord,
  RESULTS_FILE,
  ResultsStore,
  type RunResult,
} from "../store/results.js";
import {
  type BenchReport,
  type BuildReportOptions,
  buildReport,
  type Completeness,
} from "./report.js";

/** Which part of a run a report covers (`bench report --skill … --requirement …`). */
export interface ReportFilter {
  /** Skill ids; none means every skill. */
  readonly skills?: readonly string[];
  /**
   * Requirement ids (`r1`), or `skill/requirement` to name one skill's requirement; none means
   * every requirement.
   */
  readonly requirements?: readonly string[];
}

function matches(filter: ReportFilter, key: { skill: string; requirement: string }): boolean {
  const skills = filter.skills ?? [];
  const requirements = filter.requirements ?? [];
  if (skills.length > 0 && !skills.includes(key.skill)) return false;
  if (
    requirements.length > 0 &&
    !requirements.includes(key.requirement) &&
    !requirements.includes(`${key.skill}/${key.requirement}`)
  ) {
    return false;
  }
  return true;
}

/**
 * Keep the results and attempts the filter names. A skill or requirement that names nothing in
 * the run is a usage error listing what exists, so a typo never yields an empty report that
 * looks like a finished one.
 */
export function filterRuns(
  results: readonly RunResult[],
  attempts: readonly AttemptRecord[],
  filter: ReportFilter,
): { results: RunResult[]; attempts: AttemptRecord[] } {
  const keys = [...results, ...attempts];
  const skills = [...new Set(keys.map((key) => key.skill))].sort();
  for (const skill of filter.skills ?? []) {
    if (!skills.includes(skill)) {
      throw new UsageError(
        "bench.report-unknown-skill",
        `--skill ${skill}: no run of that skill in this run directory (skills: ${skills.join(", ") || "none"})`,
      );
    }
  }
  const inSkills = keys.filter((key) => matches({ skills: filter.skills ?? [] }, key));
  const requirementIds = new Set(
    inSkills.flatMap((key) => [key.requirement, `${key.skill}/${key.requirement}`]),
  );
  for (const requirement of filter.requirements ?? []) {
    if (!requirementIds.has(requirement)) {
      const known = [...new Set(inSkills.map((key) => `${key.skill}/${key.requirement}`))].sort();
      throw new UsageError(
        "bench.report-unknown-requirement",
        `--requirement ${requirement}: no run of that requirement${(filter.skills ?? []).length > 0 ? " in the selected skills" : ""} (requirements: ${known.slice(0, 20).join(", ") || "none"}${known.length > 20 ? ", …" : ""})`,
      );
    }
  }
  return {
    results: results.filter((result) => matches(filter, result)),
    attempts: attempts.filter((attempt) => matches(filter, attempt)),
  };
}

/**
 * How many of the runs the manifest plans (within the filter) have a result: a report of part
 * of a run must say so. Undefined when the manifest records no plan (older run directories).
 */
export function completenessOf(
  manifest: RunManifest | undefined,
  results: readonly RunResult[],
  filter: ReportFilter,
): Completeness | undefined {
  const plan = manifest?.plannedRuns;
  if (plan === undefined) return undefined;
  const storedBy = new Map<string, number>();
  for (const result of results) {
    const id = `${result.config}/${result.skill}/${result.requirement}`;
    storedBy.set(id, (storedBy.get(id) ?? 0) + 1);
  }
  let planned = 0;
  let stored = 0;
  for (const [id, count] of Object.entries(plan)) {
    const [config = "", skill = "", ...rest] = id.split("/");
    if (!matches(filter, { skill, requirement: rest.join("/") })) continue;
    if (config === "") continue;
    planned += count;
    stored += Math.min(count, storedBy.get(id) ?? 0);
  }
  return { complete: stored >= planned, stored, planned };
}

export interface ReportRunDirOptions
  extends Omit<BuildReportOptions, "manifest" | "attempts" | "filter"> {
  readonly filter?: ReportFilter;
}

/** The report of a run directory, read from its store and manifest (read-only; nothing runs). */
export async function reportRunDir(
  runDir: string,
  options: ReportRunDirOptions = {},
): Promise<BenchReport> {
  const directory = resolve(runDir);
  if (!(await pathExists(join(directory, RESULTS_FILE)))) {
    throw new UsageError(
      "bench.report-no-results",
      `${directory} is not a run directory (no ${RESULTS_FILE}); run \`skillsmith bench run <suite> --out ${runDir}\` first`,
    );
  }
  const manifest = await readManifest(directory);
  const store = ResultsStore.openReadOnly(directory);
  try {
    const { filter, ...rest } = options;
    const active =
      filter !== undefined &&
      ((filter.skills ?? []).length > 0 || (filter.requirements ?? []).length > 0);
    const selected = active
      ? filterRuns(store.results(), store.attempts(), filter)
      : { results: store.results(), attempts: store.attempts() };
    const completeness = completenessOf(manifest, selected.results, active ? filter : {});
    // Layer 7: rejected suspicious runs score as tampered; pending ones hold their skill's verdict.
    const suspicious = suspiciousRuns(selected.results, await readReview(directory));
    const report = buildReport(applyRejections(selected.results, suspicious), {
      ...rest,
      ...(manifest === undefined ? {} : { manifest }),
      ...(completeness === undefined ? {} : { completeness }),
      attempts: selected.attempts,
      ...(active
        ? {
            filter: {
              ...((filter.skills ?? []).length > 0 ? { skills: filter.skills } : {}),
              ...((filter.requirements ?? []).length > 0
                ? { requirements: filter.requirements }
                : {}),
            },
          }
        : {}),
    });
    return holdVerdicts(report, suspicious);
  } finally {
    store.close();
  }
}
