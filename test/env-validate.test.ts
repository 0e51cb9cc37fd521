import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InputError } from "../src/core/errors.js";
import { UnsafeSandbox } from "../src/env/sandbox/unsafe.js";
import type { VerifierSpec } from "../src/env/verifier/types.js";
import { validateVerifier } from "../src/env/verifier/validate.js";
import { type PreparedBase, prepareBase } from "../src/env/workspace/prepare.js";
import { gitSyncRaw as git } from "./support/git.js";
import { hasPytest } from "./support/tool-probes.js";

const buggy = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a + b\n";
const fixedSub = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n";
const solved = `${fixedSub}\ndef mul(a, b):\n    return a * b\n`;

let scratch: string;
let base: PreparedBase;
let referencePatch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-env-validate-"));
  const repository = join(scratch, "calc");
  execFileSync("mkdir", ["-p", repository]);
  git(repository, "init", "-q", "-b", "main");
  await writeFile(join(repository, "calc.py"), buggy);
  git(repository, "add", "-A");
  git(repository, "commit", "-q", "-m", "task");
  const taskCommit = git(repository, "rev-parse", "HEAD").trim();
  await writeFile(join(repository, "calc.py"), solved);
  git(repository, "commit", "-q", "-am", "solution");
  referencePatch = git(repository, "diff", taskCommit, "HEAD");
  base = await prepareBase({
    source: repository,
    commit: taskCommit,
    cacheDir: join(scratch, "cache"),
  });
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

// Four checks: test_add already passes on the task commit (no discriminative power),
// test_sub and test_mul need the solution, test_mul_keyword only greps the source.
const verifier: VerifierSpec = {
  files: [
    {
      path: "verifier_tests/test_calc.py",
      content: [
        "from pathlib import Path",
        "import calc",
        "",
        "def test_add():",
        "    assert calc.add(2, 3) == 5",
        "",
        "def test_sub():",
        "    assert calc.sub(5, 3) == 2",
        "",
        "def test_mul():",
        "    assert calc.mul(4, 3) == 12",
        "",
        "def test_mul_keyword():",
        '    source = Path("calc.py").read_text()',
        '    assert "def mul" in source',
        "",
      ].join("\n"),
    },
  ],
  command: "python3 -m pytest -q -p no:cacheprovider verifier_tests --junitxml=results.xml",
  resultsFile: "results.xml",
  timeoutMs: 120_000,
};

const shortName = (name: string) => name.split("::").pop();

describe("validateVerifier", () => {
  it.skipIf(!hasPytest)(
    "reports non-discriminating checks, a passing reference and keyword-only checks",
    async () => {
      const validation = await validateVerifier({
        base,
        verifier,
        sandbox: new UnsafeSandbox(),
        reference: { patch: referencePatch },
      });
      expect(validation.negative.total).toBe(4);
      expect(validation.negative.passRatio).toBe(0.25);
      expect(validation.nonDiscriminating.map(shortName)).toEqual(["test_add"]);
      expect(validation.positive?.passRatio).toBe(1);
      expect(validation.referenceFailures).toEqual([]);
      expect(validation.keywordOnly.map((finding) => finding.test)).toEqual(["test_mul_keyword"]);
      expect(validation.ok).toBe(false);
      expect(validation.problems).toHaveLength(2);
      expect(validation.problems[0]).toContain("already pass on the untouched repository");
    },
    // Each verifier run is two pytest sessions (the inventory, then the run): minutes on a busy machine.
    180_000,
  );

  it.skipIf(!hasPytest)(
    "names the checks a partial reference solution fails",
    async () => {
      const validation = await validateVerifier({
        base,
        verifier,
        sandbox: new UnsafeSandbox(),
        reference: { files: [{ path: "calc.py", content: fixedSub }] },
      });
      // add and sub pass; mul and the keyword check do not: 2 of 4.
      expect(validation.positive?.passRatio).toBe(0.5);
      expect(validation.referenceFailures.map(shortName)).toEqual(["test_mul", "test_mul_keyword"]);
      expect(validation.problems.some((problem) => problem.startsWith("positive control"))).toBe(
        true,
      );
    },
    180_000,
  );

  it.skipIf(!hasPytest)(
    "does not call a verifier that cannot import the module to be created a problem",
    async () => {
      const importsDeliverable: VerifierSpec = {
        files: [
          {
            path: "verifier_tests/test_stats.py",
            content: "from stats import mean\n\ndef test_mean():\n    assert mean([1, 3]) == 2\n",
          },
        ],
        command: "python3 -m pytest -q -p no:cacheprovider verifier_tests",
        timeoutMs: 120_000,
      };
      const asked = await validateVerifier({
        base,
        verifier: importsDeliverable,
        sandbox: new UnsafeSandbox(),
        requirement: { fileOperations: ["stats.py"] },
      });
      expect(asked.negative.flags).toEqual(["collection-error"]);
      expect(asked.negativeDiagnosis?.kind).toBe("deliverable-missing");
      expect(asked.problems.filter((problem) => problem.startsWith("negative control"))).toEqual(
        [],
      );
      // Without the requirement nothing says stats.py is a deliverable: a problem, explained.
      const unknown = await validateVerifier({
        base,
        verifier: importsDeliverable,
        sandbox: new UnsafeSandbox(),
      });
      expect(unknown.problems[0]).toMatch(
        /negative control: verifier flagged collection-error \(stats cannot be imported/,
      );
    },
    180_000,
  );

  it("rejects a reference patch that does not apply", async () => {
    await expect(
      validateVerifier({
        base,
        verifier: { command: ["true"] },
        sandbox: new UnsafeSandbox(),
        reference: {
          patch:
            "diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n",
        },
      }),
    ).rejects.toBeInstanceOf(InputError);
  });
});
