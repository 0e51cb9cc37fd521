/**
 * A suite is loaded once: `runSuite` takes the `{suite, excluded}` that `loadSuiteSelection`
 * returned (the CLI loads it to name the run directory), and reports the parts left out exactly
 * as when it loads the folder itself.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSuite } from "../src/bench/run/runner.js";
import { loadSuiteSelection } from "../src/bench/suite/load.js";
import { removeRunRoot, writeTinySuite } from "./support/suites.js";

let root: string;
let suite: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-loaded-suite-"));
  suite = await writeTinySuite(root, {
    suiteYaml:
      "format: skillsmith-suite/1\nname: loaded\nconfigurations:\n  - id: none\n    agent: none\n    limits: { timeoutSeconds: 30 }\n",
    skillMarkdown:
      "---\nname: alpha\ndescription: Writes result files. Use when a task asks for a result file.\n---\n\n# Alpha\n\nWrite good.\n",
    checkScript: () =>
      'echo \'<testsuite name="r"><testcase classname="r" name="x"/></testsuite>\' > junit.xml\n',
  });
  // Requirement r2 loses its verifier settings: it is left out, r1 still runs.
  await rm(join(suite, "skills", "alpha", "requirements", "r2", "verifier.yaml"));
});

afterAll(async () => {
  await removeRunRoot(root);
});

describe("runSuite with a loaded selection", () => {
  it("runs what was loaded and reports the left-out requirement as loading the folder does", async () => {
    const loaded = await loadSuiteSelection(suite, { partial: true });
    expect(loaded.excluded.map((part) => part.requirement)).toEqual(["r2"]);
    const common = { sandbox: "unsafe" as const, cacheDir: join(root, "cache") };
    const fromLoaded = await runSuite({ ...common, suite: loaded, runDir: join(root, "a") });
    const fromFolder = await runSuite({ ...common, suite, runDir: join(root, "b") });
    for (const summary of [fromLoaded, fromFolder]) {
      // r1 in both arms; r2 never runs.
      expect(summary.executed).toBe(2);
      expect(summary.failed).toEqual([]);
    }
    const excludedOf = (check: typeof fromLoaded.check) =>
      (check?.requirements ?? [])
        .filter((requirement) => requirement.requirement === "r2")
        .map((requirement) => requirement.status);
    expect(excludedOf(fromLoaded.check)).toHaveLength(1);
    expect(excludedOf(fromLoaded.check)).toEqual(excludedOf(fromFolder.check));
  }, 120_000);
});
