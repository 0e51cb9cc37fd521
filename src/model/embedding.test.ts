import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UnsupportedError } from "../core/errors.js";
import { cosineSimilarity, createEmbeddingClient } from "./embedding.js";
import { type ScriptedServer, scriptedEmbedding, startScriptedServer } from "./scripted/index.js";

describe("cosineSimilarity", () => {
  it("is 1 for parallel, 0 for orthogonal, -1 for opposite vectors", () => {
    expect(cosineSimilarity([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(cosineSimilarity([1, 0], [0, 5])).toBe(0);
    expect(cosineSimilarity([1, -1], [-1, 1])).toBeCloseTo(-1, 12);
    // 3-4-5 triangle: cos = 3/5.
    expect(cosineSimilarity([3, 4], [1, 0])).toBeCloseTo(0.6, 12);
  });

  it("is 0 rather than NaN when a vector has no length", () => {
    expect(cosineSimilarity([0, 0], [1, 1])).toBe(0);
  });
});

describe("scriptedEmbedding", () => {
  it("gives texts with the same words the same unit vector, whatever the case and punctuation", () => {
    const left = scriptedEmbedding("Parse the CSV file!");
    const right = scriptedEmbedding("parse, the csv FILE");
    expect(left).toEqual(right);
    expect(Math.hypot(...left)).toBeCloseTo(1, 12);
  });

  it("ranks a text sharing more words higher", () => {
    const query = scriptedEmbedding("merge sorted lists");
    const close = scriptedEmbedding("merge two sorted lists into one");
    const far = scriptedEmbedding("render a bar chart");
    expect(cosineSimilarity(query, close)).toBeGreaterThan(cosineSimilarity(query, far));
  });

  it("is all zeros for a text without words", () => {
    expect(scriptedEmbedding("?!", 8)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });
});

describe("createEmbeddingClient against the scripted server", () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer({ script: { embeddings: { dimensions: 64 } } });
  });
  afterAll(async () => {
    await server.close();
  });

  it("embeds in input order across batches and records what was sent", async () => {
    const client = createEmbeddingClient({
      spec: "openai:text-embedding-3-small",
      baseUrl: `${server.url}/v1`,
      apiKey: "test-key",
      env: {},
      config: {},
      batchSize: 2,
    });
    const texts = ["alpha beta", "gamma", "alpha beta gamma delta", "epsilon"];
    const before = server.requests.length;
    const result = await client.embed(texts);
    expect(client.spec).toBe("openai:text-embedding-3-small");
    expect(result.vectors).toHaveLength(4);
    texts.forEach((text, index) => {
      const expected = scriptedEmbedding(text, 64);
      const actual = result.vectors[index] ?? [];
      expect(actual).toHaveLength(64);
      for (const [dimension, value] of actual.entries()) {
        expect(value).toBeCloseTo(expected[dimension] ?? 0, 6);
      }
    });
    // Batches of 2 → two requests; usage = word counts 2 + 1 + 4 + 1.
    const sent = server.requests.slice(before);
    expect(sent.map((request) => request.api)).toEqual(["openai-embeddings", "openai-embeddings"]);
    expect(sent.map((request) => (request.body as { input: string[] }).input)).toEqual([
      ["alpha beta", "gamma"],
      ["alpha beta gamma delta", "epsilon"],
    ]);
    expect(result.usage.inputTokens).toBe(8);
    // The key never lands in the record.
    expect(JSON.stringify(sent)).not.toContain("test-key");
  });

  it("takes the base URL from OPENAI_BASE_URL when no flag is given", async () => {
    const client = createEmbeddingClient({
      spec: "openai:text-embedding-3-small",
      env: { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" },
      config: {},
    });
    expect(client.settings.baseUrlSource).toBe("environment");
    const result = await client.embed(["one"]);
    expect(result.vectors).toHaveLength(1);
  });

  it("refuses an Anthropic spec with a typed unsupported error", () => {
    expect(() =>
      createEmbeddingClient({ spec: "anthropic:claude-haiku-4-5", env: {}, config: {} }),
    ).toThrow(UnsupportedError);
  });
});
