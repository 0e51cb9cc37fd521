/**
 * Audit baselines: the findings a reviewer has looked at and accepted. A baseline lists finding
 * ids (see `findingId`), so it keeps matching when a flagged line moves and stops matching when
 * the flagged text changes. Applying one marks its findings `suppressed`: they are still shown,
 * they no longer fail the audit, and ids that no longer occur are returned as stale.
 */
import { readFile } from "node:fs/promises";
import { relative } from "node:path";
// Types only: zod loads when a baseline is read, not with every skill command (~70 ms).
import type { z } from "zod";
import { InputError } from "../core/errors.js";
import { formatTag } from "../core/format-tag.js";
import { writeFileAtomic } from "../core/fs.js";
import { fieldPrefix, parseInput } from "../core/parse.js";
import type { AuditFinding, AuditReport, AuditSeverity } from "./types.js";

export const BASELINE_VERSION = 1;
export const BASELINE_FORMAT = formatTag("audit-baseline", BASELINE_VERSION);

async function makeBaselineSchema() {
  const [{ z }, { formatTagSchema }] = await Promise.all([
    import("zod"),
    import("../core/format-tag-schema.js"),
  ]);
  return z.object({
    format: formatTagSchema(BASELINE_FORMAT),
    created: z.string().optional(),
    findings: z.array(
      z.object({
        id: z.string().regex(/^[0-9a-f]{16}$/),
        code: z.string(),
        skill: z.string().optional(),
        file: z.string().optional(),
        line: z.number().int().positive().optional(),
        message: z.string().optional(),
        reason: z.string().optional(),
      }),
    ),
  });
}

/** The baseline schema, reading baselines of earlier versions (name and version apart). */
async function makeBaselineFileSchema() {
  const { readingOlderTags } = await import("../core/format-tag-schema.js");
  return readingOlderTags(await makeBaselineSchema(), BASELINE_FORMAT, [
    { style: "name-and-version", format: "skillsmith-audit-baseline", version: BASELINE_VERSION },
  ]);
}

let baselineSchema: ReturnType<typeof makeBaselineFileSchema> | undefined;

export type AuditBaseline = z.infer<Awaited<ReturnType<typeof makeBaselineSchema>>>;

/** Severities from most to least severe; `--fail-on X` fails on X and everything above it. */
export const AUDIT_SEVERITIES: readonly AuditSeverity[] = ["high", "medium", "low"];

const rank: Readonly<Record<AuditSeverity, number>> = { high: 0, medium: 1, low: 2 };

/** Whether a finding counts against `failOn` (suppressed findings never do). */
export function findingFails(finding: AuditFinding, failOn: AuditSeverity): boolean {
  return finding.suppressed !== true && rank[finding.severity] <= rank[failOn];
}

/** Whether the report fails an audit that fails on `failOn` and above. */
export function auditFails(report: AuditReport, failOn: AuditSeverity = "high"): boolean {
  return report.findings.some((finding) => findingFails(finding, failOn));
}

/** A baseline accepting every finding of `reports`. */
export function createBaseline(reports: readonly AuditReport[], now = new Date()): AuditBaseline {
  const findings: AuditBaseline["findings"] = [];
  const seen = new Set<string>();
  for (const report of reports) {
    for (const finding of report.findings) {
      if (finding.id === undefined || seen.has(finding.id)) continue;
      seen.add(finding.id);
      findings.push({
        id: finding.id,
        code: finding.code,
        skill: report.path.split(/[\\/]/).at(-1) ?? report.path,
        file: relative(report.path, finding.file).split("\\").join("/"),
        ...(finding.line === undefined ? {} : { line: finding.line }),
        message: finding.message,
      });
    }
  }
  return {
    format: BASELINE_FORMAT,
    created: now.toISOString(),
    findings,
  };
}

export async function writeBaseline(path: string, baseline: AuditBaseline): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(baseline, null, 2)}\n`);
}

/** Read and check a baseline file; a damaged one is an `InputError` naming the file and field. */
export async function readBaseline(path: string): Promise<AuditBaseline> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new InputError(
      "skill.baseline-unreadable",
      `cannot read the baseline: ${(error as Error).message}`,
      {
        file: path,
      },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(
      "skill.baseline-not-json",
      `the baseline is not JSON: ${(error as Error).message}`,
      {
        file: path,
      },
    );
  }
  baselineSchema ??= makeBaselineFileSchema();
  return parseInput(await baselineSchema, value, {
    code: "skill.baseline-invalid",
    location: { file: path },
    describe: (problem) =>
      `not a ${BASELINE_FORMAT} file: ${fieldPrefix(problem)}${problem.message}`,
  });
}

export interface BaselineResult {
  readonly reports: AuditReport[];
  /** Baseline ids no current finding has: fixed findings, to be dropped from the baseline. */
  readonly stale: string[];
}

/** Mark the findings a baseline accepts as `suppressed`. */
export function applyBaseline(
  reports: readonly AuditReport[],
  baseline: AuditBaseline,
): BaselineResult {
  const accepted = new Set(baseline.findings.map((finding) => finding.id));
  const used = new Set<string>();
  const marked = reports.map((report) => ({
    ...report,
    findings: report.findings.map((finding) => {
      if (finding.id === undefined || !accepted.has(finding.id)) return finding;
      used.add(finding.id);
      return { ...finding, suppressed: true };
    }),
  }));
  return { reports: marked, stale: [...accepted].filter((id) => !used.has(id)) };
}
