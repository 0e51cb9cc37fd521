import { describe, expect, it } from "vitest";
import { parseCodexJsonl, skillsListedInCodexSession } from "./codex-log.js";

/** Lines shaped like `codex exec --json` 0.169 output, written by hand. */
const lines = [
  { type: "thread.started", thread_id: "t1" },
  { type: "item.completed", item: { id: "item_0", type: "error", message: "metadata missing" } },
  { type: "turn.started" },
  {
    type: "item.started",
    item: {
      id: "item_1",
      type: "command_execution",
      command: "bash -lc ls",
      aggregated_output: "",
      exit_code: null,
      status: "in_progress",
    },
  },
  {
    type: "item.completed",
    item: {
      id: "item_1",
      type: "command_execution",
      command: "bash -lc ls",
      aggregated_output: "a.txt\n",
      exit_code: 0,
      status: "completed",
    },
  },
  {
    type: "item.completed",
    item: {
      id: "item_2",
      type: "command_execution",
      command: "bash -lc false",
      aggregated_output: "",
      exit_code: 1,
      status: "failed",
    },
  },
  {
    type: "item.completed",
    item: {
      id: "item_3",
      type: "file_change",
      changes: [{ path: "a.txt", kind: "update" }],
      status: "completed",
    },
  },
  { type: "item.completed", item: { id: "item_4", type: "reasoning", text: "thinking" } },
  { type: "item.completed", item: { id: "item_5", type: "agent_message", text: "Done." } },
  {
    type: "turn.completed",
    usage: { input_tokens: 500, cached_input_tokens: 200, output_tokens: 9 },
  },
].map((line) => JSON.stringify(line));

describe("parseCodexJsonl", () => {
  it("turns items into ordered tool calls, results and text, and sums usage", () => {
    const parsed = parseCodexJsonl(lines.join("\n"));
    expect(parsed.events).toEqual([
      { type: "error", message: "metadata missing" },
      { type: "tool_call", id: "item_1", name: "shell", input: { command: "bash -lc ls" } },
      { type: "tool_result", id: "item_1", output: "a.txt\n", isError: false },
      { type: "tool_call", id: "item_2", name: "shell", input: { command: "bash -lc false" } },
      { type: "tool_result", id: "item_2", output: "", isError: true },
      {
        type: "tool_call",
        id: "item_3",
        name: "apply_patch",
        input: { changes: [{ path: "a.txt", kind: "update" }] },
      },
      { type: "tool_result", id: "item_3", output: "completed", isError: false },
      { type: "assistant_text", text: "Done." },
    ]);
    expect(parsed.usage).toEqual({ inputTokens: 500, cachedInputTokens: 200, outputTokens: 9 });
    expect(parsed.turnsCompleted).toBe(1);
    expect(parsed.failures).toEqual([]);
  });

  it("collects turn failures and stream errors", () => {
    const parsed = parseCodexJsonl(
      [
        JSON.stringify({ type: "error", message: "Reconnecting... 1/5" }),
        JSON.stringify({ type: "turn.failed", error: { message: "stream disconnected" } }),
      ].join("\n"),
    );
    expect(parsed.failures).toEqual(["Reconnecting... 1/5", "stream disconnected"]);
    expect(parsed.turnsCompleted).toBe(0);
  });

  it("reports the first malformed line", () => {
    const parsed = parseCodexJsonl(`${lines[0]}\nWARNING: something\n${lines[1]}`);
    expect(parsed.malformedLine).toEqual({ lineNumber: 2, text: "WARNING: something" });
  });
});

describe("skillsListedInCodexSession", () => {
  it("reads the Available skills list of the skills_instructions block", () => {
    const text = [
      "<skills_instructions>",
      "## Skills",
      "### Skill roots",
      "- `r0` = `/h/.codex/skills/.system`",
      "### Available skills",
      "- imagegen: Make images. (file: r0/imagegen/SKILL.md)",
      "- greeting-style: How to greet: politely. (file: r1/greeting-style/SKILL.md)",
      "### How to use skills",
      "- not-a-skill: ignored",
      "</skills_instructions>",
    ].join("\n");
    const session = [
      JSON.stringify({ type: "session_meta", payload: { cwd: "/w" } }),
      JSON.stringify({
        type: "response_item",
        payload: { content: [{ type: "input_text", text }] },
      }),
    ].join("\n");
    expect(skillsListedInCodexSession(session)).toEqual(["imagegen", "greeting-style"]);
  });

  it("is undefined when the session holds no skill list", () => {
    expect(skillsListedInCodexSession('{"type":"session_meta"}\nnot json')).toBeUndefined();
  });
});
