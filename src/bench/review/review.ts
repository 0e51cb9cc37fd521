/**
 * Layer 7's second half: runs the patch scan found something in (`RunPatch.scan`) but that no
 * check inside the verifier's process flagged are `suspicious`. Such a run keeps its score, but
 * the verdict of its skill is held as "needs review" (never counted Golden) until a person
 * decides: `skillsmith bench review <run-dir> --accept <key|all>` (the findings are innocent:
 * the verdict stands) or `--reject` (the run cheated: it is scored as `tampered`, 0). Decisions
 * live in the run directory's `review.json`, versioned and read back through a schema; a
 * decision covers the findings it was made on, so a run re-scored with other findings (a resumed
 * or regraded run under the same key) is pending again.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { InputError } from "../../core/errors.js";
import { formatTag } from "../../core/format-tag.js";
import { formatTagSchema } from "../../core/format-tag-schema.js";
import { writeFileAtomic } from "../../core/fs.js";
import { parseInput } from "../../core/parse.js";
import { formatRunKey, type RunResult } from "../store/results.js";

export const REVIEW_FILE = "review.json";
export const REVIEW_FORMAT = formatTag("review", 1);

export type ReviewDecision = "accept" | "reject";
export type ReviewStatus = "pending" | "accepted" | "rejected";

const decisionSchema = z.strictObject({
  key: z.string().min(1),
  decision: z.enum(["accept", "reject"]),
  /** ISO time of the decision. */
  at: z.string().min(1),
  /** The evidence lines the decision was made on. */
  findings: z.array(z.string()),
});

const reviewFileSchema = z.strictObject({
  format: formatTagSchema(REVIEW_FORMAT),
  decisions: z.array(decisionSchema),
});

export type ReviewFile = z.output<typeof reviewFileSchema>;
type Decision = ReviewFile["decisions"][number];

export interface SuspiciousRun {
  readonly key: string;
  readonly config: string;
  readonly skill: string;
  readonly requirement: string;
  readonly arm: string;
  readonly passRatio: number;
  /** `scan: <file>:<line> <rule>: <detail>`, one per finding. */
  readonly findings: readonly string[];
  readonly status: ReviewStatus;
  /** When the decision was made (accepted or rejected runs). */
  readonly decidedAt?: string;
  /** The run is in an arm with the skill: pending, it holds the skill's verdict. */
  readonly holdsVerdict: boolean;
}

/** A run's scan findings as evidence lines. */
export function scanEvidence(run: RunResult): string[] {
  return (run.patch?.scan ?? []).map(
    (finding) => `scan: ${finding.file}:${finding.line} ${finding.rule}: ${finding.detail}`,
  );
}

function sameFindings(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((line, index) => line === right[index]);
}

/** The last decision on `key` made on exactly these findings. */
function decisionFor(
  review: ReviewFile,
  key: string,
  findings: readonly string[],
): Decision | undefined {
  return review.decisions.findLast(
    (decision) => decision.key === key && sameFindings(decision.findings, findings),
  );
}

/**
 * The runs with scan findings and no stronger verdict (a `tampered` run already scores 0), with
 * their review status.
 */
export function suspiciousRuns(
  results: readonly RunResult[],
  review: ReviewFile = emptyReview(),
): SuspiciousRun[] {
  const runs: SuspiciousRun[] = [];
  for (const run of results) {
    const findings = scanEvidence(run);
    if (findings.length === 0 || run.flags.includes("tampered")) continue;
    const key = formatRunKey(run);
    const decision = decisionFor(review, key, findings);
    runs.push({
      key,
      config: run.config,
      skill: run.skill,
      requirement: run.requirement,
      arm: run.arm,
      passRatio: run.passRatio,
      findings,
      status:
        decision === undefined
          ? "pending"
          : decision.decision === "accept"
            ? "accepted"
            : "rejected",
      ...(decision === undefined ? {} : { decidedAt: decision.at }),
      holdsVerdict: run.arm !== "without",
    });
  }
  return runs;
}

/**
 * Results with the rejected runs scored as `tampered` (score 0, the reviewer's decision as
 * evidence), everything else unchanged.
 */
export function applyRejections(
  results: readonly RunResult[],
  suspicious: readonly SuspiciousRun[],
): RunResult[] {
  const rejected = new Map(
    suspicious.filter((run) => run.status === "rejected").map((run) => [run.key, run]),
  );
  return results.map((run) => {
    const decision = rejected.get(formatRunKey(run));
    if (decision === undefined) return run;
    const evidence = [
      ...(run.verifier?.evidence ?? []),
      `review: rejected by a person (${decision.decidedAt ?? "?"}) on the patch scan's findings`,
      ...decision.findings,
    ];
    return {
      ...run,
      passRatio: 0,
      flags: [...run.flags, "tampered"],
      ...(run.verifier === undefined ? {} : { verifier: { ...run.verifier, evidence } }),
    };
  });
}

export function emptyReview(): ReviewFile {
  return { format: REVIEW_FORMAT, decisions: [] };
}

/** The run directory's review file; none yet is an empty one. Damaged: an error naming it. */
export async function readReview(runDir: string): Promise<ReviewFile> {
  const file = join(runDir, REVIEW_FILE);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyReview();
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(
      "bench.review-file-invalid",
      `not JSON (${error instanceof Error ? error.message : String(error)}); expected ${REVIEW_FORMAT} as written by \`skillsmith bench review\``,
      { file },
    );
  }
  return parseInput(reviewFileSchema, value, {
    code: "bench.review-file-invalid",
    location: { file },
  });
}

export async function writeReview(runDir: string, review: ReviewFile): Promise<void> {
  await writeFileAtomic(join(runDir, REVIEW_FILE), `${JSON.stringify(review, null, 2)}\n`);
}
