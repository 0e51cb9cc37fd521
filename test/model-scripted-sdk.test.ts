/**
 * The scripted model server read by the real AI SDK providers over real HTTP: every wire format
 * (Anthropic Messages, OpenAI Chat, OpenAI Responses, OpenAI-compatible), streaming and not,
 * with a tool call round trip.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, type LanguageModel, stepCountIs, streamText, tool } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Script } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function serve(script: Script): Promise<ScriptedServer> {
  const server = await startScriptedServer({ script });
  servers.push(server);
  return server;
}

type Flavour = "anthropic" | "openai-chat" | "openai-responses" | "openai-compatible";
const flavours: Flavour[] = ["anthropic", "openai-chat", "openai-responses", "openai-compatible"];

function modelFor(flavour: Flavour, url: string): LanguageModel {
  switch (flavour) {
    case "anthropic":
      return createAnthropic({ baseURL: `${url}/v1`, apiKey: "sk-ant-test-key" })(
        "claude-haiku-4-5",
      );
    case "openai-chat":
      return createOpenAI({ baseURL: `${url}/v1`, apiKey: "sk-test-key" }).chat("gpt-5-mini");
    case "openai-responses":
      return createOpenAI({ baseURL: `${url}/v1`, apiKey: "sk-test-key" }).responses("gpt-5-mini");
    case "openai-compatible":
      return createOpenAICompatible({
        name: "local",
        baseURL: `${url}/v1`,
        apiKey: "sk-test-key",
        includeUsage: true,
      }).chatModel("qwen3");
  }
}

const expectedApi: Record<Flavour, string> = {
  anthropic: "anthropic",
  "openai-chat": "openai-chat",
  "openai-responses": "openai-responses",
  "openai-compatible": "openai-chat",
};

const toolScript: Script = {
  rules: [
    {
      match: { lastUserMessage: "add 2 and 3", toolOffered: "add" },
      reply: {
        text: "Let me add those.",
        toolCalls: [{ name: "add", input: { a: 2, b: 3 } }],
        usage: { inputTokens: 120, outputTokens: 15, cachedInputTokens: 20 },
      },
    },
    {
      match: { toolResult: "^5$" },
      reply: {
        text: "The sum is five, computed with a tool that took a while to answer.",
        usage: { inputTokens: 200, outputTokens: 12 },
      },
    },
  ],
};

describe("scripted server with the AI SDK", () => {
  for (const flavour of flavours) {
    for (const streaming of [false, true]) {
      it(`${flavour} ${streaming ? "streaming" : "non-streaming"}: tool call round trip`, async () => {
        const server = await serve(toolScript);
        const calls: unknown[] = [];
        const options = {
          model: modelFor(flavour, server.url),
          system: "You are a calculator.",
          prompt: "Please add 2 and 3.",
          tools: {
            add: tool({
              description: "Add two numbers",
              inputSchema: z.object({ a: z.number(), b: z.number() }),
              execute: async ({ a, b }) => {
                calls.push({ a, b });
                return String(a + b);
              },
            }),
          },
          stopWhen: stepCountIs(3),
          maxRetries: 0,
        };
        let text: string;
        let usage: {
          inputTokens?: number | undefined;
          outputTokens?: number | undefined;
          cachedInputTokens?: number | undefined;
        };
        if (streaming) {
          const result = streamText(options);
          text = await result.text;
          usage = await result.totalUsage;
        } else {
          const result = await generateText(options);
          text = result.text;
          usage = result.totalUsage;
        }
        expect(calls).toEqual([{ a: 2, b: 3 }]);
        expect(text).toBe("The sum is five, computed with a tool that took a while to answer.");
        // Two model calls: 120 + 200 input, 15 + 12 output, 20 cached (scripted figures).
        expect(usage.inputTokens).toBe(320);
        expect(usage.outputTokens).toBe(27);
        if (flavour !== "openai-compatible") expect(usage.cachedInputTokens).toBe(20);

        expect(server.requests).toHaveLength(2);
        const [first, second] = server.requests;
        expect(first?.api).toBe(expectedApi[flavour]);
        expect(first?.stream).toBe(streaming);
        expect(first?.system).toContain("You are a calculator.");
        expect(first?.toolNames).toEqual(["add"]);
        expect(first?.lastUserMessage).toBe("Please add 2 and 3.");
        expect(first?.toolResults).toEqual([]);
        expect(second?.toolResults).toHaveLength(1);
        expect(second?.toolResults[0]).toContain("5");
        expect(second?.lastUserMessage).toBe("");
        // The id the server generated went out and came back with the tool result.
        const callId = first?.reply?.toolCalls?.[0]?.id ?? "missing";
        expect(callId).toMatch(flavour === "anthropic" ? /^toolu_/ : /^call_/);
        expect(JSON.stringify(second?.body)).toContain(callId);
        // Keys are redacted in the record.
        expect(JSON.stringify(first?.headers)).not.toContain("test-key");
      });
    }
  }

  it("serves turns in order, then the fallback, and reports usage defaults", async () => {
    const server = await serve({
      turns: [{ text: "one" }, { text: "two" }],
      fallback: { text: "no more" },
    });
    const model = modelFor("openai-chat", server.url);
    const texts: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const result = await generateText({ model, prompt: "next", maxRetries: 0 });
      texts.push(result.text);
    }
    expect(texts).toEqual(["one", "two", "no more"]);
    // Default output usage is ceil(characters / 4): "no more" has 7 characters -> 2.
    const last = await generateText({ model, prompt: "x", maxRetries: 0 });
    expect(last.usage.outputTokens).toBe(2);
    const rawLength = JSON.stringify(server.requests.at(-1)?.body).length;
    expect(last.usage.inputTokens).toBe(Math.ceil(rawLength / 4));
  });

  it("answers count_tokens and lists models", async () => {
    const server = await serve({});
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello" }] });
    const counted = await fetch(`${server.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "sk-ant-secret-value" },
      body,
    });
    expect(await counted.json()).toEqual({ input_tokens: Math.ceil(body.length / 4) });
    expect(server.requests[0]?.api).toBe("anthropic-count-tokens");
    expect(server.requests[0]?.headers["x-api-key"]).toBe("[REDACTED]");
    const models = (await (await fetch(`${server.url}/v1/models`)).json()) as { data: unknown[] };
    expect(models.data.length).toBeGreaterThan(0);
  });

  it("streams Anthropic events in the documented order", async () => {
    const server = await serve({
      turns: [
        { text: "hi", toolCalls: [{ name: "Write", input: { file_path: "a.txt", content: "x" } }] },
      ],
    });
    const response = await fetch(`${server.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "claude-haiku-4-5",
        stream: true,
        max_tokens: 100,
        messages: [{ role: "user", content: "go" }],
      }),
    });
    const text = await response.text();
    const events = [...text.matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
    // The tool input JSON has 35 characters, streamed in pieces of 24: two deltas.
    expect(events).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(events.at(-1)).toBe("message_stop");
    expect(events.filter((name) => name === "content_block_start")).toHaveLength(2);
    const deltas = [...text.matchAll(/"partial_json":"((?:[^"\\]|\\.)*)"/g)].map(
      (match) => JSON.parse(`"${match[1]}"`) as string,
    );
    expect(JSON.parse(deltas.join(""))).toEqual({ file_path: "a.txt", content: "x" });
    expect(text).toContain('"stop_reason":"tool_use"');
  });
});
