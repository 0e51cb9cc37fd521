/**
 * What review decisions do to a report, and the run-directory operations behind
 * `skillsmith bench review`. The report is built as usual from the results with rejected runs
 * scored `tampered`; then each profile with a pending suspicious run in one of its skill's arms
 * has its verdict held (`Profile.review`; `class`/`classFdr` null, so no count, text, JSON or
 * HTML shows it Golden).
 */
import { join, resolve } from "node:path";
import { UsageError } from "../../core/errors.js";
import { pathExists } from "../../core/fs.js";
import type { BenchReport, ConfigSummary, Profile } from "../analysis/report-types.js";
import { RESULTS_FILE, ResultsStore, type RunResult } from "../store/results.js";
import {
  type ReviewDecision,
  type ReviewFile,
  readReview,
  type SuspiciousRun,
  suspiciousRuns,
  writeReview,
} from "./review.js";

function holdProfile(profile: Profile, pending: readonly string[]): Profile {
  return {
    ...profile,
    class: null,
    classFdr: null,
    review: {
      status: "needs-review",
      heldClass: profile.class,
      heldClassFdr: profile.classFdr,
      runs: pending,
    },
  };
}

function recount(config: ConfigSummary, profiles: readonly Profile[]): ConfigSummary {
  const own = profiles.filter((profile) => profile.config === config.config);
  const count = (name: string) => own.filter((profile) => profile.class === name).length;
  const countFdr = (name: string) => own.filter((profile) => profile.classFdr === name).length;
  const held = own.filter((profile) => profile.review !== undefined).length;
  return {
    ...config,
    classes: {
      ...config.classes,
      golden: count("golden"),
      harmful: count("harmful"),
      ineffective: count("ineffective"),
      ...(held === 0 ? {} : { needsReview: held }),
    },
    classesFdr: {
      golden: countFdr("golden"),
      harmful: countFdr("harmful"),
      ineffective: countFdr("ineffective"),
    },
  };
}

/** The report with every verdict a pending suspicious run holds back held, and the summary. */
export function holdVerdicts(
  report: BenchReport,
  suspicious: readonly SuspiciousRun[],
): BenchReport {
  if (suspicious.length === 0) return report;
  const profiles = report.profiles.map((profile) => {
    const pending = suspicious
      .filter(
        (run) =>
          run.status === "pending" &&
          run.holdsVerdict &&
          run.config === profile.config &&
          run.skill === profile.skill,
      )
      .map((run) => run.key);
    return pending.length === 0 || profile.unscorable !== null
      ? profile
      : holdProfile(profile, pending);
  });
  return {
    ...report,
    profiles,
    configs: report.configs.map((config) => recount(config, profiles)),
    review: {
      pending: suspicious.filter((run) => run.status === "pending").length,
      accepted: suspicious.filter((run) => run.status === "accepted").length,
      rejected: suspicious.filter((run) => run.status === "rejected").length,
      runs: suspicious.map((run) => ({ key: run.key, status: run.status, findings: run.findings })),
    },
  };
}

async function storedResults(runDir: string): Promise<RunResult[]> {
  if (!(await pathExists(join(runDir, RESULTS_FILE)))) {
    throw new UsageError(
      "bench.review-no-results",
      `${runDir} is not a run directory (no ${RESULTS_FILE}); review a directory written by \`skillsmith bench run\``,
    );
  }
  const store = ResultsStore.openReadOnly(runDir);
  try {
    return store.results();
  } finally {
    store.close();
  }
}

/** The suspicious runs of a run directory, with their review status. */
export async function reviewRunDir(runDir: string): Promise<SuspiciousRun[]> {
  const directory = resolve(runDir);
  return suspiciousRuns(await storedResults(directory), await readReview(directory));
}

/**
 * Record a decision on suspicious runs, by key or `all` (every pending one). A key that names
 * no suspicious run is a usage error listing those there are; nothing is written then.
 */
export async function decideRunDir(
  runDir: string,
  keys: readonly string[] | "all",
  decision: ReviewDecision,
  now: Date = new Date(),
): Promise<SuspiciousRun[]> {
  const directory = resolve(runDir);
  const review = await readReview(directory);
  const runs = suspiciousRuns(await storedResults(directory), review);
  const chosen =
    keys === "all"
      ? runs.filter((run) => run.status === "pending")
      : keys.map((key) => {
          const run = runs.find((candidate) => candidate.key === key);
          if (run === undefined) {
            const known = runs.map((candidate) => candidate.key);
            throw new UsageError(
              "bench.review-unknown-run",
              `${key}: no suspicious run with that key in ${directory} (suspicious: ${known.slice(0, 20).join(", ") || "none"})`,
            );
          }
          return run;
        });
  const updated: ReviewFile = {
    ...review,
    decisions: [
      ...review.decisions,
      ...chosen.map((run) => ({
        key: run.key,
        decision,
        at: now.toISOString(),
        findings: [...run.findings],
      })),
    ],
  };
  if (chosen.length > 0) await writeReview(directory, updated);
  return suspiciousRuns(await storedResults(directory), updated).filter((run) =>
    chosen.some((picked) => picked.key === run.key),
  );
}
