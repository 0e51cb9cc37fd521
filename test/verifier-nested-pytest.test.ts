/**
 * A verifier whose test runs the repository's own pytest in a subprocess, as real verifiers do
 * (SWE-Skills-Bench v1's python-packaging batch1: `python -m pytest tests/test_version_edge_cases.py`
 * must exit 0). The nested pytest inherits the verifier's environment; skillsmith's channel
 * accepts one connection, so a nested pytest that loaded skillsmith's plugin again failed at
 * import and the verifier scored a correct solution below what plain pytest gives.
 *
 * By hand, with plain `python3 -m pytest` on the same files (no skillsmith): the repository's
 * two tests pass, so the nested run exits 0 and the verifier passes 2 of 2 — and a nested run
 * sees none of skillsmith's variables. The failing repository test makes the nested run exit 1
 * and the verifier pass 1 of 2, so the test can fail both ways.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { runVerifier } from "../src/env/verifier/run.js";
import type { VerifierSpec } from "../src/env/verifier/types.js";
import { usableBubblewrap } from "./support/sandboxes.js";
import { TINY_MOUNT } from "./support/suites.js";

const bubblewrap = await usableBubblewrap();

const VERIFIER_TEST = `import os
import subprocess
import sys

REPO = ${JSON.stringify(TINY_MOUNT)}


def test_repository_tests_pass():
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_repo.py"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-1000:]


def test_nested_environment_is_plain():
    result = subprocess.run(
        [sys.executable, "-c", "import os; print(sorted(k for k in os.environ if k in ('SKILLSMITH_VERIFIER_CHANNEL', 'PYTEST_ADDOPTS')))"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.stdout.strip() == "[]", result.stdout
`;

const verifier: VerifierSpec = {
  files: [{ path: "verifier_tests/test_nested.py", content: VERIFIER_TEST }],
  command:
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 /usr/bin/python3 -m pytest -q -p no:cacheprovider verifier_tests/test_nested.py",
  timeoutMs: 120_000,
};

async function runWith(repositoryTest: string) {
  const workspace = await mkdtemp(join(tmpdir(), "verifier-nested-"));
  try {
    await mkdir(dirname(join(workspace, "tests", "test_repo.py")), { recursive: true });
    await writeFile(join(workspace, "tests", "test_repo.py"), repositoryTest);
    return await runVerifier({
      sandbox: bubblewrap as NonNullable<typeof bubblewrap>,
      workspace,
      workspaceMountPath: TINY_MOUNT,
      verifier,
    });
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

describe.skipIf(bubblewrap === undefined)("a verifier that runs pytest itself (bubblewrap)", () => {
  it("scores as plain pytest does: the nested pytest runs without skillsmith's channel", async () => {
    const passing = await runWith(
      "def test_one():\n    assert 1 == 1\n\ndef test_two():\n    assert 2 == 2\n",
    );
    expect(passing.source).toBe("channel");
    expect(passing.flags).toEqual([]);
    expect([passing.passed, passing.total]).toEqual([2, 2]);

    const failing = await runWith("def test_one():\n    assert 1 == 2\n");
    expect(failing.flags).toEqual([]);
    expect([failing.passed, failing.total]).toEqual([1, 2]);
  }, 120_000);
});
