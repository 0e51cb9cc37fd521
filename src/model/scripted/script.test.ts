import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InputError } from "../../core/errors.js";
import { normaliseRequest } from "./normalise.js";
import { loadScript, type MatchableRequest, ScriptCursor } from "./script.js";
import { seededRandom } from "./server.js";

const base: MatchableRequest = {
  api: "anthropic",
  model: "claude-haiku-4-5",
  system: "You are Claude Code.",
  toolNames: ["Read", "Write", "Skill"],
  lastUserMessage: "please fix the bug",
  toolResults: [],
};

describe("ScriptCursor", () => {
  it("checks rules in order with AND semantics and times, then turns, then the fallback", () => {
    const cursor = new ScriptCursor({
      rules: [
        {
          match: { toolOffered: "Skill", lastUserMessage: "fix" },
          times: 1,
          reply: { text: "rule one" },
        },
        { match: { toolResult: "^ok$" }, reply: { text: "after tool" } },
        { match: { api: "openai-chat" }, reply: { text: "chat only" } },
      ],
      turns: [{ text: "turn one" }],
      fallback: { text: "fallback" },
    });
    expect(cursor.next(base).text).toBe("rule one");
    expect(cursor.next(base).text).toBe("turn one");
    expect(cursor.next({ ...base, toolResults: ["no", "ok"] }).text).toBe("after tool");
    expect(cursor.next({ ...base, toolResults: ["ok", "no"] }).text).toBe("fallback");
    expect(cursor.next({ ...base, api: "openai-chat" }).text).toBe("chat only");
  });

  it("answers (script exhausted) without a fallback", () => {
    expect(new ScriptCursor({}).next(base)).toEqual({
      text: "(script exhausted)",
      stopReason: "end_turn",
    });
  });
});

describe("normaliseRequest", () => {
  it("reads Anthropic system blocks, tools, tool results and the latest user text", () => {
    const body = {
      model: "m",
      system: [
        { type: "text", text: "sys A" },
        { type: "text", text: "sys B" },
      ],
      tools: [{ name: "Write" }, { name: "Skill" }],
      messages: [
        { role: "user", content: [{ type: "text", text: "task" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Write", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t1",
              content: [{ type: "text", text: "written" }],
            },
          ],
        },
      ],
    };
    expect(normaliseRequest("anthropic", body)).toEqual({
      api: "anthropic",
      model: "m",
      system: "sys A\nsys B",
      toolNames: ["Write", "Skill"],
      lastUserMessage: "",
      toolResults: ["written"],
    });
  });

  it("reads OpenAI Chat and Responses bodies", () => {
    const chat = normaliseRequest("openai-chat", {
      model: "g",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "hello" }] },
      ],
      tools: [{ type: "function", function: { name: "read_file" } }],
    });
    expect(chat).toMatchObject({
      system: "be brief",
      lastUserMessage: "hello",
      toolNames: ["read_file"],
    });
    const responses = normaliseRequest("openai-responses", {
      model: "g",
      instructions: "top",
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: "dev" }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "do it" }] },
        { type: "function_call", call_id: "c1", name: "exec_command", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "exit 0" },
      ],
      tools: [
        { type: "function", name: "exec_command" },
        { type: "web_search" },
        { type: "namespace", name: "ns", tools: [{ name: "inner" }] },
      ],
    });
    expect(responses).toMatchObject({
      system: "top\ndev",
      lastUserMessage: "",
      toolResults: ["exit 0"],
      toolNames: ["exec_command", "web_search", "ns", "inner"],
    });
  });

  it("never throws on strange bodies", () => {
    expect(normaliseRequest("openai-responses", { input: "just text" }).lastUserMessage).toBe(
      "just text",
    );
    expect(normaliseRequest("anthropic", null)).toMatchObject({ model: "", toolNames: [] });
  });
});

describe("loadScript", () => {
  it("reads YAML and names the file and field of a mistake", async () => {
    const directory = await mkdtemp(join(tmpdir(), "skillsmith-script-"));
    try {
      const good = join(directory, "s.yaml");
      await writeFile(
        good,
        "turns:\n  - text: hi\n    toolCalls:\n      - name: Write\n        input: { file_path: a }\n",
      );
      expect((await loadScript(good)).turns?.[0]?.toolCalls?.[0]?.name).toBe("Write");
      const bad = join(directory, "bad.json");
      await writeFile(
        bad,
        JSON.stringify({ rules: [{ match: { lastUserMessage: "(" }, reply: {} }] }),
      );
      const error = await loadScript(bad).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InputError);
      expect((error as InputError).message).toContain(bad);
      expect((error as InputError).message).toContain('field "rules.0.match.lastUserMessage"');
      const faults = join(directory, "faults.json");
      await writeFile(faults, JSON.stringify({ faults: { rate429: 0.7, rate500: 0.5 } }));
      await expect(loadScript(faults)).rejects.toThrow(/must not exceed 1/);
      // A YAML mistake is named with its line: here the third line's tool call has no name.
      const unnamed = join(directory, "unnamed.yaml");
      await writeFile(unnamed, "turns:\n  - text: hi\n    toolCalls: [{ input: {} }]\n");
      await expect(loadScript(unnamed)).rejects.toThrow(
        `${unnamed}, line 3, field "turns.0.toolCalls.0.name"`,
      );
      // A key written twice is refused, not silently the last one.
      const twice = join(directory, "twice.yaml");
      await writeFile(twice, "fallback: { text: a }\nfallback: { text: b }\n");
      await expect(loadScript(twice)).rejects.toMatchObject({
        code: "model.script-syntax",
        location: { file: twice, line: 2 },
      });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe("seededRandom", () => {
  it("repeats for a seed, differs across seeds, and stays in [0, 1)", () => {
    const first = Array.from({ length: 5 }, seededRandom(42));
    const again = Array.from({ length: 5 }, seededRandom(42));
    const other = Array.from({ length: 5 }, seededRandom(43));
    expect(first).toEqual(again);
    expect(first).not.toEqual(other);
    const draws = Array.from({ length: 10_000 }, seededRandom(1));
    for (const draw of draws) expect(draw >= 0 && draw < 1).toBe(true);
    // A uniform generator puts about 20% of draws below 0.2 (binomial sd ~0.4 points here).
    const share = draws.filter((draw) => draw < 0.2).length / draws.length;
    expect(Math.abs(share - 0.2)).toBeLessThan(0.02);
  });
});
