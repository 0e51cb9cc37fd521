/**
 * The study's summary tables (`study.ts`) as text lines and as a self-contained HTML page: the
 * layout of the paper's Tables 2, 4 and 5 and its sign-change count, q beside every p.
 */
import type { ClassCounts, PassRatios, StudySummary } from "./study.js";

function percent(value: number | null): string {
  return value === null ? "n/a" : `${(100 * value).toFixed(2)}`;
}

function points(value: number | null): string {
  if (value === null) return "n/a";
  return `${value > 0 ? "+" : ""}${value.toFixed(2)}`;
}

function probability(value: number | null): string {
  return value === null ? "n/a" : value.toFixed(4);
}

function classCells(classes: ClassCounts): string[] {
  return [
    String(classes.golden),
    String(classes.harmful),
    String(classes.ineffective),
    String(classes.undecided),
    String(classes.unclassified),
  ];
}

function ratioCells(row: PassRatios): string[] {
  return [String(row.pairs), percent(row.without), percent(row.with), points(row.delta)];
}

const CLASS_HEADER = ["Golden", "Harmful", "Ineffective", "Undecided", "no class"];
const RATIO_HEADER = ["pairs", "without %", "with %", "Δ (points)"];

/** The tables as header + rows, shared by the text and HTML renderings. */
export function studyTables(
  summary: StudySummary,
): Array<{ title: string; header: string[]; rows: string[][]; note: string | undefined }> {
  const configurationRows = summary.configurations.map((row) => [
    row.config,
    row.agent ?? "",
    row.model ?? "",
    String(row.skills),
    ...ratioCells(row),
    ...classCells(row.classes),
  ]);
  const pooledRow = [
    "all pairs",
    "",
    "",
    String(summary.overall.skills.length),
    ...ratioCells(summary.pooled),
    ...classCells(summary.overall.classes),
  ];
  const changed = summary.overall.skills.filter(
    (skill) => skill.class === "golden" || skill.class === "harmful" || skill.class === "undecided",
  );
  return [
    {
      title: `Pass ratio and classes per configuration (α = ${summary.alpha}; the last row is the overall test on each requirement's delta averaged over configurations)`,
      header: ["configuration", "agent", "model", "skills", ...RATIO_HEADER, ...CLASS_HEADER],
      rows: [...configurationRows, pooledRow],
      note: undefined,
    },
    {
      title: "Overall Golden, Harmful and Undecided skills",
      header: [
        "skill",
        "configurations",
        "requirements",
        "without %",
        "with %",
        "Δ",
        "p",
        "q (BH)",
        "class",
      ],
      rows: changed.map((skill) => [
        skill.skill,
        String(skill.configurations),
        String(skill.requirements),
        percent(skill.without),
        percent(skill.with),
        points(skill.delta),
        probability(skill.p),
        probability(skill.q),
        `${skill.class ?? "none"}${skill.fewRequirements === undefined ? "" : ` (${skill.fewRequirements})`}`,
      ]),
      note:
        changed.length === 0 ? "none: every overall class is Ineffective or missing" : undefined,
    },
    {
      title: "Timeout sensitivity (timeouts score zero; second row without every pair holding one)",
      header: ["subset", ...RATIO_HEADER, "Golden", "Harmful"],
      rows: [
        [
          "all pairs",
          ...ratioCells(summary.pooled),
          String(summary.overall.classes.golden),
          String(summary.overall.classes.harmful),
        ],
        [
          `without ${summary.timeouts.pairs} timeout pair(s)`,
          ...ratioCells(summary.timeouts.excluded),
          String(summary.timeouts.excluded.golden),
          String(summary.timeouts.excluded.harmful),
        ],
      ],
      note: undefined,
    },
    {
      title:
        "Skills whose Δ changes sign between two configurations of the same model (q per configuration)",
      header: ["configurations", "model", "compared", "changed", "skills (Δ a / Δ b, q a / q b)"],
      rows: summary.signChanges.map((change) => [
        `${change.configs[0]} vs ${change.configs[1]}`,
        change.model,
        String(change.compared),
        String(change.count),
        change.skills
          .map(
            (skill) =>
              `${skill.skill} (${points(skill.delta[0])} / ${points(skill.delta[1])}, q ${probability(skill.q[0])} / ${probability(skill.q[1])})`,
          )
          .join("; "),
      ]),
      note:
        summary.signChanges.length === 0
          ? "no two configurations run the same model (or the run records no models)"
          : undefined,
    },
  ];
}

function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

export function renderStudyText(summary: StudySummary): string[] {
  const lines: string[] = [];
  for (const table of studyTables(summary)) {
    lines.push(table.title);
    if (table.rows.length > 0)
      lines.push(...textTable(table.header, table.rows).map((row) => `  ${row}`));
    if (table.note !== undefined) lines.push(`  ${table.note}`);
    lines.push("");
  }
  for (const note of summary.notes) lines.push(`note: ${note}`);
  return lines;
}

function escapeText(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** A self-contained page (no scripts, no external resources) with the same tables. */
export function renderStudyHtml(summary: StudySummary, title = "Study summary"): string {
  const sections = studyTables(summary).map((table) => {
    const head = table.header.map((cell) => `<th>${escapeText(cell)}</th>`).join("");
    const body = table.rows
      .map((row) => `<tr>${row.map((cell) => `<td>${escapeText(cell)}</td>`).join("")}</tr>`)
      .join("\n");
    const note = table.note === undefined ? "" : `<p>${escapeText(table.note)}</p>`;
    return `<section><h2>${escapeText(table.title)}</h2>${table.rows.length > 0 ? `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>` : ""}${note}</section>`;
  });
  const notes = summary.notes.map((note) => `<li>${escapeText(note)}</li>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeText(title)}</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}</style>
</head><body><h1>${escapeText(title)}</h1>
${sections.join("\n")}
${notes === "" ? "" : `<ul>${notes}</ul>`}
</body></html>
`;
}
