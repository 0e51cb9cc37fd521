import { describe, expect, it } from "vitest";
import { type FamilyTask, visibleView } from "./family.js";
import type { PoolEntry } from "./pool.js";
import { retrievalMethodOf, retrieve, retrieveEntries } from "./retrieval.js";

const family = { name: "demo", visibleFields: ["instruction"], hiddenFields: ["tests"] };

function entry(taskId: string, instruction: string): PoolEntry {
  return {
    schema: 1,
    family: "demo",
    taskId,
    split: "train",
    model: "m",
    visible: { instruction },
    solverOutput: "",
    outcome: { score: 1, passed: 1, total: 1, flags: [] },
    evaluatorSignals: { checks: [] },
    usage: { inputTokens: 0, outputTokens: 0 },
    createdAt: "2026-01-01T00:00:00Z",
  };
}

const target: FamilyTask = {
  id: "target",
  fields: { instruction: "convert a roman numeral to an integer" },
  hidden: { tests: "roman numeral integer roman numeral integer" },
};

describe("BM25 retrieval", () => {
  const pool = [
    entry("dates", "add business days to a date"),
    entry("roman-back", "convert an integer to a roman numeral"),
    entry("binary", "convert a binary string to an integer"),
    entry("target", "convert a roman numeral to an integer"),
    entry("words", "reverse the words of a text"),
  ];

  it("ranks by shared rare terms, returns k hits and never the target's own entry", () => {
    const { record, entries } = retrieve(visibleView(family, target), pool, { k: 2 });
    expect(record.method).toBe("bm25");
    expect(record.k).toBe(2);
    // "roman" and "numeral" occur in one other document, "integer" in two: roman-back first.
    expect(entries.map((each) => each.taskId)).toEqual(["roman-back", "binary"]);
    expect(record.hits[0]?.score).toBeGreaterThan(
      record.hits[1]?.score ?? Number.POSITIVE_INFINITY,
    );
  });

  it("builds its query from visible fields only", () => {
    // A task whose hidden tests mention "business" must not pull the dates entry up.
    const tricky: FamilyTask = {
      id: "x",
      fields: { instruction: "reverse words" },
      hidden: { tests: "business business days date" },
    };
    const { entries } = retrieve(visibleView(family, tricky), pool, { k: 1 });
    expect(entries.map((each) => each.taskId)).toEqual(["words"]);
  });

  it("records bm25 when no embedding model is configured", async () => {
    expect(retrievalMethodOf({})).toBe("bm25");
    const { record } = await retrieveEntries(
      visibleView(family, target),
      pool,
      { k: 1 },
      undefined,
    );
    expect(record.method).toBe("bm25");
    expect(record.hits.map((hit) => hit.taskId)).toEqual(["roman-back"]);
  });
});

describe("BM25 retrieval with the project's one tokenizer", () => {
  it("finds non-Latin and mixed-script text, which a [a-z0-9] tokenizer cannot see", () => {
    const pool = [
      entry("a", "把罗马数字转换为整数"),
      entry("b", "用grid布局居中"),
      entry("c", "sort a list of numbers"),
    ];
    const mixed: FamilyTask = { id: "t", fields: { instruction: "grid 居中" }, hidden: {} };
    const { record } = retrieve(visibleView(family, mixed), pool, { k: 1 });
    expect(record.hits[0]?.taskId).toBe("b");
    expect(record.hits[0]?.score).toBeGreaterThan(0);
  });

  it("keeps k hits, the unmatched after the matched, by task id", () => {
    const pool = [entry("z", "alpha"), entry("m", "beta"), entry("a", "gamma")];
    const query: FamilyTask = { id: "t", fields: { instruction: "beta" }, hidden: {} };
    const { record } = retrieve(visibleView(family, query), pool, { k: 3 });
    expect(record.hits.map((hit) => [hit.taskId, hit.score === 0])).toEqual([
      ["m", false],
      ["a", true],
      ["z", true],
    ]);
  });
});
