/**
 * Precision and recall of every audit rule on the labelled corpus (`test/audit-corpus/`): the
 * written cases, the two generated large files, and the real skills of `../shared` read in place.
 * The figures before and after issue 17 are in `test/audit-corpus/README.md`; this test holds the
 * rules to them, so a change that loses a true finding or adds a false alarm fails here.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { auditSkillFolder } from "../src/skill/index.js";
import {
  type CorpusMeasurement,
  formatMeasurement,
  measureAuditCorpus,
  measureHeldOut,
  precision,
  recall,
  SHARED_FIXTURES,
} from "./support/audit-corpus.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const cleanups = cleanupsAfterEach();
const hasShared = existsSync(SHARED_FIXTURES);

function overall(measurement: CorpusMeasurement) {
  const total = { truePositives: 0, falsePositives: 0, falseNegatives: 0 };
  for (const counts of Object.values(measurement.rules)) {
    total.truePositives += counts.truePositives;
    total.falsePositives += counts.falsePositives;
    total.falseNegatives += counts.falseNegatives;
  }
  return total;
}

describe("audit corpus", () => {
  it.skipIf(!hasShared)(
    "every rule keeps precision and recall of at least 0.9, and every skill's verdict is right",
    async () => {
      const scratch = await temporaryDirectoryIn(cleanups, "skillsmith-corpus-");
      const measurement = await measureAuditCorpus(auditSkillFolder, scratch);
      const table = formatMeasurement(measurement);
      const mismatches = measurement.mismatches.map(
        (mismatch) => `${mismatch.kind} ${mismatch.rule} ${mismatch.where}`,
      );
      expect(measurement.skills.shared, "real skills read from ../shared").toBe(66);
      for (const [rule, counts] of Object.entries(measurement.rules)) {
        expect(
          precision(counts) ?? 1,
          `${rule} precision\n${table}\n${mismatches.join("\n")}`,
        ).toBeGreaterThanOrEqual(0.9);
        expect(
          recall(counts) ?? 1,
          `${rule} recall\n${table}\n${mismatches.join("\n")}`,
        ).toBeGreaterThanOrEqual(0.9);
      }
      const total = overall(measurement);
      expect(total.truePositives).toBe(measurement.expectedFindings - total.falseNegatives);
      expect(measurement.failing.missed, table).toEqual([]);
      expect(measurement.failing.falseAlarms, table).toEqual([]);
    },
  );

  it("gives no false alarm on the held-out real skills, labelled before they were audited", async () => {
    const measurement = await measureHeldOut(auditSkillFolder);
    // Five real skills, labelled by hand (test/audit-corpus/held-out/README.md): none has a
    // finding a reviewer wants, none should fail. Before issue 28, planning-with-files gave
    // 3 high html-comment-instruction and 40 low html-comment-text findings on its templates.
    expect(measurement.skills).toBe(5);
    expect(measurement.falsePositives, measurement.mismatches.join("\n")).toEqual([]);
    expect(measurement.falseNegatives).toEqual([]);
    expect(measurement.wronglyFailed).toEqual([]);
    expect(measurement.missedFailures).toEqual([]);
  });

  it("counts what an auditor misses and what it invents (the measurement itself can fail)", async () => {
    const scratch = await temporaryDirectoryIn(cleanups, "skillsmith-corpus-");
    // An auditor that finds nothing has recall 0 on every rule it should have fired.
    const silent = await measureAuditCorpus(async (path) => ({ path, findings: [] }), scratch, {
      includeShared: false,
    });
    const silentTotal = overall(silent);
    expect(silentTotal.truePositives).toBe(0);
    expect(silentTotal.falseNegatives).toBe(silent.expectedFindings);
    expect(silent.failing.missed.length).toBeGreaterThan(0);
    // One that flags line 1 of every SKILL.md as an injection is all false positives.
    const noisy = await measureAuditCorpus(
      async (path) => ({
        path,
        findings: [
          {
            code: "prompt-injection",
            severity: "high" as const,
            message: "x",
            file: `${path}/SKILL.md`,
            line: 1,
          },
        ],
      }),
      scratch,
      { includeShared: false },
    );
    const noisyHeldOut = await measureHeldOut(async (path) => ({
      path,
      findings: [
        {
          code: "html-comment-instruction",
          severity: "high" as const,
          message: "x",
          file: `${path}/SKILL.md`,
          line: 1,
        },
      ],
    }));
    expect(noisyHeldOut.falsePositives).toHaveLength(5);
    expect(noisyHeldOut.wronglyFailed).toHaveLength(5);
    const injection = noisy.rules["prompt-injection"];
    expect(injection?.truePositives).toBe(0);
    expect(injection?.falsePositives).toBe(noisy.skills.written + noisy.skills.generated);
  });
});
