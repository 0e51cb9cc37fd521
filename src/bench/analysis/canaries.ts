/**
 * Integrity canaries in a verifier's output. skillsmith appends two canary tests to one of a
 * pytest verifier's modules per run (`src/env/verifier/integrity/canary.ts`); pytest runs and
 * reports them with the suite's own tests, so the stored output names tests the user never wrote
 * ("FAILED test_tax.py::test_fifteen_case", "1 failed, 5 passed") under a verdict that counts only
 * the real checks. The pair view marks every line that names a canary, and every pytest count
 * line, so nobody reads a canary as one of their tests.
 */
import type { StoredCanary } from "../store/results.js";

/** What a line naming a canary is marked with. */
export const CANARY_LABEL = "integrity canary (not one of your tests)";

/** pytest's closing count line (`1 failed, 5 passed in 0.12s`, framed by `=` or not). */
const PYTEST_COUNTS = /\b\d+ (?:passed|failed|errors?)\b.*\bin \d+(?:\.\d+)?s\b/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `must pass` / `must fail` counts of the canaries, for the count line's note. */
function countsNote(canaries: readonly StoredCanary[]): string {
  const passing = canaries.filter((canary) => canary.expect === "pass").length;
  const failing = canaries.length - passing;
  const parts = [
    ...(passing > 0 ? [`${passing} must pass`] : []),
    ...(failing > 0 ? [`${failing} must fail`] : []),
  ];
  const noun = canaries.length === 1 ? "canary" : "canaries";
  return `these counts include ${canaries.length} integrity ${noun} (${parts.join(", ")}), not your tests`;
}

/**
 * The output with each line that names one of `canaries` marked `CANARY_LABEL` (and whether it
 * had to fail), and pytest's count lines followed by a note of how many of the counted tests were
 * canaries. Output without canaries is returned as it is.
 */
export function labelCanaryLines(output: string, canaries: readonly StoredCanary[]): string {
  if (canaries.length === 0 || output === "") return output;
  const patterns = canaries.map((canary) => ({
    canary,
    // The name as a whole word: `test_case` must not mark `test_case_two`.
    pattern: new RegExp(`(?<![A-Za-z0-9_])${escapeRegExp(canary.name)}(?![A-Za-z0-9_])`),
  }));
  return output
    .split("\n")
    .map((line) => {
      const named = patterns.find(({ pattern }) => pattern.test(line));
      if (named !== undefined) {
        const expected =
          named.canary.expect === "fail" ? ", made to fail on purpose" : ", made to pass";
        return `${line}   \u2190 ${CANARY_LABEL}${expected}`;
      }
      if (PYTEST_COUNTS.test(line)) return `${line}   \u2190 ${countsNote(canaries)}`;
      return line;
    })
    .join("\n");
}
