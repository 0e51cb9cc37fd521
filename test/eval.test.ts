/**
 * `skillsmith eval <skill> --repo <path>@<commit> --agent builtin --model …` end to end, offline:
 * the scripted model server writes the requirements and the verifiers (generation) and plays the
 * builtin agent's model; the git repository, the generation's checks on the untouched checkout,
 * bubblewrap, pytest, the runner and the report are real. The agent writes a correct `calc.py`
 * only when the skill is offered to it (its `load_skill` tool), a wrong one otherwise.
 *
 * First call: a budget that stops after two of the four runs (incomplete, exit 1). Second call,
 * same command without the budget: the suite is reused (no generation request) and only the two
 * missing runs execute. Third call: nothing runs, the verdict is unchanged (no double count).
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScriptedReply } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { runInProcess, writeTree } from "./support/cli.js";
import { gitSync } from "./support/git.js";
import { hasPytest, usableBubblewrap } from "./support/sandboxes.js";

const bubblewrap = await usableBubblewrap();

let scratch: string;
let repository: string;
let commit: string;
let skill: string;
let server: ScriptedServer | undefined;

/** Generation calls are cheap; every agent request is 100k input tokens: $0.10 at haiku's $1/M. */
const GENERATION_USAGE = { inputTokens: 100, outputTokens: 40 };
const AGENT_USAGE = { inputTokens: 100_000, outputTokens: 0 };

function tests(operation: string, cases: [number, number, number][]): string {
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

function requirement(id: string, operation: string) {
  return {
    id,
    background: "calc.py holds the arithmetic helpers of this project.",
    requirement: `Add a function ${operation}(a, b) to calc.py.`,
    fileOperations: ["calc.py"],
    acceptanceCriteria: [`calc.${operation} returns the expected value for integers`],
  };
}

const answer = (value: unknown): ScriptedReply => ({
  text: JSON.stringify(value),
  usage: GENERATION_USAGE,
});
const GOOD =
  "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef sub(a, b):\n    return a - b\n";
// Wrong everywhere the verifiers look (each case below fails with a + b).
const BAD =
  "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n";

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-eval-"));
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
    "SKILL.md":
      "---\nname: arithmetic-care\ndescription: How to add arithmetic operations to small Python modules.\n---\n\n# Arithmetic care\n\nImplement the operation exactly; check it against worked examples before finishing.\n",
  });
  server = await startScriptedServer({
    script: {
      rules: [
        // The builtin agent: after its write, it is done.
        {
          match: { toolOffered: "write_file", toolResult: "[\\s\\S]*" },
          reply: { text: "Done.", usage: AGENT_USAGE },
        },
        {
          match: { toolOffered: "load_skill" },
          reply: {
            toolCalls: [{ name: "write_file", input: { path: "calc.py", content: GOOD } }],
            usage: AGENT_USAGE,
          },
        },
        {
          match: { toolOffered: "write_file" },
          reply: {
            toolCalls: [{ name: "write_file", input: { path: "calc.py", content: BAD } }],
            usage: AGENT_USAGE,
          },
        },
      ],
      // Generation: the requirement engineer, then the test engineer per requirement.
      turns: [
        answer({ requirements: [requirement("mul", "mul"), requirement("sub", "sub")] }),
        answer({
          fileName: "test_mul.py",
          content: tests("mul", [
            [3, 4, 12],
            [0, 9, 0],
            [-2, 5, -10],
          ]),
        }),
        answer({
          fileName: "test_sub.py",
          content: tests("sub", [
            [9, 4, 5],
            [0, 3, -3],
            [-1, -1, 0],
          ]),
        }),
      ],
      fallback: { text: "(script exhausted)" },
    },
  });
});

afterAll(async () => {
  await server?.close();
  await rm(scratch, { recursive: true, force: true });
});

interface EvalJson {
  suite: { source: string; requirements: number };
  check: { valid: boolean; weakVerifiers: string[] };
  estimate: { totalUsd: number | null; runs: { missing: number; stored: number; basis: string } };
  run: { total: number; alreadyDone: number; executed: number; stoppedByBudget: boolean };
  verdict?: {
    class: string | null;
    delta: number | null;
    p: number | null;
    n: number;
    evidence: string[];
  };
  complete: boolean;
  costUsd: { total: number; runs: number };
  report: { html: string; json: string };
}

async function evaluate(extra: string[] = []) {
  const run = await runInProcess(
    [
      "eval",
      skill,
      "--repo",
      `${repository}@${commit}`,
      "--agent",
      "builtin",
      "--model",
      "anthropic:claude-haiku-4-5",
      "--requirements",
      "2",
      "--min-tests",
      "3",
      "--concurrency",
      "1",
      "--out",
      join(scratch, "work"),
      "--json",
      ...extra,
    ],
    {
      cwd: scratch,
      env: {
        ...process.env,
        ANTHROPIC_API_KEY: "sk-ant-api03-TESTKEY-eval-1234567890",
        ANTHROPIC_BASE_URL: server?.url ?? "",
        SKILLSMITH_CACHE_DIR: join(scratch, "cache"),
      },
    },
  );
  // An empty or partial stdout is a failed command: show what it printed on stderr.
  if (!run.stdout.trim().startsWith("{")) {
    throw new Error(`eval printed no JSON (exit ${run.code}); stderr:\n${run.stderr}`);
  }
  return { ...run, result: JSON.parse(run.stdout) as EvalJson };
}

describe("skillsmith eval", () => {
  it.skipIf(!hasPytest || bubblewrap === undefined)(
    "generates, checks, runs, reports and gives the verdict; the same command continues without double counting",
    async () => {
      const first = await evaluate(["--budget-usd", "0.3"]);
      expect(first.result.suite).toEqual({
        source: "generated",
        requirements: 2,
        path: join(scratch, "work", "suite"),
      });
      expect(first.result.check.valid).toBe(true);
      // The estimate came before any spending, on stderr; 4 runs at the assumed tokens.
      expect(first.stderr).toMatch(/estimated cost \$[0-9.]+.*4 runs to do \(0 stored\)/);
      expect(first.result.estimate.runs).toMatchObject({ missing: 4, stored: 0, basis: "assumed" });
      // $0.20 per run (two agent requests): run 1 leaves the budget open, run 2 reaches it.
      expect(first.result.run.executed).toBe(2);
      expect(first.result.run.stoppedByBudget).toBe(true);
      expect(first.result.complete).toBe(false);
      expect(first.code).toBe(1);
      const generationRequests = server?.requests.filter(
        (request) => !JSON.stringify(request.body).includes("write_file"),
      ).length;
      expect(generationRequests).toBe(3);

      const second = await evaluate();
      expect(second.result.suite.source).toBe("reused");
      expect(second.result.estimate.runs).toMatchObject({
        missing: 2,
        stored: 2,
        basis: "measured",
      });
      expect(second.result.run).toMatchObject({ total: 4, alreadyDone: 2, executed: 2 });
      expect(second.result.complete).toBe(true);
      // No generation request in the second call: still three.
      expect(
        server?.requests.filter((request) => !JSON.stringify(request.body).includes("write_file"))
          .length,
      ).toBe(3);
      // By hand: with the skill every check passes (1), without none does (0): d_i = +100 for both
      // requirements, Δ = 100; the exact sign-flip test over 2 deltas has p = 2/4 = 0.5 → ineffective.
      const verdict = second.result.verdict;
      expect(verdict).toMatchObject({ class: "ineffective", delta: 100, p: 0.5, n: 2 });
      expect(verdict?.evidence[0]).toBe("mul: without 0.0%, with 100.0%, Δ 100.0");
      // By hand: 2^(1−5) = 0.0625 ≥ 0.05 but 2^(1−6) = 0.031 < 0.05, so six non-zero deltas are needed.
      expect(verdict?.evidence).toContain(
        "2 non-zero deltas of 2: the smallest attainable p is 0.500 ≥ α = 0.05, so no effect could be detected; at least 6 requirements with a non-zero delta are needed",
      );
      expect(second.code).toBe(0);
      expect(second.result.costUsd.runs).toBeCloseTo(4 * 0.2, 10);
      expect(existsSync(second.result.report.html)).toBe(true);
      expect(await readFile(second.result.report.html, "utf8")).toContain("arithmetic-care");

      const third = await evaluate();
      expect(third.result.run).toMatchObject({ total: 4, alreadyDone: 4, executed: 0 });
      expect(third.result.verdict).toMatchObject({
        class: "ineffective",
        delta: 100,
        p: 0.5,
        n: 2,
      });
      expect(third.result.costUsd.runs).toBeCloseTo(4 * 0.2, 10);
    },
    300_000,
  );

  it("refuses a work folder holding another skill's evaluation (exit 2, no stack trace)", async () => {
    const other = join(scratch, "other-skill");
    await writeTree(other, {
      "SKILL.md": "---\nname: other-skill\ndescription: Something else entirely.\n---\n\nBody.\n",
    });
    await writeTree(join(scratch, "taken"), {
      "eval.json": JSON.stringify({
        format: "skillsmith-eval/1",
        skill: { path: "/x", digest: "0" },
        repository,
        commit,
        suite: { path: "/x", source: "generated" },
        generationCostUsd: 0,
      }),
    });
    const run = await runInProcess(
      [
        "eval",
        other,
        "--repo",
        `${repository}@${commit}`,
        "--agent",
        "builtin",
        "--model",
        "anthropic:claude-haiku-4-5",
        "--out",
        join(scratch, "taken"),
      ],
      {
        cwd: scratch,
        env: { ...process.env, ANTHROPIC_API_KEY: "sk-ant-api03-TESTKEY-eval-1234567890" },
      },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("the skill's files changed");
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
