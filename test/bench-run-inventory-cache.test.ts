/**
 * A pytest verifier's inventory is kept on disk beside the prepared environments, so it is taken
 * once per verifier and environment instead of once per process (`src/bench/run/inventory-cache.ts`).
 * The attack on such a cache is a stale inventory: a verifier edited between two `bench run`s
 * scored against the test ids of its old version — its new tests unknown to the inventory, so
 * an honest run would be flagged, or (worse) a test removed from the verifier still expected and
 * the channel's cross-checks run against the wrong list. Every run here must score from the
 * verifier as it is now, unflagged.
 */
import { mkdtemp, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { hasPytest } from "./support/sandboxes.js";
import {
  newFilePatch,
  removeRunRoot,
  tinyRepository,
  writeAlphaSkill,
  writeRequirement,
} from "./support/suites.js";

let root: string;
let suite: string;
let predictions: string;
let testFile: string;

const TWO_TESTS = `import os
from pathlib import Path

TARGET = Path(os.environ["SKILLSMITH_WORKSPACE"]) / "result.txt"


def test_exists():
    assert TARGET.is_file()


def test_says_good():
    assert TARGET.read_text().strip() == "good"
`;

/** The same module with a third test, as a suite author might edit it between runs. */
const THREE_TESTS = `${TWO_TESTS}

def test_one_line():
    assert len(TARGET.read_text().splitlines()) == 1
`;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-inventory-cache-"));
  const { repo, commit } = await tinyRepository(root);
  suite = join(root, "suite");
  const skill = await writeAlphaSkill(suite, {
    suiteYaml:
      "format: skillsmith-suite/1\nname: inventories\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 60 }\n",
    skillYaml: `repository:\n  path: ${repo}\n  commit: ${commit}\n  name: tiny\n  setup: ["true"]\n`,
    skillMarkdown:
      "---\nname: alpha\ndescription: Writes result files. Use when a task asks for one.\n---\n\n# Alpha\n",
  });
  await writeRequirement(skill, "r1", {
    requirementMarkdown:
      "## Requirement\n\nWrite good into result.txt.\n\n## File Operations\n\n- `result.txt`\n\n## Acceptance Criteria\n\n- it says good\n",
    checkScript: "true\n",
    verifierYaml:
      "command: PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -q -p no:cacheprovider test_result.py\nfiles: [test_result.py]\ntimeoutSeconds: 120\n",
  });
  testFile = join(skill, "requirements", "r1", "verifier", "test_result.py");
  await writeFile(testFile, TWO_TESTS);
  predictions = join(root, "predictions.jsonl");
  await writeFile(
    predictions,
    ["without", "with"]
      .map((arm) =>
        JSON.stringify({
          skill: "alpha",
          requirement: "r1",
          arm,
          patch: newFilePatch("result.txt", "good"),
        }),
      )
      .join("\n"),
  );
});

afterAll(async () => {
  await removeRunRoot(root);
});

async function run(name: string) {
  const runDir = join(root, name);
  await runSuite({
    suite,
    runDir,
    predictions,
    sandbox: "unsafe",
    cacheDir: join(root, "cache"),
    check: false,
  });
  const store = ResultsStore.openReadOnly(runDir);
  try {
    const results = [...store.results()].sort((left, right) => left.arm.localeCompare(right.arm));
    return results.map((result) => ({
      arm: result.arm,
      passed: result.passed,
      total: result.total,
      flags: result.flags,
      source: result.verifier?.source,
    }));
  } finally {
    store.close();
  }
}

describe.skipIf(!hasPytest)("the inventory cache (needs python3 with pytest)", () => {
  it("keeps an inventory per verifier content: an edited verifier never meets its old test ids", async () => {
    const scored = (total: number) => ({ passed: total, total, flags: [], source: "channel" });
    const first = await run("first");
    expect(first).toEqual([
      { arm: "with", ...scored(2) },
      { arm: "without", ...scored(2) },
    ]);
    const kept = await readdir(join(root, "cache", "inventories"));
    expect(kept).toHaveLength(1);

    await writeFile(testFile, THREE_TESTS);
    const edited = await run("edited");
    expect(edited).toEqual([
      { arm: "with", ...scored(3) },
      { arm: "without", ...scored(3) },
    ]);
    // The edited verifier's inventory is a new entry; the old one is still there for its version.
    expect(await readdir(join(root, "cache", "inventories"))).toHaveLength(2);
  });
});
