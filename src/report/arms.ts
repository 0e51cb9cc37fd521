/**
 * The HTML report's arm sections: the comparison matrix of each skill with variants (Δ of the
 * column arm minus the row arm, with its sign-flip p) and the list of every pair with its class,
 * q and class under FDR control; and where results came from when they were not executed in the
 * run directory (reused baselines, re-graded runs). Every text from the run is escaped.
 */
import type { BenchReport } from "../bench/analysis/report.js";
import { escapeHtml, formatDelta, formatP, provisionalMark } from "./format.js";

export function armsSection(report: BenchReport): string {
  const matrices = report.arms ?? [];
  if (matrices.length === 0) return "";
  const provisional = provisionalMark(report);
  const parts = matrices.map((matrix) => {
    const cell = (row: string, column: string) => {
      const pair = matrix.pairs.find(
        (item) => (item.a === row && item.b === column) || (item.a === column && item.b === row),
      );
      if (pair === undefined || pair.delta === null) return "<td>-</td>";
      const delta = pair.a === row ? pair.delta : -pair.delta;
      return `<td data-testid="arm-cell" data-row="${escapeHtml(row)}" data-column="${escapeHtml(column)}">${escapeHtml(formatDelta(delta))} <span class="meta">p ${escapeHtml(formatP(pair.p))}</span></td>`;
    };
    const header = matrix.arms
      .map((arm) => `<th scope="col">${escapeHtml(arm.label)}</th>`)
      .join("");
    const rows = matrix.arms
      .map(
        (row) =>
          `<tr><th scope="row">${escapeHtml(row.label)}</th>${matrix.arms.map((column) => (column.arm === row.arm ? "<td>·</td>" : cell(row.arm, column.arm))).join("")}</tr>`,
      )
      .join("");
    const pairRows = matrix.pairs
      .map(
        (pair) =>
          `<tr data-testid="arm-pair" data-label="${escapeHtml(pair.label)}"><td>${escapeHtml(pair.label)}</td><td>${pair.deltas.length} of ${pair.requirements}</td><td>${escapeHtml(formatDelta(pair.delta))}</td><td>${escapeHtml(formatP(pair.p))}</td><td>${escapeHtml(pair.class ?? "unscorable")}${provisional}</td><td>${escapeHtml(formatP(pair.q))}</td><td>${escapeHtml(pair.classFdr ?? "-")}${pair.classFdr === null ? "" : provisional}</td></tr>`,
      )
      .join("");
    return `<h3>${escapeHtml(matrix.config)} / ${escapeHtml(matrix.skill)}</h3>
<table data-testid="arm-matrix"><caption>Δ (points) of the column arm minus the row arm, with the exact sign-flip p</caption><thead><tr><th scope="col"></th>${header}</tr></thead><tbody>${rows}</tbody></table>
<table data-testid="arm-pairs"><caption>Every pair of arms</caption><thead><tr><th scope="col">comparison</th><th scope="col">measured</th><th scope="col">Δ</th><th scope="col">p (sign-flip)</th><th scope="col">class</th><th scope="col">q (BH)</th><th scope="col">class (FDR)</th></tr></thead><tbody>${pairRows}</tbody></table>`;
  });
  return `<section id="arms"><h2>Arms compared</h2>
<p>Each skill with variants: every pair of arms (none, the suite's skill, each variant) gets the same paired analysis as skill against none; q is Benjamini–Hochberg over every pair shown.</p>
${parts.join("\n")}
</section>`;
}

export function provenanceSection(report: BenchReport): string {
  const provenance = report.provenance;
  if (provenance === undefined) return "";
  const reused = provenance.reused
    .map(
      (item) =>
        `<li data-testid="reused-run">${escapeHtml(item.key)} ← ${escapeHtml(item.runDir)} ${escapeHtml(item.from)}</li>`,
    )
    .join("");
  const kept = provenance.regraded
    .filter((item) => !item.rescored)
    .map(
      (item) =>
        `<li data-testid="regrade-kept">${escapeHtml(item.key)}: kept as it was (${escapeHtml(item.reason ?? "not re-scored")})</li>`,
    )
    .join("");
  return `<section id="provenance"><h2>Results from elsewhere</h2>
${provenance.reused.length === 0 ? "" : `<p>${provenance.reused.length} unassisted runs reused from earlier runs (same fingerprint, not executed here):</p><ul>${reused}</ul>`}
${provenance.regraded.length === 0 ? "" : `<p>${provenance.regraded.length} runs re-graded from stored patches (${provenance.regraded.filter((item) => item.rescored).length} re-scored by the verifier, no agent run).</p>${kept === "" ? "" : `<ul>${kept}</ul>`}`}
</section>`;
}
