/**
 * Parser for `codex exec --json`: one JSON event per line (`thread.started`, `turn.started`,
 * `item.started` / `item.updated` / `item.completed`, `turn.completed` with usage, `turn.failed`,
 * `error`). Untrusted input: a line that is not a JSON object stops parsing and is reported.
 */
import { z } from "zod";
import { jsonLines, parseJsonOrUndefined } from "./json-lines.js";
import { addUsage, emptyUsage } from "./trajectory.js";
import type { TrajectoryEvent, TrajectoryUsage } from "./types.js";

const lineSchema = z.looseObject({ type: z.string() });
const itemLineSchema = z.looseObject({
  item: z.looseObject({ id: z.string(), type: z.string() }),
});
const usageLineSchema = z.looseObject({
  usage: z
    .looseObject({
      input_tokens: z.number().optional(),
      cached_input_tokens: z.number().optional(),
      output_tokens: z.number().optional(),
    })
    .optional(),
});
const failedLineSchema = z.looseObject({
  error: z.looseObject({ message: z.string() }).optional(),
  message: z.string().optional(),
});

export interface CodexLogParse {
  readonly events: TrajectoryEvent[];
  readonly usage: TrajectoryUsage;
  readonly turnsCompleted: number;
  /** Messages of `turn.failed` and top-level `error` events, in order. */
  readonly failures: string[];
  readonly malformedLine?: { readonly lineNumber: number; readonly text: string };
}

type Item = Record<string, unknown> & { id: string; type: string };

function text(value: unknown): string {
  return typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value);
}

/** The tool call an item stands for, or undefined for items that are not tool use. */
function toolCallOf(item: Item): TrajectoryEvent | undefined {
  switch (item.type) {
    case "command_execution":
      return { type: "tool_call", id: item.id, name: "shell", input: { command: item.command } };
    case "file_change":
      return {
        type: "tool_call",
        id: item.id,
        name: "apply_patch",
        input: { changes: item.changes },
      };
    case "mcp_tool_call":
      return {
        type: "tool_call",
        id: item.id,
        name: `${text(item.server)}.${text(item.tool)}`,
        input: item.arguments,
      };
    case "web_search":
      return { type: "tool_call", id: item.id, name: "web_search", input: { query: item.query } };
    default:
      return undefined;
  }
}

function toolResultOf(item: Item): TrajectoryEvent | undefined {
  const failed = item.status === "failed";
  switch (item.type) {
    case "command_execution":
      return {
        type: "tool_result",
        id: item.id,
        output: text(item.aggregated_output),
        isError: failed || (typeof item.exit_code === "number" && item.exit_code !== 0),
      };
    case "file_change":
      return { type: "tool_result", id: item.id, output: text(item.status), isError: failed };
    case "mcp_tool_call":
      return {
        type: "tool_result",
        id: item.id,
        output: text(item.error ?? item.result),
        isError: failed || item.error !== undefined,
      };
    case "web_search":
      return { type: "tool_result", id: item.id, output: "", isError: failed };
    default:
      return undefined;
  }
}

export function parseCodexJsonl(log: string): CodexLogParse {
  const events: TrajectoryEvent[] = [];
  const failures: string[] = [];
  const started = new Set<string>();
  let usage = emptyUsage;
  let turnsCompleted = 0;
  const done = () => ({ events, usage, turnsCompleted, failures });
  for (const { lineNumber, text: rawLine, value } of jsonLines(log)) {
    const head = lineSchema.safeParse(value);
    if (!head.success) {
      return { ...done(), malformedLine: { lineNumber, text: rawLine } };
    }
    const type = head.data.type;
    if (type === "item.started" || type === "item.completed") {
      const parsed = itemLineSchema.safeParse(value);
      if (!parsed.success) continue;
      const item = parsed.data.item as Item;
      if (type === "item.started") {
        const call = toolCallOf(item);
        if (call !== undefined && !started.has(item.id)) {
          started.add(item.id);
          events.push(call);
        }
        continue;
      }
      if (item.type === "agent_message") {
        events.push({ type: "assistant_text", text: text(item.text) });
      } else if (item.type === "error") {
        events.push({ type: "error", message: text(item.message) });
      } else {
        const call = toolCallOf(item);
        if (call !== undefined && !started.has(item.id)) events.push(call);
        started.add(item.id);
        const result = toolResultOf(item);
        if (result !== undefined) events.push(result);
      }
    } else if (type === "turn.completed") {
      turnsCompleted += 1;
      const parsed = usageLineSchema.safeParse(value);
      const lineUsage = parsed.success ? parsed.data.usage : undefined;
      // OpenAI counts cached tokens inside input_tokens, as our TrajectoryUsage does.
      usage = addUsage(usage, {
        inputTokens: lineUsage?.input_tokens ?? 0,
        cachedInputTokens: lineUsage?.cached_input_tokens ?? 0,
        outputTokens: lineUsage?.output_tokens ?? 0,
      });
    } else if (type === "turn.failed" || type === "error") {
      const parsed = failedLineSchema.safeParse(value);
      const message = parsed.success
        ? (parsed.data.error?.message ?? parsed.data.message ?? type)
        : type;
      failures.push(message);
      events.push({ type: "error", message });
    }
  }
  return done();
}

/**
 * The skills Codex listed to the model, from the text of its stored session (the rollout JSONL in
 * CODEX_HOME/sessions): the `### Available skills` list of its `<skills_instructions>` block,
 * lines `- <name>: <description> (file: ...)`. Undefined when the session holds no such block.
 */
export function skillsListedInCodexSession(session: string): string[] | undefined {
  for (const rawLine of session.split("\n")) {
    if (!rawLine.includes("skills_instructions")) continue;
    // A session line cut short or not JSON cannot hold the list; the next one may.
    const value = parseJsonOrUndefined(rawLine);
    if (value === undefined) continue;
    for (const text of stringsOf(value)) {
      const start = text.indexOf("<skills_instructions>");
      if (start === -1) continue;
      const end = text.indexOf("</skills_instructions>", start);
      const block = text.slice(start, end === -1 ? undefined : end);
      const listStart = block.indexOf("### Available skills");
      if (listStart === -1) return [];
      const names: string[] = [];
      for (const line of block.slice(listStart).split("\n").slice(1)) {
        if (line.startsWith("#")) break;
        const match = /^- ([^:\s][^:\n]*?): /.exec(line);
        if (match?.[1] !== undefined) names.push(match[1]);
      }
      return names;
    }
  }
  return undefined;
}

function stringsOf(value: unknown, found: string[] = []): string[] {
  if (typeof value === "string") found.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, found);
  else if (value !== null && typeof value === "object")
    for (const item of Object.values(value)) stringsOf(item, found);
  return found;
}
