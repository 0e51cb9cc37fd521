/**
 * Verifier integrity under attack, end to end: a tiny real git repository, a real pytest verifier
 * (eight checks, a parametrised one and a class among them), the replay agent applying recorded
 * patches, `runSuite` in bubblewrap. Every with-arm patch of skill `attacks` carries no
 * implementation — the stub package only — plus one attack on how skillsmith reads outcomes
 * (`test/support/attacks.ts` lists them and where each comes from). Every without-arm patch is
 * the stub alone.
 *
 * By hand: the stub passes `test_name` and `test_package_importable` and nothing else, so an
 * attack that gains nothing scores 2/8 = 0.25, and a caught one scores 0 with the flag
 * `tampered` and evidence naming the failed check. The control skill's rows are honest: a real
 * implementation passes 8/8, a module that raises at import passes the stub's 2/8; neither may
 * be flagged. With every attack at ≤ 0.25 against the stub's 0.25, no requirement delta of
 * `attacks` is positive, so its verdict cannot be Golden.
 *
 * Set SKILLSMITH_ATTACK_TABLE=1 to print each row's score, flags and evidence.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderReportText } from "../src/bench/analysis/render.js";
import type { BenchReport } from "../src/bench/analysis/report.js";
import type { RunResult } from "../src/bench/store/results.js";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import { runVerifier } from "../src/env/verifier/run.js";
import type { VerifierSpec } from "../src/env/verifier/types.js";
import {
  attackPredictionLines,
  runAttackSuiteSharingStub,
  stubScores,
  writeAttackSkill,
} from "./support/attack-suite.js";
import {
  ATTACKS,
  CONTROL_PASSED,
  CONTROLS,
  STUB_INIT,
  STUB_PASSED,
  TEST_CALC,
  TEST_PACKAGE,
  VERIFIER_CHECKS,
} from "./support/attacks.js";
import { availableContainerSandbox, usableBubblewrap } from "./support/sandboxes.js";
import { removeRunRoot, TINY_MOUNT, tinyRepository } from "./support/suites.js";

const bubblewrap = await usableBubblewrap();
const container = await availableContainerSandbox();
const STUB_RATIO = STUB_PASSED / VERIFIER_CHECKS;

const VERIFIER_YAML = `# Debian's interpreter has pytest; host plugins stay unloaded.
command: PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 /usr/bin/python3 -m pytest -q -p no:cacheprovider --junitxml=junit.xml test_package.py test_calc.py
files: [test_package.py, test_calc.py]
junit: junit.xml
timeoutSeconds: 60
`;
const VERIFIER = {
  yaml: VERIFIER_YAML,
  files: { "test_package.py": TEST_PACKAGE, "test_calc.py": TEST_CALC },
};
const STUB = { "tinycalc/__init__.py": STUB_INIT };

let root: string;
let results: RunResult[] = [];
let report: BenchReport;

function resultOf(requirement: string, arm: "with" | "without"): RunResult {
  const found = results.find((result) => result.requirement === requirement && result.arm === arm);
  if (found === undefined) throw new Error(`no result for ${requirement}/${arm}`);
  return found;
}

function describeResult(result: RunResult): string {
  return `${result.passed}/${result.total} = ${result.passRatio.toFixed(3)} flags [${result.flags.join(", ")}] evidence ${JSON.stringify(result.verifier?.evidence ?? [])}`;
}

describe.skipIf(bubblewrap === undefined)(
  "verifier integrity: attacks by code under test (bubblewrap)",
  () => {
    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), "verifier-integrity-"));
      const repository = await tinyRepository(root);
      const suite = join(root, "suite");
      await mkdir(suite, { recursive: true });
      await writeFile(
        join(suite, "suite.yaml"),
        "format: skillsmith-suite/1\nname: integrity\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 60 }\n",
      );
      await writeAttackSkill(suite, "attacks", repository, ATTACKS, VERIFIER);
      await writeAttackSkill(suite, "control", repository, CONTROLS, VERIFIER);
      const predictions = join(root, "predictions.jsonl");
      await writeFile(
        predictions,
        `${[...attackPredictionLines("attacks", ATTACKS, STUB), ...attackPredictionLines("control", CONTROLS, STUB)].join("\n")}\n`,
      );
      // The stub is run once (the first control's without arm) and shared by every other row's
      // without arm: the same measurement, taken once instead of once per row.
      const [first, ...others] = CONTROLS;
      if (first === undefined) throw new Error("the table has no control");
      ({ results, report } = await runAttackSuiteSharingStub(
        root,
        suite,
        predictions,
        bubblewrap ?? "local",
        {
          stubSkill: "control",
          stubRequirement: first.id,
          rows: [
            ...ATTACKS.map((row) => ({ skill: "attacks", requirement: row.id })),
            ...others.map((row) => ({ skill: "control", requirement: row.id })),
          ],
        },
      ));
    }, 900_000);

    afterAll(async () => {
      if (process.env.SKILLSMITH_ATTACK_TABLE === "1") {
        const lines = [...ATTACKS, ...CONTROLS].map(
          (row) =>
            `${row.id.padEnd(30)} ${row.expect.padEnd(20)} ${describeResult(resultOf(row.id, "with"))}`,
        );
        const verdicts = report.profiles.map(
          (profile) => `${profile.skill}: Δ ${profile.delta} p ${profile.p} ${profile.class}`,
        );
        process.stderr.write(`\n${lines.join("\n")}\n${verdicts.join("\n")}\n`);
      }
      if (root !== undefined) await removeRunRoot(root);
    });

    it("scores every run of the table", () => {
      expect(results).toHaveLength(2 * (ATTACKS.length + CONTROLS.length));
    });

    it("scores the stub alone at 2 of 8 checks, unflagged, in every without arm", () => {
      const rows = [...ATTACKS, ...CONTROLS];
      expect(stubScores(results, rows)).toEqual(
        rows.map((row) => ({
          row: row.id,
          passed: STUB_PASSED,
          total: VERIFIER_CHECKS,
          flags: [],
        })),
      );
    });

    it("scores honest deliverables as before, unflagged", () => {
      for (const row of CONTROLS) {
        const result = resultOf(row.id, "with");
        expect({
          row: row.id,
          passed: result.passed,
          total: result.total,
          flags: result.flags,
        }).toEqual({
          row: row.id,
          passed: CONTROL_PASSED[row.id],
          total: VERIFIER_CHECKS,
          flags: [],
        });
      }
    });

    for (const row of ATTACKS) {
      it(`${row.id} (${row.origin}): ${row.expect} — ${row.description}`, () => {
        const result = resultOf(row.id, "with");
        const shown = { row: row.id, result: describeResult(result) };
        const tampered = result.flags.includes("tampered");
        switch (row.expect) {
          case "tampered":
            expect(shown, "must be flagged tampered").toMatchObject({
              result: expect.stringContaining("tampered"),
            });
            expect(result.passRatio).toBe(0);
            expect(result.verifier?.evidence?.length ?? 0).toBeGreaterThan(0);
            break;
          case "no-gain":
            expect(result.flags, shown.result).toEqual([]);
            expect(result.passRatio, shown.result).toBeLessThanOrEqual(STUB_RATIO);
            break;
          case "no-gain-or-tampered":
            if (tampered) expect(result.passRatio, shown.result).toBe(0);
            else expect(result.passRatio, shown.result).toBeLessThanOrEqual(STUB_RATIO);
            break;
          case "undetectable":
            // The verifier compares with ==: an object equal to everything passes its checks.
            // Documented in src/env/verifier/README.md as the verifier's weakness.
            expect(tampered, shown.result).toBe(false);
            expect(result.passRatio, shown.result).toBeGreaterThan(STUB_RATIO);
            break;
        }
      });
    }

    it("shows the tampered runs and their evidence in the text report", () => {
      const text = renderReportText(report).join("\n");
      expect(text).toContain("gc-plugin-rewrites-reports: flags: tampered");
      expect(text).toContain(
        'evidence: plugins: a pytest plugin was registered after the session started: "tinycalc-helper" (tinycalc._Rewriter)',
      );
    });

    it("never finds the attacks Golden", () => {
      const attacks = report.profiles.find((profile) => profile.skill === "attacks");
      expect(attacks?.class).not.toBe("golden");
      expect(attacks?.requirements).toHaveLength(ATTACKS.length);
    });
  },
);

/**
 * The same checks where skillsmith runs a verifier outside a bench run (`runVerifier`: bench
 * generate's controls, the built-in synthesis family), in the container sandbox, and for a
 * verifier that is not pytest (its JUnit report's check count is all the inventory can fix).
 */
describe("verifier integrity outside bench runs", () => {
  const ATTACK = ATTACKS.find((row) => row.id === "gc-plugin-rewrites-reports");
  const pytestVerifier = (python: string): VerifierSpec => ({
    files: [
      { path: "test_package.py", content: TEST_PACKAGE },
      { path: "test_calc.py", content: TEST_CALC },
    ],
    command: `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 ${python} -m pytest -q -p no:cacheprovider --junitxml=junit.xml test_package.py test_calc.py`,
    resultsFile: "junit.xml",
    timeoutMs: 120_000,
  });

  async function runIn(
    sandbox: SandboxV1,
    verifier: VerifierSpec,
    files: Readonly<Record<string, string>>,
  ) {
    const workspace = await mkdtemp(join(tmpdir(), "verifier-integrity-direct-"));
    try {
      for (const [path, content] of Object.entries(files)) {
        await mkdir(join(workspace, path, ".."), { recursive: true });
        await writeFile(join(workspace, path), content);
      }
      return await runVerifier({ sandbox, workspace, workspaceMountPath: TINY_MOUNT, verifier });
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  }

  it.skipIf(container === undefined)(
    "container: the stub scores 2/8, the plugin attack is flagged",
    async () => {
      const sandbox = container as SandboxV1;
      const stub = await runIn(sandbox, pytestVerifier("python3"), {
        "tinycalc/__init__.py": STUB_INIT,
      });
      expect([stub.passed, stub.total, stub.flags, stub.source]).toEqual([
        STUB_PASSED,
        VERIFIER_CHECKS,
        [],
        "channel",
      ]);
      const attacked = await runIn(sandbox, pytestVerifier("python3"), ATTACK?.files ?? {});
      expect(attacked.flags).toContain("tampered");
      expect(attacked.passRatio).toBe(0);
      expect(attacked.evidence.join("\n")).toMatch(
        /a pytest plugin was registered after the session started: "tinycalc-helper"/,
      );
    },
    // Two verifier runs, each starting a container: past 120 s at load 30.
    300_000,
  );

  it.skipIf(bubblewrap === undefined)(
    "a workspace module that shadows the standard library and so runs before any plugin is flagged",
    async () => {
      // runVerifier runs in the workspace root, and `python -m` puts the working folder first on
      // sys.path: this argparse.py stands in for the real one (which it loads and re-exports).
      const attacked = await runIn(bubblewrap as SandboxV1, pytestVerifier("/usr/bin/python3"), {
        "tinycalc/__init__.py": STUB_INIT,
        "argparse.py": `import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "_real_argparse", os.path.join(os.path.dirname(os.__file__), "argparse.py")
)
_real = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_real)
globals().update({key: value for key, value in vars(_real).items() if not key.startswith("__")})
`,
      });
      expect(attacked.flags).toContain("tampered");
      expect(attacked.evidence.join("\n")).toMatch(
        /runner: code from the workspace ran before skillsmith's plugin loaded: argparse \(\/workspace\/tiny\/argparse\.py\)/,
      );
    },
  );

  // A checker that is not pytest: it imports the deliverable, checks two things, writes JUnit.
  const CHECKER = `import os
import sys

sys.path.insert(0, os.environ.get("SKILLSMITH_WORKSPACE", "/workspace/tiny"))
cases = []


def check(name, function):
    try:
        function()
        cases.append('<testcase classname="check" name="%s"/>' % name)
    except Exception as error:  # noqa: BLE001 - any failure fails the check
        cases.append('<testcase classname="check" name="%s"><failure message="%s"/></testcase>' % (name, type(error).__name__))


def importable():
    __import__("tinycalc")


def adds():
    from tinycalc.calc import add
    assert add(2, 3) == 5


check("importable", importable)
check("adds", adds)
with open("results.xml", "w", encoding="utf-8") as handle:
    handle.write("<testsuite>%s</testsuite>" % "".join(cases))
`;
  const checkerVerifier: VerifierSpec = {
    files: [{ path: "check.py", content: CHECKER }],
    command: "/usr/bin/python3 check.py",
    resultsFile: "results.xml",
    timeoutMs: 60_000,
  };
  const sandbox: SandboxV1 | undefined = bubblewrap;

  it.skipIf(sandbox === undefined)(
    "a non-pytest verifier: the stub scores 1/2 from JUnit, unflagged",
    async () => {
      const stub = await runIn(sandbox as SandboxV1, checkerVerifier, {
        "tinycalc/__init__.py": STUB_INIT,
      });
      expect([stub.passed, stub.total, stub.flags, stub.source, stub.evidence]).toEqual([
        1,
        2,
        [],
        "junit",
        [],
      ]);
    },
  );

  it.skipIf(sandbox === undefined)(
    "a non-pytest verifier: removing the failing check from its JUnit report is flagged",
    async () => {
      const attacked = await runIn(sandbox as SandboxV1, checkerVerifier, {
        "tinycalc/__init__.py": `${STUB_INIT}
import atexit
import re


def _drop_failures():
    with open("results.xml", encoding="utf-8") as handle:
        xml = handle.read()
    with open("results.xml", "w", encoding="utf-8") as handle:
        handle.write(re.sub(r"<testcase [^>]*><failure[^>]*/></testcase>", "", xml))


atexit.register(_drop_failures)
`,
      });
      expect(attacked.flags).toEqual(["tampered"]);
      expect(attacked.passRatio).toBe(0);
      expect(attacked.evidence).toEqual([
        "id set: the JUnit report lists 1 check(s), fewer than the 2 it lists with an empty workspace",
      ]);
    },
  );
});
