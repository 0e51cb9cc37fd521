import { describe, expect, it } from "vitest";
import { isEndpointFailure, parseClaudeStreamJson } from "./claude-log.js";

/** Lines shaped like Claude Code 2.1's stream-json output, written by hand. */
const lines = [
  { type: "system", subtype: "init", cwd: "/w", skills: ["pdf", "dataviz"], model: "m" },
  {
    type: "assistant",
    message: {
      role: "assistant",
      content: [
        { type: "text", text: "Reading." },
        { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/w/a.txt" } },
      ],
    },
    parent_tool_use_id: null,
  },
  {
    type: "user",
    message: {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: [{ type: "text", text: "1\thello" }],
        },
      ],
    },
  },
  {
    type: "user",
    message: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "boom", is_error: true }],
    },
  },
  { type: "system", subtype: "api_retry", attempt: 1 },
  {
    type: "result",
    subtype: "success",
    is_error: false,
    result: "Done.",
    total_cost_usd: 0.25,
    usage: {
      input_tokens: 100,
      cache_read_input_tokens: 30,
      cache_creation_input_tokens: 20,
      output_tokens: 7,
    },
  },
].map((line) => JSON.stringify(line));

describe("parseClaudeStreamJson", () => {
  it("turns the lines into ordered events, skills shown, usage and the result", () => {
    const parsed = parseClaudeStreamJson(`${lines.join("\n")}\n`);
    expect(parsed.events).toEqual([
      { type: "assistant_text", text: "Reading." },
      { type: "tool_call", id: "toolu_1", name: "Read", input: { file_path: "/w/a.txt" } },
      { type: "tool_result", id: "toolu_1", output: "1\thello", isError: false },
      { type: "tool_result", id: "toolu_2", output: "boom", isError: true },
    ]);
    expect(parsed.skillsShown).toEqual(["pdf", "dataviz"]);
    // 100 uncached + 30 read + 20 written = 150 input tokens, 30 of them cached.
    expect(parsed.usage).toEqual({
      inputTokens: 150,
      cachedInputTokens: 30,
      outputTokens: 7,
      costUsd: 0.25,
    });
    expect(parsed.result).toEqual({ subtype: "success", isError: false, text: "Done." });
    expect(parsed.apiRetries).toBe(1);
    expect(parsed.malformedLine).toBeUndefined();
  });

  it("stops at a malformed line and quotes it with its line number", () => {
    const log = [lines[0], '{"type":"assistant", "message":', lines[1]].join("\n");
    const parsed = parseClaudeStreamJson(log);
    expect(parsed.malformedLine).toEqual({
      lineNumber: 2,
      text: '{"type":"assistant", "message":',
    });
    expect(parsed.skillsShown).toEqual(["pdf", "dataviz"]);
    expect(parsed.events).toEqual([]);
  });

  it("treats JSON that is not an event object as malformed", () => {
    expect(parseClaudeStreamJson("[1,2]").malformedLine).toEqual({ lineNumber: 1, text: "[1,2]" });
    expect(parseClaudeStreamJson('{"no_type":1}').malformedLine?.lineNumber).toBe(1);
  });

  it("reads an error result and tells endpoint failures from the agent's", () => {
    const failed = parseClaudeStreamJson(
      JSON.stringify({
        type: "result",
        subtype: "success",
        is_error: true,
        terminal_reason: "api_error",
        api_error: "connection_failed",
        api_error_status: null,
        result: "API Error: Connection refused",
      }),
    ).result;
    expect(failed).toMatchObject({ isError: true, apiError: "connection_failed" });
    expect(failed === undefined ? false : isEndpointFailure(failed)).toBe(true);
    const badRequest = {
      subtype: "success",
      isError: true,
      text: "API Error: 400",
      apiError: "invalid_request",
      apiErrorStatus: 400,
    };
    expect(isEndpointFailure(badRequest)).toBe(false);
    const maxTurns = parseClaudeStreamJson(
      JSON.stringify({ type: "result", subtype: "error_max_turns", is_error: false }),
    ).result;
    expect(maxTurns).toMatchObject({ subtype: "error_max_turns", isError: true });
    expect(maxTurns === undefined ? true : isEndpointFailure(maxTurns)).toBe(false);
  });
});
