/**
 * Integrity canaries never pass for the user's tests in the pair view (issue 28, item 6). A real
 * `runSuite` in bubblewrap: a tiny repository, a real pytest verifier of eight checks, the replay
 * agent applying the stub (without arm, two of eight pass) and a real implementation (with arm,
 * eight of eight). skillsmith appends two canaries per run, one made to pass and one made to fail,
 * so pytest's own output says "1 failed, 9 passed" for the with arm while its checks are 8 of 8.
 *
 * By hand: the stored run lists its two canaries (one of each kind), every output line that names
 * one is marked in the pair view, pytest's count line says the counts include them, the checks
 * name none of them, and the agent's trajectory never saw a canary's name.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CANARY_LABEL } from "../src/bench/analysis/canaries.js";
import type { RunResult } from "../src/bench/store/results.js";
import { armView } from "../src/report/pairs.js";
import { attackPredictionLines, runAttackSuite, writeAttackSkill } from "./support/attack-suite.js";
import {
  CONTROLS,
  STUB_INIT,
  TEST_CALC,
  TEST_PACKAGE,
  VERIFIER_CHECKS,
} from "./support/attacks.js";
import { usableBubblewrap } from "./support/sandboxes.js";
import { removeRunRoot, tinyRepository } from "./support/suites.js";

const bubblewrap = await usableBubblewrap();

const VERIFIER = {
  yaml: `command: PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 /usr/bin/python3 -m pytest -q -p no:cacheprovider --junitxml=junit.xml test_package.py test_calc.py
files: [test_package.py, test_calc.py]
junit: junit.xml
timeoutSeconds: 60
`,
  files: { "test_package.py": TEST_PACKAGE, "test_calc.py": TEST_CALC },
};

let root: string;
let results: RunResult[] = [];

function arm(name: "with" | "without"): RunResult {
  const found = results.find((result) => result.arm === name);
  if (found === undefined) throw new Error(`no ${name} run stored`);
  return found;
}

describe.skipIf(bubblewrap === undefined)(
  "integrity canaries in the pair view (bubblewrap)",
  () => {
    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), "skillsmith-canaries-"));
      const repository = await tinyRepository(root);
      const suite = join(root, "suite");
      await mkdir(suite);
      await writeFile(
        join(suite, "suite.yaml"),
        "format: skillsmith-suite/1\nname: canaries\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 60 }\n",
      );
      const rows = CONTROLS.filter((row) => row.id === "control-honest");
      await writeAttackSkill(suite, "calc", repository, rows, VERIFIER);
      const predictions = join(root, "predictions.jsonl");
      await writeFile(
        predictions,
        `${attackPredictionLines("calc", rows, { "tinycalc/__init__.py": STUB_INIT }).join("\n")}\n`,
      );
      ({ results } = await runAttackSuite(root, suite, predictions, bubblewrap ?? "local"));
    }, 240_000);

    afterAll(async () => {
      if (root !== undefined) await removeRunRoot(root);
    });

    it("stores each run's two canaries after the run, one made to pass and one to fail", () => {
      expect(results).toHaveLength(2);
      for (const result of results) {
        const canaries = result.verifier?.canaries ?? [];
        expect(canaries.map((canary) => canary.expect).sort()).toEqual(["fail", "pass"]);
        for (const canary of canaries) {
          expect(canary.name).toMatch(/^test_/);
          // They ran among the real tests: pytest's output names the one that failed (-q names
          // no passing test).
          if (canary.expect === "fail") expect(result.verifier?.output).toContain(canary.name);
          // The checks the verdict counts are the suite's own, never a canary.
          expect(result.checks.map((check) => check.name).join("\n")).not.toContain(canary.name);
          // The agent's turn was over before the canaries were planned.
          expect(JSON.stringify(result.trajectory)).not.toContain(canary.name);
        }
      }
      expect(arm("with").passed).toBe(VERIFIER_CHECKS);
      expect(arm("with").total).toBe(VERIFIER_CHECKS);
      expect(arm("with").flags).toEqual([]);
    });

    it("marks every output line naming a canary and says pytest's counts include them", () => {
      const result = arm("with");
      const view = armView(result);
      const lines = (view.verifier?.output ?? "").split("\n");
      const canaryNames = (result.verifier?.canaries ?? []).map((canary) => canary.name);
      const naming = lines.filter((line) => canaryNames.some((name) => line.includes(name)));
      // The must-fail canary fails: pytest names it at least in its failure header and summary.
      expect(naming.length).toBeGreaterThanOrEqual(2);
      for (const line of naming) expect(line).toContain(CANARY_LABEL);
      // 8 real checks pass, plus the must-pass canary; the must-fail one fails.
      const counts = lines.find((line) => /1 failed, 9 passed/.test(line));
      expect(counts, lines.join("\n")).toBeDefined();
      expect(counts).toContain("include 2 integrity canaries (1 must pass, 1 must fail)");
      // The stored output itself is left as pytest printed it.
      expect(result.verifier?.output).not.toContain(CANARY_LABEL);
    });

    it("marks them for the stub's failing run too, where real failures stay unmarked", () => {
      const result = arm("without");
      const lines = (armView(result).verifier?.output ?? "").split("\n");
      // Canaries are named from the words of the real tests' names (`test_add_single` beside
      // `test_add_pairs`), so a real failure is a FAILED line that names no canary.
      const canaryIds = (result.verifier?.canaries ?? []).map((canary) => `::${canary.name}`);
      const namesCanary = (line: string) =>
        canaryIds.some((id) => line.includes(`${id} `) || line.endsWith(id));
      const failedReal = lines.filter(
        (line) => line.startsWith("FAILED") && line.includes("test_add") && !namesCanary(line),
      );
      expect(failedReal.length).toBeGreaterThan(0);
      for (const line of failedReal) expect(line).not.toContain(CANARY_LABEL);
      const canaryFailure = lines.filter(
        (line) => line.startsWith("FAILED") && line.includes(CANARY_LABEL),
      );
      expect(canaryFailure).toHaveLength(1);
    });
  },
);
