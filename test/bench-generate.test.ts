/**
 * `skillsmith bench generate` end to end, offline: the scripted model server plays the
 * requirement engineer and the test engineer (only the model's words are scripted); the git
 * repository, pytest runs on the untouched checkout, the sandbox and the suite loader are real.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseRequirementMarkdown, validateSuite } from "../src/bench/index.js";
import type { ScriptedReply } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { runInProcess, writeTree } from "./support/cli.js";
import { gitSync } from "./support/git.js";
import { hasPytest } from "./support/tool-probes.js";

const apiKey = "sk-ant-api03-TESTKEY-generate-1234567890";
let scratch: string;
let repository: string;
let commit: string;
let skill: string;
const servers: ScriptedServer[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-generate-"));
  repository = join(scratch, "calc");
  await writeTree(repository, {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "README.md": "# calc\n\nA tiny arithmetic module.\n",
  });
  gitSync(repository, "init", "-q", "-b", "main");
  gitSync(repository, "add", "-A");
  gitSync(
    repository,
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@example.com",
    "commit",
    "-q",
    "-m",
    "start",
  );
  commit = gitSync(repository, "rev-parse", "HEAD").trim();
  skill = join(scratch, "arithmetic-care");
  await writeTree(skill, {
    "SKILL.md": [
      "---",
      "name: arithmetic-care",
      "description: How to add arithmetic operations to small Python modules with careful edge cases.",
      "---",
      "",
      "# Arithmetic care",
      "",
      "When you add an operation, always validate both operands are numbers first and raise a TypeError naming the operand that is wrong before computing anything at all.",
      "",
    ].join("\n"),
  });
});

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const usage = { inputTokens: 100, outputTokens: 40 };

function answer(value: unknown): ScriptedReply {
  return { text: JSON.stringify(value), usage };
}

function requirement(id: string, text: string, operation: string) {
  return {
    id,
    background: "calc.py holds the arithmetic helpers of this project.",
    requirement: text,
    fileOperations: ["calc.py"],
    acceptanceCriteria: [`calc.${operation} returns the expected value for integers and floats`],
  };
}

const mulRequirement = requirement("mul", "Add a function mul(a, b) to calc.py.", "mul");
const subRequirement = requirement("sub", "Add a function sub(a, b) to calc.py.", "sub");

/** A sound verifier: each test imports calc at run time and calls an operation it lacks today. */
function soundTests(operation: string, cases: [number, number, number][]): string {
  const lines = [
    "import importlib",
    "",
    "",
    "def _calc():",
    '    return importlib.import_module("calc")',
    "",
  ];
  cases.forEach(([left, right, expected], index) => {
    lines.push(
      "",
      `def test_${operation}_${index}():`,
      `    """${operation}(${left}, ${right}) is ${expected}."""`,
      `    assert _calc().${operation}(${left}, ${right}) == ${expected}`,
      "",
    );
  });
  return lines.join("\n");
}

const mulTests = soundTests("mul", [
  [3, 4, 12],
  [0, 9, 0],
  [-2, 5, -10],
]);
const subTests = soundTests("sub", [
  [9, 4, 5],
  [0, 3, -3],
  [-1, -1, 0],
]);
/** Every check exercises `add`, which already exists: all pass on the untouched repository. */
const weakTests = soundTests("add", [
  [1, 2, 3],
  [0, 0, 0],
  [-1, 1, 0],
]);

async function serve(turns: ScriptedReply[]): Promise<ScriptedServer> {
  const server = await startScriptedServer({ script: { turns } });
  servers.push(server);
  return server;
}

async function generate(server: ScriptedServer, out: string, extra: string[] = []) {
  return runInProcess(
    [
      "bench",
      "generate",
      "--skill",
      skill,
      "--repo",
      `${repository}@${commit}`,
      "--out",
      out,
      "--model",
      "anthropic:claude-haiku-4-5",
      "--min-tests",
      "3",
      "--json",
      ...extra,
    ],
    {
      cwd: scratch,
      env: {
        ...process.env,
        ANTHROPIC_API_KEY: apiKey,
        ANTHROPIC_BASE_URL: server.url,
        SKILLSMITH_CACHE_DIR: join(scratch, "cache"),
      },
    },
  );
}

interface Summary {
  requirements: number;
  requirementRounds: number;
  weak: number;
  valid: boolean;
  verifiers: {
    requirement: string;
    rounds: number;
    weak: boolean;
    tests: number;
    findings: string[];
  }[];
  usage: Record<string, { inputTokens: number; outputTokens: number }>;
}

describe("bench generate", () => {
  it.skipIf(!hasPytest)(
    "writes a suite that validateSuite accepts, with four-field requirements and verifiers",
    async () => {
      const server = await serve([
        answer({ requirements: [mulRequirement, subRequirement] }),
        answer({ fileName: "test_mul.py", content: mulTests }),
        answer({ fileName: "test_sub.py", content: subTests }),
      ]);
      const out = join(scratch, "suite-full");
      const run = await generate(server, out, ["--requirements", "2"]);
      expect(run.stderr).not.toMatch(/error/i);
      expect(run.code).toBe(0);
      const summary = JSON.parse(run.stdout) as Summary;
      expect(summary.requirements).toBe(2);
      expect(summary.weak).toBe(0);
      expect(summary.valid).toBe(true);
      expect(
        summary.verifiers.map((verifier) => [
          verifier.requirement,
          verifier.tests,
          verifier.rounds,
        ]),
      ).toEqual([
        ["mul", 3, 1],
        ["sub", 3, 1],
      ]);
      // Three scripted answers of 100 in / 40 out: one for the requirement engineer, two tests.
      expect(summary.usage["requirement-engineer"]).toMatchObject({
        inputTokens: 100,
        outputTokens: 40,
      });
      expect(summary.usage["test-engineer"]).toMatchObject({ inputTokens: 200, outputTokens: 80 });
      expect(server.requests).toHaveLength(3);

      const validation = await validateSuite(out);
      expect(validation.problems.filter((problem) => problem.severity === "error")).toEqual([]);
      const loaded = validation.suite;
      expect(loaded?.skills.map((entry) => entry.requirements.map((item) => item.id))).toEqual([
        ["mul", "sub"],
      ]);
      const skillRoot = join(out, "skills", "arithmetic-care");
      const markdown = await readFile(
        join(skillRoot, "requirements", "mul", "requirement.md"),
        "utf8",
      );
      const parsed = parseRequirementMarkdown("mul", markdown);
      expect(parsed).toMatchObject({
        requirement: {
          requirement: expect.stringContaining("mul(a, b)"),
          fileOperations: ["calc.py"],
          acceptanceCriteria: ["calc.mul returns the expected value for integers and floats"],
        },
      });
      expect(
        await readFile(join(skillRoot, "requirements", "mul", "verifier", "test_mul.py"), "utf8"),
      ).toBe(mulTests);
      expect(
        await readFile(join(skillRoot, "agent-skills", "arithmetic-care", "SKILL.md"), "utf8"),
      ).toContain("# Arithmetic care");
      expect(await readFile(join(skillRoot, "skill.yaml"), "utf8")).toContain(commit);
    },
    // Two requirements, each verifier checked by two pytest runs: past 120 s at load 35 with
    // two busy loops.
    300_000,
  );

  it.skipIf(!hasPytest)(
    "flags a verifier whose checks already pass on the untouched repository and regenerates it with the findings",
    async () => {
      const server = await serve([
        answer({ requirements: [mulRequirement] }),
        answer({ fileName: "test_mul.py", content: weakTests }),
        answer({ fileName: "test_mul.py", content: mulTests }),
      ]);
      const out = join(scratch, "suite-weak");
      const run = await generate(server, out, ["--requirements", "1"]);
      expect(run.code).toBe(0);
      const summary = JSON.parse(run.stdout) as Summary;
      expect(server.requests).toHaveLength(3);
      const second = server.requests[2]?.lastUserMessage ?? "";
      expect(second).toContain("already pass on the untouched repository");
      expect(second).toContain("test_add_0");
      expect(server.requests[1]?.lastUserMessage ?? "").not.toContain("already pass");
      expect(summary.verifiers[0]).toMatchObject({ requirement: "mul", rounds: 2, weak: false });
      const written = await readFile(
        join(out, "skills", "arithmetic-care", "requirements", "mul", "verifier", "test_mul.py"),
        "utf8",
      );
      expect(written).toBe(mulTests);
    },
  );

  it.skipIf(!hasPytest)("reports a verifier that stays weak after the last round", async () => {
    const server = await serve([
      answer({ requirements: [mulRequirement] }),
      answer({ fileName: "test_mul.py", content: weakTests }),
    ]);
    const out = join(scratch, "suite-still-weak");
    const run = await generate(server, out, ["--requirements", "1", "--max-rounds", "0"]);
    expect(run.code).toBe(1);
    const summary = JSON.parse(run.stdout) as Summary;
    expect(summary.weak).toBe(1);
    expect(summary.verifiers[0]?.findings.join("\n")).toContain("3 check(s) already pass");
    const verifierYaml = await readFile(
      join(out, "skills", "arithmetic-care", "requirements", "mul", "verifier.yaml"),
      "utf8",
    );
    expect(verifierYaml).toContain("weak: true");
  });

  it.skipIf(!hasPytest)(
    "re-asks on duplicate requirements, then rejects a thin test file (too few tests, no docstrings) and re-asks",
    async () => {
      const duplicate = {
        ...mulRequirement,
        id: "mul-again",
        requirement: "add a function MUL(a, b) to calc.py!",
      };
      const thin = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n";
      const server = await serve([
        answer({ requirements: [mulRequirement, duplicate] }),
        answer({ requirements: [mulRequirement] }),
        answer({ fileName: "test_mul.py", content: thin }),
        answer({ fileName: "test_mul.py", content: mulTests }),
      ]);
      const run = await generate(server, join(scratch, "suite-reasked"), ["--requirements", "1"]);
      expect(run.code).toBe(0);
      expect(server.requests).toHaveLength(4);
      expect(server.requests[0]?.lastUserMessage ?? "").not.toContain("duplicates");
      expect(server.requests[1]?.lastUserMessage ?? "").toContain(
        'requirement "mul-again" duplicates requirement "mul"',
      );
      const testReask = server.requests[3]?.lastUserMessage ?? "";
      expect(testReask).toContain("1 test functions; at least 3 are required");
      expect(testReask).toContain("tests without a docstring: test_mul");
      const summary = JSON.parse(run.stdout) as Summary;
      expect(summary.requirementRounds).toBe(2);
      expect(summary.verifiers).toEqual([
        expect.objectContaining({ requirement: "mul", rounds: 2, weak: false, tests: 3 }),
      ]);
    },
  );

  it("exits 2 naming --repo when the commit is missing", async () => {
    const run = await runInProcess(
      [
        "bench",
        "generate",
        "--skill",
        skill,
        "--repo",
        repository,
        "--out",
        join(scratch, "suite-bad"),
        "--model",
        "anthropic:claude-haiku-4-5",
      ],
      { cwd: scratch, env: { ...process.env, SKILLSMITH_CACHE_DIR: join(scratch, "cache") } },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--repo");
    expect(run.stderr).toContain("@<commit>");
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
