import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pythonImports, repoRootCandidates, verifierHelpers } from "./swe-skills-bench.js";

let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "skillsmith-helpers-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("pythonImports", () => {
  it("lists top-level modules of every import form", () => {
    const source = [
      "import os, sys as system",
      "import a.b.c",
      "from _dependency_utils import ensure_python_dependencies",
      "from .local import thing",
      "from . import sibling, other",
      "    from pkg.sub import x  # inside a function",
      "# import commented",
    ].join("\n");
    expect(pythonImports(source).sort()).toEqual(
      ["_dependency_utils", "a", "local", "os", "other", "pkg", "sibling", "sys"].sort(),
    );
  });
});

describe("verifierHelpers", () => {
  it("finds same-folder modules and packages it imports, transitively, and conftest.py", async () => {
    await mkdir(join(folder, "helpers_pkg"), { recursive: true });
    await writeFile(join(folder, "helpers_pkg", "__init__.py"), "");
    await writeFile(
      join(folder, "test_x.py"),
      "import pytest\nfrom _dependency_utils import ensure\nimport helpers_pkg\n",
    );
    await writeFile(join(folder, "_dependency_utils.py"), "import os\nimport _deeper\n");
    await writeFile(join(folder, "_deeper.py"), "");
    await writeFile(join(folder, "conftest.py"), "");
    // Beside the test but not imported by it: left out.
    await writeFile(join(folder, "test_other.py"), "");
    await writeFile(join(folder, "unused.py"), "");
    expect(await verifierHelpers(folder, "test_x.py")).toEqual([
      "conftest.py",
      "_dependency_utils.py",
      "helpers_pkg",
      "_deeper.py",
    ]);
  });
});

describe("verifierHelpers on an unreadable test file", () => {
  it("refuses it naming the file instead of reading it as empty (no helpers)", async () => {
    // A folder where the test file is expected: reading it fails with EISDIR, also as root.
    await mkdir(join(folder, "test_folder.py"));
    await expect(verifierHelpers(folder, "test_folder.py")).rejects.toMatchObject({
      code: "core.file-unreadable",
      data: { file: join(folder, "test_folder.py") },
    });
  });
});

describe("repoRootCandidates", () => {
  it("tries folders, then bundles, named after the repository and its owner", () => {
    expect(repoRootCandidates("https://github.com/pypa/packaging.git")).toEqual([
      { path: "packaging", kind: "directory" },
      { path: "packaging.git", kind: "directory" },
      { path: "pypa/packaging", kind: "directory" },
      { path: "pypa-packaging", kind: "directory" },
      { path: "pypa/packaging.git", kind: "directory" },
      { path: "packaging.bundle", kind: "file" },
      { path: "pypa-packaging.bundle", kind: "file" },
      { path: "pypa/packaging.bundle", kind: "file" },
    ]);
  });
});
