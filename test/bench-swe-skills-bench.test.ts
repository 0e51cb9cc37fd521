import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { importSweSkillsBench, loadSuite, validateSuite } from "../src/bench/index.js";
import { runProcess } from "../src/core/process.js";
import { runInProcess } from "./support/cli.js";

const repositoryRoot = resolve(import.meta.dirname, "..");
const fixture = resolve(repositoryRoot, "../shared/fixtures/swe-skills-bench");
const hasFixture = existsSync(join(fixture, "config", "benchmark_config.yaml"));
const hasGit = (await runProcess("git", ["--version"])).exitCode === 0;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-bench-swe-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const bench = (argv: string[]) => runInProcess(["bench", ...argv], { cwd: scratch, env: {} });

describe.skipIf(!hasFixture)(
  "bench import swe-skills-bench on the real v1 sample (needs ../shared/fixtures/swe-skills-bench)",
  () => {
    /*
     * Expected counts, worked out by reading the fixture:
     * - config/benchmark_config.yaml lists 49 skills (49 lines `  - id:`); only two have
     *   skills/<id>/SKILL.md (python-resilience, risk-metrics-calculation), both valid, both with
     *   a usable repo url + commit. → 2 skills imported, 47 skills reported (one problem each).
     * - tasks/batch1..batch10 hold one file per imported skill → 2 × 10 = 20 requirements.
     * - the sample has no tests/ folder → each of the 20 requirements is imported without its
     *   verifier file and reported ("no verifier") → 20 more problems. Total 47 + 20 = 67.
     */
    it("imports 2 skills and 20 requirements and reports the rest, as exact JSON", async () => {
      const out = join(scratch, "v1-suite");
      const result = await bench(["import", "swe-skills-bench", fixture, "--out", out, "--json"]);
      expect(result.code).toBe(0);
      const json = JSON.parse(result.stdout) as {
        skills: number;
        requirements: number;
        problems: { path: string; message: string }[];
      };
      expect(Object.keys(json)).toEqual(["skills", "requirements", "problems", "copied"]);
      expect(json.skills).toBe(2);
      expect(json.requirements).toBe(20);
      expect(json.problems).toHaveLength(67);
      for (const problem of json.problems)
        expect(Object.keys(problem)).toEqual(["path", "message"]);
      const notImported = json.problems.filter((problem) => /not imported/.test(problem.message));
      expect(notImported).toHaveLength(47);
      const noVerifier = json.problems.filter((problem) => /^no verifier/.test(problem.message));
      expect(noVerifier).toHaveLength(20);
      expect(noVerifier.map((problem) => problem.path)).toContain(
        "tests/batch10/test_risk_metrics_calculation.py",
      );
      // add-uint-support: `url: null` on line 40 of the config, under `repo:` on line 39.
      const uint = json.problems.find((problem) => problem.message.includes('"add-uint-support"'));
      // `commit:` on line 41 has only a comment, so its value is null.
      expect(uint?.message).toMatch(
        /repo\.url is null \(line 40\); repo\.commit is missing \(line 41\)/,
      );
      expect(uint?.message).toMatch(/no skills\/add-uint-support\/SKILL\.md/);
      // The merge of the repeated `limits:` keys is a note on stderr, not a problem.
      expect(result.stderr).toMatch(/49 entries repeat a key \(limits\)/);

      const requirementFolders = await readdir(
        join(out, "skills", "python-resilience", "requirements"),
      );
      expect(requirementFolders.sort()).toEqual(
        Array.from({ length: 10 }, (_, index) => `batch${index + 1}`).sort(),
      );
    });

    // One library import shared by the tests below (parsing the 2,200-line config is the slow part).
    let imported: string;
    beforeAll(async () => {
      imported = join(scratch, "v1-shared");
      await importSweSkillsBench(fixture, { out: imported });
    });

    it("merges both `limits:` maps of an entry (resource limits and interaction limits)", async () => {
      const out = imported;
      const skillFile = parseYaml(
        await readFile(join(out, "skills", "python-resilience", "skill.yaml"), "utf8"),
      ) as Record<string, Record<string, unknown>>;
      // Config lines 379-382 (first `limits:`) and 388-390 (second `limits:`).
      expect(skillFile.environment?.limits).toEqual({
        cpus: 4,
        memoryMb: 8 * 1024,
        commandTimeoutSeconds: 300,
      });
      expect(skillFile.agentLimits).toEqual({ timeoutSeconds: 1800, maxIterations: 1 });
      expect(skillFile.repository).toEqual({
        url: "https://github.com/encode/httpx",
        commit: "b5addb64f0161ff6bfe94c124ef76f6a1fba5254",
        name: "httpx",
        mountPath: "/workspace/httpx",
      });
    });

    it("validate-suite reports each missing verifier, and the suite loads once the files exist", async () => {
      const out = join(scratch, "v1-validate");
      await cp(imported, out, { recursive: true });
      const before = await bench(["validate-suite", out, "--json"]);
      expect(before.code).toBe(1);
      const report = JSON.parse(before.stdout) as {
        valid: boolean;
        errors: number;
        problems: { path: string; message: string; severity: string }[];
      };
      expect(report.valid).toBe(false);
      expect(report.errors).toBe(20);
      const errors = report.problems.filter((problem) => problem.severity === "error");
      expect(errors.every((problem) => problem.message.startsWith("no verifier"))).toBe(true);

      // Put a verifier file in place for every requirement, as a user would.
      for (const skill of ["python-resilience", "risk-metrics-calculation"]) {
        const testFile = `test_${skill.replace(/-/g, "_")}.py`;
        for (let batch = 1; batch <= 10; batch++) {
          const folder = join(out, "skills", skill, "requirements", `batch${batch}`, "verifier");
          await mkdir(folder, { recursive: true });
          await writeFile(join(folder, testFile), "def test_placeholder():\n    assert True\n");
        }
      }
      const after = await bench(["validate-suite", out]);
      expect(after.code).toBe(0);
      expect(after.stdout).toMatch(/is valid: 2 skills, 20 requirements, 1 configurations/);

      const suite = await loadSuite(out);
      expect(suite.skills.map((skill) => skill.id)).toEqual([
        "python-resilience",
        "risk-metrics-calculation",
      ]);
      const resilience = suite.skills[0];
      expect(resilience?.requirements.map((requirement) => requirement.id)).toEqual(
        Array.from({ length: 10 }, (_, index) => `batch${index + 1}`),
      );
      expect(resilience?.repository?.mountPath).toBe("/workspace/httpx");
      const first = resilience?.requirements[0];
      expect(first?.verifier.command).toBe(
        "python -m pytest test_python_resilience.py -v --tb=short --junitxml=junit.xml",
      );
      expect(first?.verifier.cwd).toBe("/workspace/tests");
      expect(first?.fileOperations).toEqual(["httpx/_transports/resilient.py"]);
      expect(resilience?.skillFolders).toEqual([
        join(out, "skills", "python-resilience", "agent-skills", "python-resilience"),
      ]);
    });

    it("reports missing tests, a task with no skill and maps --repo-root (on a copy in /tmp)", async () => {
      const copy = join(scratch, "v1-copy");
      await cp(fixture, copy, { recursive: true });
      // Tests for batch1 only: the other 9 batches of each skill lack theirs.
      await mkdir(join(copy, "tests", "batch1"), { recursive: true });
      await writeFile(
        join(copy, "tests", "batch1", "test_python_resilience.py"),
        "def test_a():\n    pass\n",
      );
      await writeFile(
        join(copy, "tests", "batch1", "test_risk_metrics_calculation.py"),
        "def test_b():\n    pass\n",
      );
      // A task whose skill is not in the config.
      await writeFile(join(copy, "tasks", "batch3", "orphan-task.md"), "## Requirements\n- x\n");
      // A local clone for httpx only.
      const repos = join(scratch, "repos");
      await mkdir(join(repos, "httpx"), { recursive: true });

      const out = join(scratch, "v1-copy-suite");
      const result = await importSweSkillsBench(copy, { out, repoRoot: repos });
      expect(result.skills).toBe(2);
      expect(result.requirements).toBe(20);
      const orphan = result.problems.filter(
        (problem) => problem.path === "tasks/batch3/orphan-task.md",
      );
      expect(orphan).toEqual([
        {
          path: "tasks/batch3/orphan-task.md",
          message:
            'task has no skill: "orphan-task" is not in config/benchmark_config.yaml; not imported',
        },
      ]);
      const noVerifier = result.problems.filter((problem) =>
        problem.message.startsWith("no verifier"),
      );
      expect(noVerifier).toHaveLength(18);
      expect(noVerifier.some((problem) => problem.path.startsWith("tests/batch1/"))).toBe(false);
      expect(
        await readFile(
          join(
            out,
            "skills",
            "python-resilience",
            "requirements",
            "batch1",
            "verifier",
            "test_python_resilience.py",
          ),
          "utf8",
        ),
      ).toContain("def test_a");

      const httpx = parseYaml(
        await readFile(join(out, "skills", "python-resilience", "skill.yaml"), "utf8"),
      );
      expect(httpx.repository.path).toBe(join(repos, "httpx"));
      expect(httpx.repository.url).toBeUndefined();
      const pyfolio = parseYaml(
        await readFile(join(out, "skills", "risk-metrics-calculation", "skill.yaml"), "utf8"),
      );
      expect(pyfolio.repository.url).toBe("https://github.com/quantopian/pyfolio");
    });

    it("refuses to overwrite an existing suite folder", async () => {
      const out = join(scratch, "occupied");
      await mkdir(out, { recursive: true });
      await writeFile(join(out, "keep.txt"), "mine");
      const result = await bench(["import", "swe-skills-bench", fixture, "--out", out]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/already exists and is not empty/);
      expect(await readFile(join(out, "keep.txt"), "utf8")).toBe("mine");
    });
  },
);

describe("through runCli, as the binary runs it", () => {
  it("maps a non-benchmark folder to exit 2 and validate-suite of a missing suite to exit 1", async () => {
    const { runCli } = await import("../src/cli/program.js");
    let stderr = "";
    let stdout = "";
    const io = {
      stdout: (text: string) => {
        stdout += text;
      },
      stderr: (text: string) => {
        stderr += text;
      },
      cwd: scratch,
    };
    const notBenchmark = join(scratch, "run-cli-empty");
    await mkdir(notBenchmark, { recursive: true });
    expect(
      await runCli(["bench", "import", "swe-skills-bench", notBenchmark, "--out", "x"], io),
    ).toBe(2);
    expect(stderr).toMatch(/not a SWE-Skills-Bench folder/);
    expect(await runCli(["bench", "validate-suite", join(scratch, "no-suite")], io)).toBe(1);
    expect(stdout).toMatch(/suite folder does not exist/);
    // The verifier check cannot start without a suite: an input error, named.
    expect(await runCli(["bench", "check", join(scratch, "no-suite")], io)).toBe(2);
    expect(stderr).toMatch(/suite folder does not exist/);
  });
});

describe("bench import swe-skills-bench on hand-made inputs", () => {
  async function makeBenchmark(name: string, config: string): Promise<string> {
    const root = join(scratch, name);
    await mkdir(join(root, "config"), { recursive: true });
    await writeFile(join(root, "config", "benchmark_config.yaml"), config);
    return root;
  }

  it("exits 2 with a clear message when the folder is not that layout", async () => {
    const root = join(scratch, "not-a-benchmark");
    await mkdir(join(root, "tasks"), { recursive: true });
    const result = await bench([
      "import",
      "swe-skills-bench",
      root,
      "--out",
      join(scratch, "never"),
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /is not a SWE-Skills-Bench folder: config\/benchmark_config\.yaml is missing/,
    );
    expect(existsSync(join(scratch, "never"))).toBe(false);
  });

  it("exits 2 when nothing can be imported, prints the JSON and writes no suite", async () => {
    const root = await makeBenchmark(
      "nothing-importable",
      'skills:\n  - id: "lonely"\n    repo:\n      url: null\n',
    );
    const out = join(scratch, "nothing-out");
    const result = await bench(["import", "swe-skills-bench", root, "--out", out, "--json"]);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toEqual({
      skills: 0,
      requirements: 0,
      problems: [
        {
          path: "config/benchmark_config.yaml",
          message:
            'line 2: skill "lonely" not imported: no skills/lonely/SKILL.md; no task files tasks/batch*/lonely.md; repo.url is null (line 4); repo.commit is missing (line 3)',
        },
      ],
      copied: [],
    });
    expect(result.stderr).toMatch(/nothing could be imported/);
    expect(existsSync(out)).toBe(false);
  });

  it.skipIf(!hasGit)(
    "imports a file:// repository and a local test, with duplicate limits merged (needs git)",
    async () => {
      const repository = join(scratch, "local-repo");
      await mkdir(repository, { recursive: true });
      await writeFile(join(repository, "app.py"), "VALUE = 1\n");
      const git = (args: string[]) =>
        runProcess("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
          cwd: repository,
        });
      await git(["init", "-q"]);
      await git(["add", "."]);
      await git(["commit", "-q", "-m", "initial"]);
      const commit = (await git(["rev-parse", "HEAD"])).stdout.trim();
      const url = pathToFileURL(repository).href;
      const root = await makeBenchmark(
        "local-benchmark",
        [
          "skills:",
          '  - id: "tiny-skill"',
          "    repo:",
          `      url: "${url}"`,
          `      commit: "${commit}"`,
          "    environment:",
          "      limits:",
          '        cpus: "2"',
          '        memory: "512m"',
          "      setup_commands: ['pip install -e .']",
          "      limits:",
          "        total_timeout_sec: 600",
          "      evaluation:",
          "        - level: L2",
          "          method: unit_test",
          "          params: { test_command: 'python -m pytest /workspace/tests/test_tiny_skill.py', timeout: 120 }",
        ].join("\n"),
      );
      await mkdir(join(root, "skills", "tiny-skill"), { recursive: true });
      await writeFile(
        join(root, "skills", "tiny-skill", "SKILL.md"),
        "---\nname: tiny-skill\ndescription: Adds tiny features to app.py when asked for tiny changes.\n---\n# Tiny\nDo tiny things.\n",
      );
      await mkdir(join(root, "tasks", "batch1"), { recursive: true });
      await writeFile(
        join(root, "tasks", "batch1", "tiny-skill.md"),
        "## Background\nA tiny app.\n## Files to Create/Modify\n- `app.py`\n## Requirements\nSet VALUE to 2.\n## Acceptance Criteria\n- VALUE is 2\n",
      );
      await mkdir(join(root, "tests", "batch1"), { recursive: true });
      await writeFile(
        join(root, "tests", "batch1", "test_tiny_skill.py"),
        "import sys\nsys.path.insert(0, '/workspace/local-repo')\n\ndef test_value():\n    import app\n    assert app.VALUE == 2\n",
      );

      const out = join(scratch, "local-suite");
      const result = await bench(["import", "swe-skills-bench", root, "--out", out, "--json"]);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({
        skills: 1,
        requirements: 1,
        problems: [],
        copied: [],
      });

      const suite = await loadSuite(out);
      const skill = suite.skills[0];
      expect(skill?.repository).toEqual({
        source: { kind: "url", url },
        commit,
        name: "local-repo",
        setup: ["pip install -e ."],
        setupChoice: { kind: "commands", commands: ["pip install -e ."] },
        mountPath: "/workspace/local-repo",
      });
      expect(skill?.environment?.limits).toEqual({ cpus: 2, memoryMb: 512 });
      expect(skill?.agentLimits).toEqual({ timeoutSeconds: 600 });
      expect(skill?.requirements[0]?.verifier.timeoutSeconds).toBe(120);
      expect(suite.configurations).toEqual([
        { id: "claude-code", agent: "claude-code", limits: { timeoutSeconds: 600 } },
      ]);
      const validation = await validateSuite(out);
      expect(validation.problems).toEqual([]);
    },
  );
});
