import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../../test/support/temporary.js";
import { InputError } from "../../../core/errors.js";
import type { PytestInventory } from "./inventory.js";
import { injectCanaries } from "./session.js";

const INVENTORY: PytestInventory = {
  kind: "pytest",
  collected: [
    { id: "verifier:tests/test_calc.py::test_add", nodeid: "tests/test_calc.py::test_add" },
  ],
  defined: [],
  modules: [
    {
      nodeid: "tests/test_calc.py",
      location: "verifier:tests/test_calc.py",
      file: "tests/test_calc.py",
      collected: true,
      functions: ["test_add"],
    },
  ],
  functionPatterns: ["test"],
  exitStatusPropagates: true,
  junitWritten: false,
  declaredPlugins: [],
  versions: { python: "3.11.2", pytest: "7.2.1" },
};

const cleanups = cleanupsAfterEach();
let folder: string;
beforeEach(async () => {
  folder = await temporaryDirectoryIn(cleanups, "skillsmith-session-");
  await mkdir(join(folder, "tests"));
});

describe("injectCanaries", () => {
  it("adds canaries to a readable module, and none where the module is not there", async () => {
    expect(await injectCanaries(INVENTORY, (file) => join(folder, file))).toBeUndefined();
    const source = "def test_add():\n    assert 1 + 1 == 2\n";
    await writeFile(join(folder, "tests", "test_calc.py"), source);
    const plan = await injectCanaries(INVENTORY, (file) => join(folder, file));
    expect(plan?.file).toBe("tests/test_calc.py");
    const written = await readFile(join(folder, "tests", "test_calc.py"), "utf8");
    expect(written.startsWith(source)).toBe(true);
    expect(written.length).toBeGreaterThan(source.length);
  });

  it("refuses a module that is there but unreadable instead of dropping its canaries", async () => {
    // As root EACCES cannot be provoked: a folder in the module's place gives EISDIR.
    await mkdir(join(folder, "tests", "test_calc.py"));
    const failure = await injectCanaries(INVENTORY, (file) => join(folder, file)).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(InputError);
    expect((failure as Error).message).toContain(join(folder, "tests", "test_calc.py"));
  });
});
