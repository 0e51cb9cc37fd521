import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeReplaySuite } from "../../../test/support/suites.js";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../../test/support/temporary.js";
import { createHarness, registerHarness, unregisterHarness } from "../../agents/registry.js";
import { naturalCompare, repositoryName, validateSuite } from "./load.js";

describe("naturalCompare", () => {
  it("orders batch names by number and other text by code point", () => {
    const names = ["batch10", "batch2", "batch1", "test_outputs.py", "test.sh", "batch1a"];
    expect([...names].sort(naturalCompare)).toEqual([
      "batch1",
      "batch1a",
      "batch2",
      "batch10",
      "test.sh",
      "test_outputs.py",
    ]);
  });
});

describe("repositoryName", () => {
  it.each([
    ["https://github.com/encode/httpx", "httpx"],
    ["https://github.com/encode/httpx.git", "httpx"],
    ["git@github.com:encode/httpx.git", "httpx"],
    ["file:///srv/repos/pyfolio/", "pyfolio"],
    ["../bundles/app.bundle", "app"],
  ])("%s → %s", (location, name) => {
    expect(repositoryName(location)).toBe(name);
  });
});

describe("configurations naming a registered harness", () => {
  const cleanups = cleanupsAfterEach();

  it("are refused with the line until the harness is registered, then load", async () => {
    const root = await temporaryDirectoryIn(cleanups, "suite-agent-");
    const { suite } = await writeReplaySuite(root, { requirements: 1, verifierSleepSeconds: 0 });
    // Line 5 of suite.yaml holds the agent.
    await writeFile(
      join(suite, "suite.yaml"),
      "format: skillsmith-suite/1\nname: tiny\nconfigurations:\n  - id: mine\n    agent: team-agent\n    limits: { timeoutSeconds: 30 }\n",
    );
    const before = await validateSuite(suite);
    expect(before.valid).toBe(false);
    expect(before.problems).toContainEqual(
      expect.objectContaining({
        line: 5,
        field: "configurations.0.agent",
        severity: "error",
        message: expect.stringMatching(
          /^unknown agent harness "team-agent"; expected one of: claude-code, codex, builtin, replay, none, oracle \(.*registerHarness/,
        ),
      }),
    );
    registerHarness("team-agent", () => createHarness("none"));
    try {
      const after = await validateSuite(suite);
      expect(after.problems.filter((problem) => problem.severity === "error")).toEqual([]);
      expect(after.suite?.configurations[0]?.agent).toBe("team-agent");
    } finally {
      unregisterHarness("team-agent");
    }
  });
});

describe("a suite folder with a part that is there but unreadable", () => {
  const cleanups = cleanupsAfterEach();
  const suiteYaml =
    "format: skillsmith-suite/1\nname: tiny\nconfigurations:\n  - id: replay\n    agent: replay\n";

  it("is refused naming suite.yaml, not reported as a suite without suite.yaml", async () => {
    const root = await temporaryDirectoryIn(cleanups, "suite-unreadable-");
    await mkdir(join(root, "skills"));
    const loop = await selfLoopingLink(root, "suite.yaml");
    await expect(validateSuite(root)).rejects.toMatchObject({
      code: "core.file-unreadable",
      data: { file: loop },
    });
  });

  it("is refused naming the skills folder, not read as a suite with no skills", async () => {
    const root = await temporaryDirectoryIn(cleanups, "suite-unreadable-");
    await writeFile(join(root, "suite.yaml"), suiteYaml);
    const loop = await selfLoopingLink(root, "skills");
    await expect(validateSuite(root)).rejects.toMatchObject({
      code: "core.file-unreadable",
      data: { file: loop },
    });
  });
});
