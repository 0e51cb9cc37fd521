import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { v1Tests } from "../../../test/support/v1-verifiers.js";
import { findTestTimeInstalls, testTimeNetworkProblem } from "./test-time-installs.js";

const tests = v1Tests;
const hasData = existsSync(join(tests, "batch1", "_dependency_utils.py"));

/** A v1 verifier as the importer lays it out: the test file and the batch's helper beside it. */
async function verifier(batch: string, test: string) {
  const files = [{ path: test, content: await readFile(join(tests, batch, test), "utf8") }];
  const helper = join(tests, batch, "_dependency_utils.py");
  if (existsSync(helper)) {
    files.push({ path: "_dependency_utils.py", content: await readFile(helper, "utf8") });
  }
  return files;
}

describe("findTestTimeInstalls", () => {
  it("finds installers in argument lists and command strings, and skips messages", () => {
    const content = [
      "import subprocess, sys, pytest",
      "",
      "@pytest.fixture(scope='module', autouse=True)",
      "def deps():",
      "    subprocess.run(['npm', 'ci', '--legacy-peer-deps'], check=True)",
      "",
      "def test_editable():",
      "    r = subprocess.run([sys.executable, '-m', 'pip', 'install', '-e', '.'])",
      "    assert r.returncode == 0, 'pip install -e . failed'",
      "",
      "def test_docs():",
      '    """npm install is not run here."""',
      "    pytest.skip('npm install failed')",
      "",
    ].join("\n");
    const found = findTestTimeInstalls([{ path: "test_x.py", content }]);
    expect(
      found.map((install) => [install.line, install.installer, install.command, install.scope]),
    ).toEqual([
      [5, "npm", "npm ci --legacy-peer-deps", "verifier"],
      [8, "pip", "pip install -e .", "test"],
    ]);
  });

  it("counts a helper module's installer only when a test of the verifier calls it", () => {
    const helper = [
      "import subprocess",
      "def ensure_npm():",
      "    subprocess.run(['npm', 'ci'])",
      "def ensure_go():",
      "    subprocess.run(['go', 'mod', 'download'])",
    ].join("\n");
    const test = "from helper import ensure_npm\n\ndef test_a():\n    ensure_npm()\n";
    const found = findTestTimeInstalls([
      { path: "test_a.py", content: test },
      { path: "helper.py", content: helper },
    ]);
    expect(found.map((install) => [install.command, install.via])).toEqual([
      ["npm ci", "ensure_npm"],
    ]);
  });

  it.skipIf(!hasData)(
    "on the real v1 verifiers: npm ci and pip install -r through the helper, none where there is none (needs ../shared/fixtures/swe-skills-bench-v1)",
    async () => {
      const mcp = findTestTimeInstalls(await verifier("batch1", "test_mcp_builder.py"));
      expect(mcp.map((install) => install.command)).toContain("npm ci --legacy-peer-deps");
      expect(mcp.every((install) => install.via === "ensure_npm_dependencies")).toBe(true);
      const celery = findTestTimeInstalls(
        await verifier("batch2", "test_python_background_jobs.py"),
      );
      expect(celery.map((install) => install.command)).toContain("python -m pip install -r");
      expect(
        findTestTimeInstalls(await verifier("batch1", "test_python_background_jobs.py")),
      ).toEqual([]);

      const offline = testTimeNetworkProblem(mcp, {
        network: "offline",
        networkReason: "the npm registry did not answer",
      });
      expect(offline).toMatch(/^needs network at test time: _dependency_utils\.py:32 runs `npm ci/);
      expect(offline).toContain("setup ran offline (the npm registry did not answer)");
      // With an online setup the npm cache serves the install: not a problem.
      expect(testTimeNetworkProblem(mcp, { network: "online" })).toBeUndefined();
      // One test that installs is that test's business, not the verifier's.
      const perTest = findTestTimeInstalls(await verifier("batch8", "test_python_packaging.py"));
      expect(perTest.map((install) => install.scope)).toEqual(["test"]);
      expect(testTimeNetworkProblem(perTest, { network: "offline" })).toBeUndefined();
    },
  );
});
