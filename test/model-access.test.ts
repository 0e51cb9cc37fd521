/**
 * Model access against the real scripted server over HTTP on 127.0.0.1: retries under injected
 * faults, the 50-call batch at 20% faults, the call cache and its modes, usage and cost, spec
 * parsing and configuration precedence.
 */
import { readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { streamText } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { InfrastructureError, InputError } from "../src/core/errors.js";
import { ModelCallCache } from "../src/model/cache.js";
import { ModelClient, type ModelClientOptions, ProviderLimits } from "../src/model/client.js";
import { loadModelConfig, resolveProviderSettings } from "../src/model/config.js";
import { CacheMissError, ModelOutputError } from "../src/model/errors.js";
import type { RetryOptions } from "../src/model/retry.js";
import type { Script } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { parseModelSpec } from "../src/model/spec.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const cleanups = cleanupsAfterEach();

async function serve(script: Script): Promise<ScriptedServer> {
  const server = await startScriptedServer({ script });
  cleanups.push(() => server.close());
  return server;
}

const temporaryDirectory = () => temporaryDirectoryIn(cleanups, "skillsmith-model-");

const anthropicKey = "sk-ant-api03-TESTKEY-do-not-store-1234567890";
const openaiKey = "sk-proj-TESTKEY-do-not-store-0987654321";

/** Retries without real waiting: delays are recorded, not slept. */
function fastRetry(delays: number[] = [], maxRetries = 3): RetryOptions {
  return {
    maxRetries,
    initialDelayMs: 1,
    maxDelayMs: 4,
    sleep: async (milliseconds) => {
      delays.push(milliseconds);
    },
  };
}

async function client(
  server: ScriptedServer,
  provider: "anthropic" | "openai" | "openai-compatible",
  extra: Partial<ModelClientOptions> = {},
): Promise<ModelClient> {
  const cwd = await temporaryDirectory();
  const spec =
    provider === "anthropic"
      ? "anthropic:claude-haiku-4-5"
      : provider === "openai"
        ? "openai:gpt-5-mini"
        : `openai-compatible:qwen3@${server.url}/v1`;
  const env =
    provider === "anthropic"
      ? { ANTHROPIC_API_KEY: anthropicKey, ANTHROPIC_BASE_URL: server.url }
      : { OPENAI_API_KEY: openaiKey, OPENAI_BASE_URL: `${server.url}/v1` };
  return new ModelClient({ spec, env, cwd, retry: fastRetry(), ...extra });
}

describe("retries", () => {
  for (const [fault, faults] of [
    ["429", { rate429: 1, retryAfterSeconds: 2 }],
    ["500", { rate500: 1 }],
    ["drop", { rateDrop: 1 }],
  ] as const) {
    it(`gives up after the retry budget on injected ${fault} and reports an infrastructure error`, async () => {
      const server = await serve({ faults, turns: [{ text: "never" }] });
      const delays: number[] = [];
      const model = await client(server, "anthropic", {
        retry: { ...fastRetry(delays, 2), maxRetryAfterMs: 60_000 },
      });
      const failure = await model.generateText({ role: "solver", prompt: "hi" }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(InfrastructureError);
      expect((failure as InfrastructureError).retryable).toBe(true);
      expect((failure as InfrastructureError).code).toBe("model.retries-exhausted");
      expect((failure as InfrastructureError).cause).toBeDefined();
      // One attempt plus two retries, every one of them faulted.
      expect(server.requests.map((request) => request.fault)).toEqual([fault, fault, fault]);
      expect(delays).toHaveLength(2);
      // Retry-After: 2 seconds outranks the millisecond backoff.
      if (fault === "429") expect(delays).toEqual([2000, 2000]);
      else for (const delay of delays) expect(delay).toBeLessThanOrEqual(4);
      expect(model.ledger.totals().calls).toBe(0);
    });
  }

  it("recovers when a later attempt is answered", async () => {
    // Seeded: the same fault pattern every run; half the requests fail.
    const server = await serve({
      faults: { rate500: 0.5, seed: 7 },
      fallback: { text: "finally" },
    });
    const model = await client(server, "openai", { retry: fastRetry([], 20) });
    for (let index = 0; index < 5; index += 1) {
      const result = await model.generateText({ role: "solver", prompt: `question ${index}` });
      expect(result.text).toBe("finally");
    }
    const answered = server.requests.filter((request) => request.fault === undefined);
    expect(answered).toHaveLength(5);
    expect(server.requests.length).toBeGreaterThan(5);
  });

  it("under 20% injected faults, a batch of 50 calls ends answered or as infrastructure errors", async () => {
    const server = await serve({
      faults: { rate429: 0.08, rate500: 0.06, rateDrop: 0.06, retryAfterSeconds: 0, seed: 2024 },
      fallback: { text: "answer" },
    });
    const model = await client(server, "anthropic", { retry: fastRetry([], 2) });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, (_, index) =>
        model.generateText({ role: "batch", prompt: `question ${index}` }),
      ),
    );
    const answered = outcomes.filter((outcome) => outcome.status === "fulfilled");
    const failed = outcomes.filter((outcome) => outcome.status === "rejected");
    for (const outcome of answered) expect(outcome.value.text).toBe("answer");
    for (const outcome of failed) {
      expect(outcome.reason).toBeInstanceOf(InfrastructureError);
      expect((outcome.reason as InfrastructureError).retryable).toBe(true);
    }
    expect(answered.length + failed.length).toBe(50);
    // Every answered call is exactly one unfaulted request at the server, and vice versa.
    const unfaulted = server.requests.filter((request) => request.fault === undefined).length;
    expect(answered.length).toBe(unfaulted);
    // Each failed call used its whole budget (3 attempts); the faults really happened.
    const faulted = server.requests.filter((request) => request.fault !== undefined).length;
    expect(faulted).toBeGreaterThanOrEqual(3 * failed.length);
    expect(faulted).toBeGreaterThan(0);
    expect(new Set(server.requests.map((request) => request.fault))).toEqual(
      new Set([undefined, "429", "500", "drop"]),
    );
  });
});

describe("concurrency", () => {
  it("keeps at most the provider's limit of calls in flight at the endpoint", async () => {
    const server = await serve({ faults: { latencyMs: 40 }, fallback: { text: "slow answer" } });
    // A counting proxy in front of the scripted server sees what the endpoint would see.
    let inFlight = 0;
    let peak = 0;
    const proxy = createServer((request, response) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", async () => {
        const upstream = await fetch(`${server.url}${request.url ?? ""}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: Buffer.concat(chunks),
        });
        const body = Buffer.from(await upstream.arrayBuffer());
        inFlight -= 1;
        response.writeHead(upstream.status, {
          "content-type": upstream.headers.get("content-type") ?? "",
        });
        response.end(body);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const limits = new ProviderLimits({ openai: 2 });
    const models = [0, 1].map(
      () =>
        new ModelClient({
          spec: "openai:gpt-5-mini",
          env: { OPENAI_API_KEY: openaiKey, OPENAI_BASE_URL: `${proxyUrl}/v1` },
          cwd: tmpdir(),
          limits,
          retry: fastRetry(),
        }),
    );
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        (models[index % 2] as ModelClient).generateText({ role: "solver", prompt: `q${index}` }),
      ),
    );
    expect(results.map((result) => result.text)).toEqual(
      Array.from({ length: 8 }, () => "slow answer"),
    );
    expect(server.requests).toHaveLength(8);
    // Two clients, one shared limit of 2.
    expect(peak).toBe(2);
  });
});

describe("call cache", () => {
  it("hits, misses, refreshes, replays, and never stores the key", async () => {
    const server = await serve({
      turns: [{ text: "first" }, { text: "second" }, { text: "third" }],
    });
    const directory = await temporaryDirectory();
    const cachePath = join(directory, "calls.sqlite");
    const cache = ModelCallCache.open(cachePath);
    cleanups.push(() => cache.close());

    const use = await client(server, "anthropic", { cache, cacheMode: "use" });
    const request = { role: "writer", system: "Be brief.", prompt: `my key is ${anthropicKey}` };
    expect((await use.generateText(request)).text).toBe("first");
    const again = await use.generateText(request);
    expect(again.text).toBe("first");
    expect(again.fromCache).toBe(true);
    expect(server.requests).toHaveLength(1);
    // A different setting is a different call.
    expect((await use.generateText({ ...request, temperature: 0.5 })).text).toBe("second");
    expect(server.requests).toHaveLength(2);

    const refresh = await client(server, "anthropic", { cache, cacheMode: "refresh" });
    expect((await refresh.generateText(request)).text).toBe("third");
    expect((await use.generateText(request)).text).toBe("third");
    expect(server.requests).toHaveLength(3);

    const replay = await client(server, "anthropic", { cache, cacheMode: "replay-only" });
    expect((await replay.generateText(request)).text).toBe("third");
    const miss = await replay.generateText({ ...request, prompt: "never asked" }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(miss).toBeInstanceOf(CacheMissError);
    expect(miss).toBeInstanceOf(InputError);
    expect(server.requests).toHaveLength(3);

    const off = await client(server, "anthropic", { cache, cacheMode: "off" });
    expect((await off.generateText(request)).text).toBe("(script exhausted)");
    expect(server.requests).toHaveLength(4);

    // Usage: the cache hits count their tokens but cost nothing.
    expect(use.ledger.totals().cacheHits).toBe(2);

    cache.close();
    for (const file of readdirSync(directory)) {
      const bytes = readFileSync(join(directory, file));
      expect(bytes.includes(Buffer.from(anthropicKey)), file).toBe(false);
      expect(bytes.includes(Buffer.from("TESTKEY")), file).toBe(false);
    }
    const reopened = ModelCallCache.open(cachePath);
    cleanups.push(() => reopened.close());
    expect(reopened.size).toBe(2);
  });

  it("redacts the key from a stored answer that echoes it", async () => {
    const server = await serve({ fallback: { text: `the key is ${anthropicKey}` } });
    const directory = await temporaryDirectory();
    const cache = ModelCallCache.open(join(directory, "calls.sqlite"));
    cleanups.push(() => cache.close());
    const model = await client(server, "anthropic", { cache });
    expect((await model.generateText({ role: "r", prompt: "leak" })).text).toBe(
      `the key is ${anthropicKey}`,
    );
    expect((await model.generateText({ role: "r", prompt: "leak" })).text).toBe(
      "the key is [REDACTED]",
    );
    cache.close();
    for (const file of readdirSync(directory))
      expect(readFileSync(join(directory, file)).includes(Buffer.from("TESTKEY")), file).toBe(
        false,
      );
  });

  it("caches streamed calls and replays them as a stream", async () => {
    const server = await serve({
      turns: [{ text: "streamed answer, long enough to arrive in pieces" }],
    });
    const cache = ModelCallCache.open(join(await temporaryDirectory(), "calls.sqlite"));
    cleanups.push(() => cache.close());
    const model = await client(server, "openai", { cache });
    const texts: string[] = [];
    for (let index = 0; index < 2; index += 1) {
      const result = streamText({
        model: await model.languageModel("solver"),
        prompt: "stream please",
        maxRetries: 0,
      });
      texts.push(await result.text);
    }
    expect(texts).toEqual([
      "streamed answer, long enough to arrive in pieces",
      "streamed answer, long enough to arrive in pieces",
    ]);
    expect(server.requests).toHaveLength(1);
    expect(model.ledger.totals().calls).toBe(2);
    expect(model.ledger.totals().cacheHits).toBe(1);
  });
});

describe("usage and cost", () => {
  it("totals tokens and dollars per run and per role", async () => {
    const server = await serve({
      rules: [
        {
          match: { lastUserMessage: "solve" },
          reply: {
            text: "solved",
            usage: { inputTokens: 1000, cachedInputTokens: 200, outputTokens: 100 },
          },
        },
        {
          match: { lastUserMessage: "critique" },
          reply: { text: "fine", usage: { inputTokens: 3000, outputTokens: 50 } },
        },
      ],
    });
    const model = await client(server, "anthropic");
    const solved = await model.generateText({ role: "solver", prompt: "solve it" });
    expect(solved.usage).toEqual({ inputTokens: 1000, cachedInputTokens: 200, outputTokens: 100 });
    await model.generateText({ role: "critic", prompt: "critique A" });
    await model.generateText({ role: "critic", prompt: "critique B" });
    // claude-haiku-4-5: $1 input, $0.10 cached input, $5 output per million tokens.
    const solverCost = (800 * 1 + 200 * 0.1 + 100 * 5) / 1e6; // 0.00132
    const criticCost = 2 * ((3000 * 1 + 50 * 5) / 1e6); // 0.0065
    const byRole = model.ledger.byRole();
    expect(byRole.solver?.costUsd).toBeCloseTo(solverCost, 12);
    expect(byRole.critic?.costUsd).toBeCloseTo(criticCost, 12);
    expect(byRole.critic).toMatchObject({
      calls: 2,
      inputTokens: 6000,
      cachedInputTokens: 0,
      outputTokens: 100,
    });
    expect(model.ledger.totals()).toMatchObject({
      calls: 3,
      inputTokens: 7000,
      cachedInputTokens: 200,
      outputTokens: 200,
    });
    expect(model.ledger.totals().costUsd).toBeCloseTo(0.00782, 12);
  });

  it("uses price overrides from the config file", async () => {
    const server = await serve({
      fallback: {
        text: "x",
        usage: { inputTokens: 1000, cachedInputTokens: 500, outputTokens: 100 },
      },
    });
    const cwd = await temporaryDirectory();
    await writeFile(
      join(cwd, "skillsmith.config.json"),
      JSON.stringify({ model: { prices: { "openai:gpt-5-mini": { input: 2, output: 10 } } } }),
    );
    const model = new ModelClient({
      spec: "openai:gpt-5-mini",
      cwd,
      env: { OPENAI_API_KEY: openaiKey, OPENAI_BASE_URL: `${server.url}/v1` },
      retry: fastRetry(),
    });
    await model.generateText({ role: "solver", prompt: "go" });
    // No cached-input price given: cached tokens cost the input price. (1000*2 + 100*10) / 1e6.
    expect(model.ledger.totals().costUsd).toBeCloseTo(0.003, 12);
  });

  it("counts usage through the OpenAI-compatible provider", async () => {
    const server = await serve({
      fallback: { text: "local", usage: { inputTokens: 40, outputTokens: 4 } },
    });
    const model = await client(server, "openai-compatible", { env: {} });
    const result = await model.generateText({ role: "solver", prompt: "hello" });
    expect(result.text).toBe("local");
    expect(model.ledger.totals()).toMatchObject({
      inputTokens: 40,
      outputTokens: 4,
      unpricedCalls: 1,
      costUsd: 0,
    });
  });
});

describe("structured output", () => {
  const schema = z.object({ verdict: z.enum(["pass", "fail"]), score: z.number().int() });

  it("retries once with the validation error and then succeeds", async () => {
    const server = await serve({
      turns: [
        { text: '{"verdict": "maybe", "score": 3}' },
        { text: '```json\n{"verdict": "pass", "score": 3}\n```' },
      ],
    });
    const model = await client(server, "openai");
    const result = await model.generateObject(schema, { role: "critic", prompt: "Judge this." });
    expect(result.object).toEqual({ verdict: "pass", score: 3 });
    expect(result.attempts).toBe(2);
    expect(server.requests[0]?.system).toContain('"verdict"');
    expect(server.requests[1]?.lastUserMessage).toContain("verdict");
    expect(server.requests[1]?.lastUserMessage).toContain("rejected");
  });

  it("reports a model output error, not an infrastructure error, when the repair fails too", async () => {
    const server = await serve({ fallback: { text: "I think it passes." } });
    const model = await client(server, "anthropic");
    const failure = await model
      .generateObject(schema, { role: "critic", prompt: "Judge this." })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(ModelOutputError);
    expect(failure).not.toBeInstanceOf(InfrastructureError);
    expect(server.requests).toHaveLength(2);
  });
});

describe("specs and configuration", () => {
  it("parses the three spec forms", () => {
    expect(parseModelSpec("anthropic:claude-haiku-4-5")).toEqual({
      provider: "anthropic",
      model: "claude-haiku-4-5",
    });
    expect(parseModelSpec("openai:gpt-5-mini")).toEqual({
      provider: "openai",
      model: "gpt-5-mini",
    });
    expect(parseModelSpec("openai-compatible:qwen3:8b@http://127.0.0.1:11434/v1/")).toEqual({
      provider: "openai-compatible",
      model: "qwen3:8b",
      baseUrl: "http://127.0.0.1:11434/v1",
    });
  });

  for (const bad of [
    "claude-haiku",
    "gemini:pro",
    "anthropic:",
    "openai-compatible:qwen3",
    "openai-compatible:qwen3@not a url",
    ":x",
  ]) {
    it(`rejects "${bad}" saying what is expected`, () => {
      expect(() => parseModelSpec(bad, "--model")).toThrow(InputError);
      expect(() => parseModelSpec(bad, "--model")).toThrow(/expected "anthropic:<model>"/);
      expect(() => parseModelSpec(bad, "--model")).toThrow(/--model/);
    });
  }

  it("takes key and base URL from flag, then environment, then config file", async () => {
    const cwd = await temporaryDirectory();
    const configPath = join(cwd, "custom.json");
    await writeFile(
      configPath,
      JSON.stringify({
        model: {
          providers: { openai: { apiKey: "file-key-123456", baseUrl: "http://file.example/v1" } },
        },
      }),
    );
    const env = {
      SKILLSMITH_CONFIG: configPath,
      OPENAI_API_KEY: "env-key-123456",
      OPENAI_BASE_URL: "http://env.example/v1",
    };
    const { config } = loadModelConfig({ cwd, env });
    const spec = parseModelSpec("openai:gpt-5-mini");
    const fromFlag = resolveProviderSettings(spec, {
      flags: { apiKey: "flag-key-123456", baseUrl: "http://flag.example/v1" },
      env,
      config,
    });
    expect(fromFlag).toMatchObject({
      apiKey: "flag-key-123456",
      apiKeySource: "flag",
      baseUrl: "http://flag.example/v1",
    });
    const fromEnvironment = resolveProviderSettings(spec, { env, config });
    expect(fromEnvironment).toMatchObject({
      apiKey: "env-key-123456",
      apiKeySource: "environment",
      baseUrl: "http://env.example/v1",
    });
    const fromFile = resolveProviderSettings(spec, {
      env: { SKILLSMITH_CONFIG: configPath },
      config,
    });
    expect(fromFile).toMatchObject({
      apiKey: "file-key-123456",
      apiKeySource: "config",
      baseUrl: "http://file.example/v1",
    });
    const defaults = resolveProviderSettings(spec, {
      env: { OPENAI_API_KEY: "k-123456" },
      config: {},
    });
    expect(defaults).toMatchObject({
      baseUrl: "https://api.openai.com/v1",
      baseUrlSource: "default",
    });
  });

  it("reads skillsmith.config.json from the working directory and reaches the configured server", async () => {
    const server = await serve({ fallback: { text: "from the file's endpoint" } });
    const cwd = await temporaryDirectory();
    await writeFile(
      join(cwd, "skillsmith.config.json"),
      JSON.stringify({
        other: { ignored: true },
        model: { providers: { anthropic: { apiKey: anthropicKey, baseUrl: server.url } } },
      }),
    );
    const model = new ModelClient({
      spec: "anthropic:claude-haiku-4-5",
      cwd,
      env: {},
      retry: fastRetry(),
    });
    expect(model.settings.baseUrl).toBe(`${server.url}/v1`);
    expect((await model.generateText({ role: "solver", prompt: "hi" })).text).toBe(
      "from the file's endpoint",
    );
  });

  it("names the variable and the config field, and no flag, when a key is missing", async () => {
    const cwd = await temporaryDirectory();
    const create = () => new ModelClient({ spec: "anthropic:claude-haiku-4-5", cwd, env: {} });
    expect(create).toThrow(InputError);
    // No command takes a key as a flag; naming one sent users to "unknown option".
    expect(create).not.toThrow(/--/);
    expect(create).toThrow(/ANTHROPIC_API_KEY/);
    expect(create).toThrow(/model\.providers\.anthropic\.apiKey/);
  });

  it("rejects a malformed config file naming the file and field", async () => {
    const cwd = await temporaryDirectory();
    await writeFile(
      join(cwd, "skillsmith.config.json"),
      JSON.stringify({ model: { prices: { x: { input: -1, output: 1 } } } }),
    );
    expect(() => loadModelConfig({ cwd, env: {} })).toThrow(
      /skillsmith\.config\.json.*field "model\.prices\.x\.input"/,
    );
  });
});
