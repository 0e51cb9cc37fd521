import { describe, expect, it } from "vitest";
import { type CriticCase, clipText, renderCriticCases } from "./critic-input.js";
import type { FamilyTask } from "./family.js";
import type { PoolEntry } from "./pool.js";
import type { TaskRunRecord } from "./run.js";
import { criticInputLimits } from "./settings.js";

const secret = "zq-critic-secret-9034";
const family = { name: "demo", visibleFields: ["prompt"], hiddenFields: ["test"] };

const task = (id: string, prompt: string): FamilyTask => ({
  id,
  fields: { prompt },
  hidden: { test: `assert ${secret}` },
});

function poolEntry(taskId: string, answer: string): PoolEntry {
  return {
    schema: 2,
    family: "demo",
    taskId,
    split: "train",
    model: "anthropic:claude-haiku-4-5",
    visible: { prompt: `def ${taskId.replaceAll("-", "_")}(): ...` },
    solverOutput: answer,
    outcome: { score: 1, passed: 1, total: 1, flags: [] },
    // Evaluator signals of pool entries are never rendered: a secret here must not show.
    evaluatorSignals: { checks: [{ name: `test_${secret}`, status: "pass" }] },
    usage: { inputTokens: 0, outputTokens: 0 },
    createdAt: "2026-01-01T00:00:00Z",
  };
}

function run(overrides: Partial<TaskRunRecord> & { taskId: string }): TaskRunRecord {
  return {
    method: "synth",
    libraryVersion: "v1",
    score: 0,
    passed: 0,
    total: 1,
    flags: [],
    checks: [{ name: "hidden check", status: "fail" }],
    feedback: "an assertion of the hidden check failed",
    solverOutput: "def f():\n    return 1\n",
    retrieval: {
      method: "bm25",
      k: 3,
      hits: [
        { taskId: "near", score: 2.5 },
        { taskId: "far", score: 0.5 },
      ],
    },
    skill: { markdown: "---\nname: s\n---\n## Approach\nDo it.\n", valid: true, problems: [] },
    fallback: false,
    usage: {},
    ...overrides,
  };
}

describe("clipText", () => {
  it("keeps short texts and cuts long ones to the limit, head and tail kept, marked", () => {
    expect(clipText("abc", 10)).toEqual({ text: "abc", cut: false });
    const long = `${"h".repeat(600)}${"m".repeat(1_000)}${"t".repeat(400)}`;
    const { text, cut } = clipText(long, 300);
    expect(cut).toBe(true);
    expect(text.length).toBeLessThanOrEqual(300);
    // The marker for a 4-digit count is 31 characters: "\n[... NNNN characters cut ...]\n";
    // room 300 − 31 = 269 → head ⌈269·2/3⌉ = 180, tail 89, cut 2000 − 269 = 1731.
    expect(text).toBe(`${"h".repeat(180)}\n[... 1731 characters cut ...]\n${"t".repeat(89)}`);
    expect(clipText(long, 300)).toEqual({ text, cut }); // deterministic
  });
});

describe("renderCriticCases", () => {
  const tasks = new Map([["target", task("target", "def target(): ...")]]);
  const pool = [
    poolEntry("near", "def near():\n    return 'NEAR-ANSWER'\n"),
    poolEntry("far", "def far():\n    return 'FAR-ANSWER'\n"),
  ];

  it("shows per run the signals, the retrieved evidence text, the skill, steps and answer", () => {
    const cases: CriticCase[] = [
      {
        taskId: "target",
        kind: "regression",
        previous: run({
          taskId: "target",
          score: 1,
          passed: 1,
          checks: [{ name: "hidden check", status: "pass" }],
          feedback: "the hidden check passed",
          solverOutput: "PREVIOUS-ANSWER",
        }),
        current: run({
          taskId: "target",
          flags: ["timeout"],
          feedback: "the task ran out of its 10 s",
          solverOutput: "CURRENT-ANSWER",
          steps: ["act: run_python (10 characters)", "observe: exit code: 0"],
        }),
      },
    ];
    const input = renderCriticCases(family, tasks, cases, pool);
    const text = input.text;
    expect(text).toContain("## Case target (regression)");
    expect(text).toContain("prompt:\ndef target(): ...");
    // Evaluation signals of both runs.
    expect(text).toContain(
      "Evaluation signals: score 1.00 (1/1 checks passed); flags: none; checks: hidden check: pass; feedback: the hidden check passed",
    );
    expect(text).toContain(
      "flags: timeout; checks: hidden check: fail; feedback: the task ran out of its 10 s",
    );
    // The retrieved evidence as text (the answers of the hits), once: the runs share their hits.
    expect(text).toContain("Retrieved: bm25, top 3: near (2.5), far (0.5)");
    expect(text.split("NEAR-ANSWER")).toHaveLength(2);
    expect(text).toContain("FAR-ANSWER");
    expect(text).toContain("(the same entries as the current run's)");
    // Paired skills and trajectories.
    expect(text.split("## Approach\nDo it.")).toHaveLength(3);
    expect(text).toContain("Solver steps:\nact: run_python (10 characters)");
    expect(text).toContain("PREVIOUS-ANSWER");
    expect(text).toContain("CURRENT-ANSWER");
    // Nothing evaluator-only: not the hidden test, not the pool's evaluator signals.
    expect(text).not.toContain(secret);
    expect(input).toMatchObject({ truncations: [], compactCases: [], omittedCases: [] });
    expect(input.characters).toBe(text.length);
    expect(input.limits).toEqual(criticInputLimits);
  });

  it("cuts long texts to their limits and records each cut", () => {
    const longSkill = `---\nname: s\n---\n${"x".repeat(5_000)}`;
    const cases: CriticCase[] = [
      {
        taskId: "target",
        kind: "persistent-failure",
        previous: run({
          taskId: "target",
          skill: { markdown: longSkill, valid: true, problems: [] },
        }),
        current: run({ taskId: "target", solverOutput: "y".repeat(9_000) }),
      },
    ];
    const input = renderCriticCases(family, tasks, cases, pool);
    expect(input.truncations).toEqual([
      {
        taskId: "target",
        part: "previous.skill",
        originalCharacters: longSkill.trimEnd().length,
        keptCharacters: criticInputLimits.skillCharacters,
      },
      {
        taskId: "target",
        part: "current.answer",
        originalCharacters: 9_000,
        keptCharacters: criticInputLimits.answerCharacters,
      },
    ]);
    expect(input.text).toContain("characters cut ...]");
    expect(input.text).not.toContain("y".repeat(criticInputLimits.answerCharacters));
  });

  it("keeps all cases within the bound: signals only for one that would pass it, then none", () => {
    const many = new Map(
      ["a", "b", "c"].map((id) => [id, task(id, `def ${id}(): ... ${"p".repeat(2_000)}`)]),
    );
    const cases: CriticCase[] = ["a", "b", "c"].map((id) => ({
      taskId: id,
      kind: "persistent-failure",
      previous: run({ taskId: id }),
      current: run({ taskId: id }),
    }));
    const one = renderCriticCases(family, many, cases.slice(0, 1), pool);
    // Room for one full case and a compact one, not for a third of any kind.
    const compactLength = renderCriticCases(family, many, cases.slice(1, 2), pool, {
      ...criticInputLimits,
      casesCharacters: 400,
    }).characters;
    const limits = {
      ...criticInputLimits,
      casesCharacters: one.characters + 2 + compactLength + 1,
    };
    const input = renderCriticCases(family, many, cases, pool, limits);
    expect(input.characters).toBeLessThanOrEqual(limits.casesCharacters);
    expect(input.compactCases).toEqual(["b"]);
    expect(input.omittedCases).toEqual(["c"]);
    expect(input.text).toContain("## Case a (persistent-failure)\n\n### Target");
    expect(input.text).toContain(
      "## Case b (persistent-failure)\nPrevious run: score 0.00 (0/1 checks passed)",
    );
    expect(input.text).not.toContain("## Case c");
    expect(input.truncations.find((each) => each.part === "case")?.taskId).toBe("b");
  });
});
