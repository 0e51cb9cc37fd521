/** The review's lines in the text report (`bench report`) and its verdict label. */
import type { BenchReport, Profile } from "../analysis/report-types.js";

/** "needs review (statistics: golden)" for a held verdict; undefined when nothing is held. */
export function heldVerdictLabel(profile: Profile): string | undefined {
  if (profile.review === undefined) return undefined;
  const held = profile.review.heldClass;
  return held === null ? "needs review" : `needs review (statistics: ${held})`;
}

/** The suspicious runs, their findings and what to run next; nothing when there are none. */
export function reviewLines(report: BenchReport): string[] {
  const review = report.review;
  if (review === undefined || review.runs.length === 0) return [];
  const lines = [
    `suspicious runs (patch-scan findings only; scores kept): ${review.pending} pending, ${review.accepted} accepted, ${review.rejected} rejected`,
  ];
  for (const run of review.runs) {
    lines.push(`  ${run.key} [${run.status}]`);
    for (const finding of run.findings.slice(0, 5)) lines.push(`    ${finding}`);
    if (run.findings.length > 5) lines.push(`    … and ${run.findings.length - 5} more`);
  }
  if (review.pending > 0) {
    lines.push(
      "  a held verdict is never counted; decide with `skillsmith bench review <run-dir> --accept <key|all>` or `--reject <key|all>`",
    );
  }
  return lines;
}
