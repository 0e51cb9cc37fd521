import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTinySuite } from "../../../test/support/suites.js";
import { treeDigest } from "../../env/workspace/digest.js";
import { validateSuite } from "../suite/load.js";
import { readCheckLabels, recordCheckLabels, type StoredCheckLabel } from "./stored-labels.js";

let root: string;
let suite: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-check-labels-"));
  suite = await writeTinySuite(root, {
    suiteYaml: "name: labels\nconfigurations:\n  - id: none\n    agent: none\n",
    skillMarkdown: "---\nname: alpha\ndescription: Alpha skill for tests.\n---\n\n# Alpha\n",
    checkScript: () => "exit 0\n",
  });
  // Requirement r1's verifier starts a tool no machine here has.
  const verifier = join(suite, "skills", "alpha", "requirements", "r1", "verifier");
  await writeFile(
    join(verifier, "test_tool.py"),
    "import subprocess\n\ndef test_build():\n    subprocess.run(['kustomize', 'build'], check=True)\n\ndef test_other():\n    pass\n",
  );
  await writeFile(
    join(suite, "skills", "alpha", "requirements", "r1", "verifier.yaml"),
    "command: sh check.sh\nfiles: [check.sh, test_tool.py]\njunit: junit.xml\n",
  );
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function toolWarning(problems: readonly { severity: string; message: string }[]): string {
  return problems.find((problem) => problem.message.includes("`kustomize`"))?.message ?? "";
}

describe("stored check labels in validate-suite", () => {
  it("gives the measured label for the verifier that was measured, and says the count is static otherwise", async () => {
    const cacheDir = join(root, "cache");
    const verifier = join(suite, "skills", "alpha", "requirements", "r1", "verifier");
    const row: StoredCheckLabel = {
      status: "ok",
      label: "ok, 1 check needs kustomize",
      untouchedPassRatio: 0.5,
      verifierDigest: await treeDigest(verifier),
      measuredAt: "2026-12-02 14:00 UTC",
    };
    const unchecked = await validateSuite(suite, {
      checkCommits: true,
      checkLabels: await readCheckLabels(cacheDir, suite),
    });
    expect(toolWarning(unchecked.problems)).toMatch(
      /1 test needs it; .* the test count is static \(read from the verifier's text\)/,
    );

    await recordCheckLabels(cacheDir, suite, new Map([["alpha/r1", row]]));
    const labels = await readCheckLabels(cacheDir, suite);
    expect(labels.get("alpha/r1")).toEqual(row);
    const measured = await validateSuite(suite, { checkCommits: true, checkLabels: labels });
    expect(toolWarning(measured.problems)).toMatch(
      /; measured by bench check \(2026-12-02 14:00 UTC\): ok, 1 check needs kustomize, 50% untouched$/,
    );

    // An edited verifier is not the one measured: static again.
    await writeFile(
      join(verifier, "test_tool.py"),
      "import subprocess\n\ndef test_build():\n    subprocess.run(['kustomize', 'build'])\n",
    );
    const edited = await validateSuite(suite, { checkCommits: true, checkLabels: labels });
    expect(toolWarning(edited.problems)).toContain("the test count is static");
    // Another suite folder's rows are not this one's.
    expect((await readCheckLabels(cacheDir, join(root, "elsewhere"))).size).toBe(0);
  });
});
