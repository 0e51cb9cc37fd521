import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectSetup } from "./detect.js";

let repository: string;

beforeAll(async () => {
  repository = await mkdtemp(join(tmpdir(), "skillsmith-detect-"));
  // Shaped like pypa/packaging at v1's pinned commit: a flit project with a PEP 735 test group.
  await writeFile(
    join(repository, "pyproject.toml"),
    [
      "[build-system]",
      'requires = ["flit_core >=3.3"]',
      'build-backend = "flit_core.buildapi"',
      "[project]",
      'name = "probe"',
      'version = "1.0"',
      "[dependency-groups]",
      'test = ["pretend", "pytest>=6.2.0"]',
      "",
    ].join("\n"),
  );
});

afterAll(async () => {
  await rm(repository, { recursive: true, force: true });
});

describe("detectSetup: a PEP 735 test group", () => {
  it("installs the group by name, falling back to one package at a time when the index lacks one", async () => {
    const plan = await detectSetup(repository);
    const group = plan.steps.find((step) => step.why.startsWith('dependency group "test"'));
    expect(group?.command).toBe("python -m pip install --quiet pretend 'pytest>=6.2.0'");
    expect(group?.fallback?.command).toBe(
      `for requirement in pretend 'pytest>=6.2.0'; do python -m pip install --quiet "$requirement" || echo "not installed: $requirement" >&2; done`,
    );
  });
});
