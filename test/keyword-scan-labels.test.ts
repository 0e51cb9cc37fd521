/**
 * The keyword scan measured against hand labels: test/fixtures/keyword-only-labels.json names,
 * for the 40 SWE-Skills-Bench v1 verifier files of the four repositories in ../shared/fixtures/repos,
 * every test a reader judged keyword-only (the rule is in the file). Labels were written by reading
 * the tests, before the scanner was run on them. Precision and recall are reported per test and per
 * verifier ("mostly keyword-only": at least half its tests), and held to floors so a change that
 * makes the scan worse fails here.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { findKeywordOnlyChecks } from "../src/env/verifier/keyword-scan.js";

const dataset = resolve(
  import.meta.dirname,
  "..",
  "..",
  "shared",
  "fixtures",
  "swe-skills-bench-v1",
);
const hasData = existsSync(join(dataset, "tests", "batch1"));

interface Labels {
  readonly files: Record<string, readonly string[]>;
}

interface Counts {
  truePositive: number;
  falsePositive: number;
  falseNegative: number;
}

function ratio(part: number, whole: number): number {
  return whole === 0 ? 1 : part / whole;
}

describe.skipIf(!hasData)(
  "keyword scan against hand labels (needs ../shared/fixtures/swe-skills-bench-v1)",
  () => {
    it("finds the hand-labelled keyword-only tests with measured precision and recall", async () => {
      const labels = JSON.parse(
        await readFile(
          resolve(import.meta.dirname, "fixtures", "keyword-only-labels.json"),
          "utf8",
        ),
      ) as Labels;
      const perTest: Counts = { truePositive: 0, falsePositive: 0, falseNegative: 0 };
      const perVerifier: Counts = { truePositive: 0, falsePositive: 0, falseNegative: 0 };
      const misses: string[] = [];
      let tests = 0;
      for (const [path, labelled] of Object.entries(labels.files)) {
        const content = await readFile(join(dataset, path), "utf8");
        // Counted independently of the scanner: every `def test…(` header.
        const total = content.match(/^\s*def\s+test\w*\s*\(/gm)?.length ?? 0;
        tests += total;
        const flagged = new Set(
          findKeywordOnlyChecks([{ path, content }]).map((found) => found.test),
        );
        const expected = new Set(labelled);
        for (const name of flagged) {
          if (expected.has(name)) perTest.truePositive += 1;
          else {
            perTest.falsePositive += 1;
            misses.push(`false positive ${path} ${name}`);
          }
        }
        for (const name of expected) {
          if (!flagged.has(name)) {
            perTest.falseNegative += 1;
            misses.push(`missed ${path} ${name}`);
          }
        }
        const labelledMostly = expected.size * 2 >= total;
        const flaggedMostly = flagged.size * 2 >= total;
        if (labelledMostly && flaggedMostly) perVerifier.truePositive += 1;
        else if (flaggedMostly) perVerifier.falsePositive += 1;
        else if (labelledMostly) perVerifier.falseNegative += 1;
      }
      const precision = ratio(perTest.truePositive, perTest.truePositive + perTest.falsePositive);
      const recall = ratio(perTest.truePositive, perTest.truePositive + perTest.falseNegative);
      const verifierPrecision = ratio(
        perVerifier.truePositive,
        perVerifier.truePositive + perVerifier.falsePositive,
      );
      const verifierRecall = ratio(
        perVerifier.truePositive,
        perVerifier.truePositive + perVerifier.falseNegative,
      );
      const summary = `${tests} tests, ${perTest.truePositive + perTest.falseNegative} labelled keyword-only: precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}; verifiers mostly keyword-only: precision ${verifierPrecision.toFixed(3)}, recall ${verifierRecall.toFixed(3)} (${perVerifier.truePositive} found, ${perVerifier.falsePositive} wrongly, ${perVerifier.falseNegative} missed)`;
      console.log(`${summary}\n${misses.join("\n")}`);
      expect(Object.keys(labels.files)).toHaveLength(40);
      expect(precision, summary).toBeGreaterThanOrEqual(0.95);
      expect(recall, summary).toBeGreaterThanOrEqual(0.9);
      expect(verifierPrecision, summary).toBeGreaterThanOrEqual(0.95);
      expect(verifierRecall, summary).toBeGreaterThanOrEqual(0.95);
    });
  },
);
