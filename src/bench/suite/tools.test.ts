import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeMissingTool, missingVerifierTools } from "./tools.js";
import type { SuiteRequirement } from "./types.js";

let scratch: string;
let requirement: SuiteRequirement;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-tools-"));
  const folder = join(scratch, "verifier");
  await mkdir(folder);
  await writeFile(
    join(folder, "test_k.py"),
    [
      "import subprocess",
      "from pdm.core import Core",
      "",
      "def test_build():",
      "    r = subprocess.run(['kustomize', 'build', 'overlays/prod'], capture_output=True)",
      "    assert r.returncode == 0, 'go and yarn are words in a message, not commands'",
      "",
    ].join("\n"),
  );
  requirement = {
    verifier: { command: "python -m pytest test_k.py", folder, files: ["test_k.py"] },
  } as unknown as SuiteRequirement;
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("missingVerifierTools", () => {
  it("names the tools a verifier starts or imports that PATH lacks, with a fix, and no words from messages", async () => {
    const empty = join(scratch, "empty-bin");
    await mkdir(empty, { recursive: true });
    const missing = await missingVerifierTools(requirement, empty);
    expect(missing.map((tool) => [tool.program, tool.file, tool.line])).toEqual([
      ["kustomize", "test_k.py", 5],
      ["pdm", "test_k.py", 2],
    ]);
    expect(describeMissingTool(missing[0] as never)).toMatch(
      /runs `kustomize` \(test_k\.py:5\), which is not installed here: 1 test needs it; it fails for the missing tool.*fix: install kustomize/,
    );
    // Imported at module level: every test of the file goes through it.
    expect(missing[1]?.tests).toBeUndefined();
    expect(describeMissingTool(missing[1] as never)).toContain("every check needs it");
  });

  it("says nothing of a tool that is on PATH", async () => {
    const bin = join(scratch, "bin");
    await mkdir(bin, { recursive: true });
    for (const program of ["kustomize", "pdm"]) {
      await writeFile(join(bin, program), "#!/bin/sh\n");
      await chmod(join(bin, program), 0o755);
    }
    expect(await missingVerifierTools(requirement, bin)).toEqual([]);
  });
});
