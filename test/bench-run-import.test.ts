/**
 * An SWE-Skills-Bench-layout benchmark imported and run end to end through the CLI with the
 * replay agent (skipped without bubblewrap or a `python` binary). Its verifiers use the layout's fixed paths (tests at /workspace/tests, the
 * repository at /workspace/<name>), which only a mount namespace can provide: bubblewrap.
 *
 * By hand: batch1's unassisted patch subtracts instead of adding (0 of 3 checks), the assisted
 * one adds (3 of 3): d = 100; batch2 is right in both arms: d = 0. Δ = 50; with two deltas the
 * sign-flip p is the share of the 4 sign assignments with |mean| ≥ 50: all 4, p = 1.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BenchReport } from "../src/bench/analysis/report.js";
import { findOnPath } from "../src/env/sandbox/bubblewrap.js";
import { type CliRun, runInProcess } from "./support/cli.js";
import { git } from "./support/git.js";
import { usableBubblewrap } from "./support/sandboxes.js";

const hasBubblewrap = (await usableBubblewrap()) !== undefined;
// The layout's verifier command is `python -m pytest`; Debian ships `python` only with python-is-python3.
const hasPython = findOnPath("python") !== null;

let root: string;

function addPatch(expression: string): string {
  return `diff --git a/calc/add.py b/calc/add.py\nnew file mode 100644\n--- /dev/null\n+++ b/calc/add.py\n@@ -0,0 +1,2 @@\n+def add(a, b):\n+    return ${expression}\n`;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-run-import-"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function run(argv: string[]): Promise<CliRun> {
  return runInProcess(argv, {
    env: { ...process.env, SKILLSMITH_CACHE_DIR: join(root, "cache") },
    cwd: root,
  });
}

describe("imported SWE-Skills-Bench layout, replay agent", () => {
  it.skipIf(!hasBubblewrap || !hasPython)(
    "imports, runs both arms of both batches and reports the hand-computed verdict",
    async () => {
      const repo = join(root, "repos", "calc");
      await mkdir(join(repo, "calc"), { recursive: true });
      await writeFile(join(repo, "calc", "__init__.py"), "");
      await git(repo, "init", "-q", "-b", "main");
      await git(repo, "add", "-A");
      await git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
      const commit = await git(repo, "rev-parse", "HEAD");

      const layout = join(root, "layout");
      await mkdir(join(layout, "config"), { recursive: true });
      await writeFile(
        join(layout, "config", "benchmark_config.yaml"),
        `global:\n  batches: [batch1, batch2]\nskills:\n  - id: "tiny-calc"\n    name: "Tiny calc"\n    repo:\n      url: "https://github.com/example/calc"\n      commit: "${commit}"\n    environment:\n      base_image: "python:3.11"\n      limits:\n        cpus: "1"\n        memory: "1g"\n        timeout_per_command: 120\n      limits:\n        max_iterations: 1\n        total_timeout_sec: 600\n`,
      );
      await mkdir(join(layout, "skills", "tiny-calc"), { recursive: true });
      await writeFile(
        join(layout, "skills", "tiny-calc", "SKILL.md"),
        "---\nname: tiny-calc\ndescription: Arithmetic helpers for the calc package. Use when adding calc functions.\n---\n\n# Tiny calc\n\nAdd means +.\n",
      );
      for (const batch of ["batch1", "batch2"]) {
        await mkdir(join(layout, "tasks", batch), { recursive: true });
        await writeFile(
          join(layout, "tasks", batch, "tiny-calc.md"),
          `# Task: add\n\n## Background\n\nThe calc package.\n\n## Files to Create/Modify\n\n- \`calc/add.py\` (new)\n\n## Requirements\n\nAdd \`add(a, b)\` returning the sum.\n\n## Acceptance Criteria\n\n- add(1, 2) == 3\n`,
        );
        await mkdir(join(layout, "tests", batch), { recursive: true });
        await writeFile(
          join(layout, "tests", batch, "test_tiny_calc.py"),
          `import sys\n\nsys.path.insert(0, "/workspace/calc")\n\n\ndef test_small():\n    """Small numbers."""\n    from calc.add import add\n    assert add(1, 2) == 3\n\n\ndef test_negative():\n    """A negative operand."""\n    from calc.add import add\n    assert add(-4, 1) == -3\n\n\ndef test_zero():\n    """Zero is neutral."""\n    from calc.add import add\n    assert add(0, 7) == 7\n`,
        );
      }
      const suite = join(root, "suite");
      const imported = await run([
        "bench",
        "import",
        "swe-skills-bench",
        layout,
        "--out",
        suite,
        "--repo-root",
        join(root, "repos"),
        "--json",
      ]);
      expect(imported.code, imported.stderr).toBe(0);
      expect(JSON.parse(imported.stdout)).toMatchObject({ skills: 1, requirements: 2 });

      const predictions = join(root, "predictions.jsonl");
      await writeFile(
        predictions,
        [
          { skill: "tiny-calc", requirement: "batch1", arm: "without", patch: addPatch("a - b") },
          { skill: "tiny-calc", requirement: "batch1", arm: "with", patch: addPatch("a + b") },
          { skill: "tiny-calc", requirement: "batch2", arm: "without", patch: addPatch("a + b") },
          { skill: "tiny-calc", requirement: "batch2", arm: "with", patch: addPatch("b + a") },
        ]
          .map((line) => JSON.stringify(line))
          .join("\n"),
      );
      const runDir = join(root, "run");
      const result = await run([
        "bench",
        "run",
        suite,
        "--agent",
        "replay",
        "--predictions",
        predictions,
        "--out",
        runDir,
        "--json",
      ]);
      expect(result.code, result.stderr).toBe(0);
      const { report } = JSON.parse(result.stdout) as { report: BenchReport };
      const profile = report.profiles[0];
      expect(profile?.skill).toBe("tiny-calc");
      expect(
        profile?.requirements.map((outcome) => [
          outcome.id,
          outcome.without,
          outcome.with,
          outcome.delta,
        ]),
      ).toEqual([
        ["batch1", 0, 1, 100],
        ["batch2", 1, 1, 0],
      ]);
      expect(profile?.delta).toBe(50);
      expect(profile?.p).toBe(1);
      expect(profile?.class).toBe("ineffective");

      const text = await run(["bench", "report", runDir]);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(
        /tiny-calc\s+2\s+50\.0%\s+100\.0%\s+\+50\.0\s+1\.0000\s+Ineffective/,
      );
    },
    240_000,
  );
});
