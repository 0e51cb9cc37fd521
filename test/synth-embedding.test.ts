/**
 * Embedding retrieval against the scripted server's `/v1/embeddings` (real HTTP; its "model" is
 * a bag of words hashed into buckets, so texts sharing words come out similar): only visible
 * fields are embedded, pool vectors are embedded once, the retrieved entries are the ones sharing
 * most words with the target, and the CLI records `embedding:<model>` and counts its tokens.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { createEmbeddingClient } from "../src/model/embedding.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import {
  defaultBuiltinDirectory,
  EmbeddingIndex,
  type FamilyTask,
  type PoolEntry,
  retrieveByEmbedding,
  visibleView,
} from "../src/synth/index.js";
import { costRow, hasPytest, runSynthCli } from "./support/synth.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const cleanups = cleanupsAfterEach();
const temporaryDirectory = () => temporaryDirectoryIn(cleanups, "skillsmith-synth-embedding-");

const secret = "zq-embedding-secret-7310";

function entry(taskId: string, visible: Record<string, string>): PoolEntry {
  return {
    schema: 1,
    family: "demo",
    taskId,
    split: "train",
    model: "anthropic:claude-haiku-4-5",
    visible,
    solverOutput: "def f():\n    pass\n",
    outcome: { score: 0, passed: 0, total: 1, flags: [] },
    evaluatorSignals: { checks: [{ name: `test_${taskId}`, status: "fail" }] },
    usage: { inputTokens: 0, outputTokens: 0 },
    createdAt: "2026-01-01T00:00:00Z",
  };
}

function embeddedTexts(server: ScriptedServer): string[][] {
  return server.requests
    .filter((request) => request.api === "openai-embeddings")
    .map((request) => (request.body as { input: string[] }).input);
}

describe("retrieval by embedding (scripted /v1/embeddings)", () => {
  const family = { name: "demo", visibleFields: ["instruction"], hiddenFields: ["tests"] };
  // Hand reasoning (bag of words, cosine = shared words / (√|target| · √|entry|)); the target
  // has 5 distinct words {merge, sorted, lists, of, integers}:
  //   two-lists   {merge, two, sorted, lists}  3 shared → 3 / (√5·√4) = 0.670820
  //   sort-words  {sort, lists, of, words}     2 shared → 2 / (√5·√4) = 0.447214
  //   floats      {integers, and, floats}      1 shared → 1 / (√5·√3) = 0.258199
  //   dates, chart                              0 shared → 0
  // The hidden tests talk about dates and charts: if they leaked into the query, "dates" and
  // "chart" would move up.
  const pool = [
    entry("dates", { instruction: "parse dates from text" }),
    entry("two-lists", { instruction: "merge two sorted lists" }),
    entry("chart", { instruction: "render bar chart" }),
    entry("sort-words", { instruction: "sort lists of words" }),
    entry("floats", { instruction: "integers and floats" }),
  ];
  const target: FamilyTask = {
    id: "target",
    fields: { instruction: "merge sorted lists of integers" },
    hidden: { tests: `parse dates from text render bar chart dates chart ${secret}` },
  };

  it("ranks by shared visible words, embeds the pool once, sends nothing evaluator-only", async () => {
    // 4,096 buckets: the dozen words here land in distinct buckets, as the hand sums assume.
    const server = await startScriptedServer({ script: { embeddings: { dimensions: 4096 } } });
    cleanups.push(() => server.close());
    const client = createEmbeddingClient({
      spec: "openai:text-embedding-3-small",
      baseUrl: `${server.url}/v1`,
      apiKey: "test-key",
      env: {},
      config: {},
    });
    const index = new EmbeddingIndex(client);
    const { record, entries } = await retrieveByEmbedding(
      visibleView(family, target),
      pool,
      index,
      { k: 3 },
    );
    expect(record.method).toBe("embedding:openai:text-embedding-3-small");
    expect(entries.map((each) => each.taskId)).toEqual(["two-lists", "sort-words", "floats"]);
    expect(record.hits.map((hit) => hit.score)).toEqual([0.67082, 0.447214, 0.258199]);

    // A second target reuses the pool's vectors: only its own text is sent.
    const second: FamilyTask = {
      id: "second",
      fields: { instruction: "render a chart" },
      hidden: { tests: secret },
    };
    const again = await retrieveByEmbedding(visibleView(family, second), pool, index, { k: 1 });
    expect(again.entries.map((each) => each.taskId)).toEqual(["chart"]);
    const sent = embeddedTexts(server);
    expect(sent).toEqual([
      ["merge sorted lists of integers", ...pool.map((each) => each.visible.instruction)],
      ["render a chart"],
    ]);
    // Words per text, as the scripted server counts tokens: 5 + (4+4+3+4+3) + 3.
    expect(index.inputTokens).toBe(26);
    expect(index.calls).toBe(2);
    for (const request of server.requests)
      expect(JSON.stringify(request.body)).not.toContain(secret);
  });
});

describe.skipIf(!hasPytest)("synth run --embedding-model (needs python3 with pytest)", () => {
  it("records embedding:<model> as the retrieval, counts its tokens, and follows flag > env > config", async () => {
    const server = await startScriptedServer({
      script: {
        embeddings: { dimensions: 4096 },
        rules: [
          {
            match: { lastUserMessage: "def digit_sum" },
            reply: {
              text: "```python\ndef digit_sum(number):\n    raise NotImplementedError\n```",
              usage: { inputTokens: 100, outputTokens: 10 },
            },
          },
        ],
        fallback: { text: "unexpected request" },
      },
    });
    cleanups.push(() => server.close());
    const cwd = await temporaryDirectory();
    // One task (digit-sum) whose hidden tests carry the secret.
    const shipped = parseYaml(
      await readFile(join(defaultBuiltinDirectory(), "tasks.yaml"), "utf8"),
    ) as { tasks: { id: string; tests: string }[] };
    const task = shipped.tasks.find((each) => each.id === "digit-sum");
    if (task === undefined) throw new Error("no digit-sum");
    await writeFile(
      join(cwd, "tasks.yaml"),
      stringifyYaml({
        family: "builtin",
        version: 1,
        tasks: [{ ...task, tests: `${task.tests}\n# ${secret}\n` }],
      }),
    );
    const pool = [
      { ...entry("add-numbers", { instruction: "add two numbers" }), family: "builtin" },
      { ...entry("digits", { instruction: "sum the digits of a number" }), family: "builtin" },
    ];
    await writeFile(join(cwd, "pool.jsonl"), pool.map((each) => JSON.stringify(each)).join("\n"));
    const env = {
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: server.url,
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: `${server.url}/v1`,
    };
    // The split is over the one task: with train share ½ rounded up it is in train.
    const common = [
      "--family-dir",
      cwd,
      "--split",
      "train",
      "--pool",
      join(cwd, "pool.jsonl"),
      "--model",
      "anthropic:claude-haiku-4-5",
      "--unsafe-no-sandbox",
      "--method",
      "rag",
    ];
    const logPath = join(cwd, "run.jsonl");
    const run = await runSynthCli(
      [
        "synth",
        "run",
        "--embedding-model",
        "openai:text-embedding-3-small",
        "--log",
        logPath,
        ...common,
      ],
      { ...env, SKILLSMITH_EMBEDDING_MODEL: "openai:from-environment" },
      cwd,
    );
    expect(run.stdout).toContain("retrieval embedding:openai:text-embedding-3-small");
    expect(run.stderr).toContain(
      "retrieval: embedding:openai:text-embedding-3-small (from the flag)",
    );
    const [record] = (await readFile(logPath, "utf8"))
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as {
            method: string;
            retrieval?: { method: string; hits: { taskId: string }[] };
          },
      )
      .filter((each) => each.method === "rag");
    expect(record?.retrieval?.method).toBe("embedding:openai:text-embedding-3-small");
    // "sum the digits of a number" shares sum, the, digits, of, number with the target; "add two
    // numbers" shares nothing ("numbers" is not "number").
    expect(record?.retrieval?.hits.map((hit) => hit.taskId)).toEqual(["digits", "add-numbers"]);
    // Embedded words: target 13 (instruction) + 6 (signature) + 2 (entry point) + 4 (libraries)
    // = 25, pool 3 + 6 = 9: 34 tokens. rag = (100 + 2·10 + 34) / (100 + 2·10) = 1.28.
    const rag = costRow(run.stdout, "rag");
    expect(rag.relative).toBe("1.28x");
    expect(rag.line).toContain("34/0");
    const sent = embeddedTexts(server).flat();
    expect(sent).toHaveLength(3);
    expect(sent.join("\n")).not.toContain(secret);
    expect(sent[0]).toContain("Return the sum of the decimal digits");

    // Without the flag the environment variable decides; without both, the config file.
    const fromEnvironment = await runSynthCli(
      ["synth", "run", ...common],
      { ...env, SKILLSMITH_EMBEDDING_MODEL: "openai:text-embedding-3-large" },
      cwd,
    );
    expect(fromEnvironment.stdout).toContain("retrieval embedding:openai:text-embedding-3-large");
    await writeFile(
      join(cwd, "skillsmith.config.json"),
      JSON.stringify({ synth: { embeddingModel: "openai:from-config" } }),
    );
    const fromConfig = await runSynthCli(["synth", "run", ...common], env, cwd);
    expect(fromConfig.stderr).toContain(
      "retrieval: embedding:openai:from-config (from the config)",
    );
    await rm(join(cwd, "skillsmith.config.json"));
    const bm25 = await runSynthCli(["synth", "run", ...common], env, cwd);
    expect(bm25.stdout).toContain("retrieval bm25");
    for (const request of server.requests)
      expect(JSON.stringify(request.body)).not.toContain(secret);
  });
});
