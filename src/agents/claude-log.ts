/**
 * Parser for Claude Code's `--output-format stream-json --verbose` log: one JSON object per line
 * (`system/init`, `assistant`, `user`, `result`, and others we ignore). Untrusted input: a line
 * that is not a JSON object stops parsing and is reported, never thrown.
 */
import { z } from "zod";
import { looksLikeEndpointFailure } from "./common.js";
import { jsonLines } from "./json-lines.js";
import { addUsage, emptyUsage } from "./trajectory.js";
import type { TrajectoryEvent, TrajectoryUsage } from "./types.js";

const textBlock = z.looseObject({ type: z.literal("text"), text: z.string() });
const toolUseBlock = z.looseObject({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});
const toolResultBlock = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  is_error: z.boolean().optional(),
});

const usageSchema = z.looseObject({
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  cache_read_input_tokens: z.number().optional(),
  cache_creation_input_tokens: z.number().optional(),
});

const lineSchema = z.looseObject({ type: z.string(), subtype: z.string().optional() });
const initSchema = z.looseObject({
  skills: z.array(z.union([z.string(), z.looseObject({ name: z.string() })])).optional(),
  model: z.string().optional(),
});
const messageLineSchema = z.looseObject({
  message: z.looseObject({ content: z.union([z.string(), z.array(z.unknown())]) }),
  /** Set on lines of a sub-agent's conversation; those are kept but marked in the tool ids. */
  parent_tool_use_id: z.string().nullable().optional(),
});
const resultSchema = z.looseObject({
  subtype: z.string().optional(),
  is_error: z.boolean().optional(),
  result: z.string().optional(),
  total_cost_usd: z.number().optional(),
  usage: usageSchema.optional(),
  num_turns: z.number().optional(),
  errors: z.array(z.unknown()).optional(),
  terminal_reason: z.string().optional(),
  api_error: z.string().nullable().optional(),
  api_error_status: z.number().nullable().optional(),
});

export interface ClaudeResultLine {
  readonly subtype: string;
  readonly isError: boolean;
  readonly text: string;
  /** Set when the run ended on a model API failure (`connection_failed`, `rate_limit`, ...). */
  readonly apiError?: string;
  /** HTTP status of that failure; undefined for connection failures. */
  readonly apiErrorStatus?: number;
}

export interface ClaudeLogParse {
  readonly events: TrajectoryEvent[];
  /** From the `system/init` line; undefined when no init line was seen. */
  readonly skillsShown?: string[];
  readonly usage: TrajectoryUsage;
  readonly result?: ClaudeResultLine;
  /** `system/api_retry` lines: the CLI retried a failing model call. */
  readonly apiRetries: number;
  /** The first line that was not a JSON object, quoted as received. */
  readonly malformedLine?: { readonly lineNumber: number; readonly text: string };
}

function blockText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) => {
      const parsed = textBlock.safeParse(block);
      return parsed.success ? parsed.data.text : "";
    })
    .join("");
}

/**
 * Whether a failed result is the model endpoint's fault (unreachable, rate-limited, failing,
 * refusing our credentials) rather than the agent's: such runs are re-run, not scored.
 */
export function isEndpointFailure(result: ClaudeResultLine): boolean {
  if (result.apiError !== undefined) {
    const status = result.apiErrorStatus;
    return (
      status === undefined || status === 401 || status === 403 || status === 429 || status >= 500
    );
  }
  return looksLikeEndpointFailure(result.text);
}

/** The event of one content block of an `assistant` or `user` line; undefined for empty text. */
function blockEvent(block: unknown, role: "assistant" | "user"): TrajectoryEvent | undefined {
  const text = textBlock.safeParse(block);
  if (text.success && role === "assistant") {
    return text.data.text === "" ? undefined : { type: "assistant_text", text: text.data.text };
  }
  const toolUse = toolUseBlock.safeParse(block);
  if (toolUse.success) {
    const { id, name, input } = toolUse.data;
    return { type: "tool_call", id, name, input };
  }
  const toolResult = toolResultBlock.safeParse(block);
  if (!toolResult.success) return undefined;
  return {
    type: "tool_result",
    id: toolResult.data.tool_use_id,
    output: blockText(toolResult.data.content),
    isError: toolResult.data.is_error === true,
  };
}

export function parseClaudeStreamJson(log: string): ClaudeLogParse {
  const events: TrajectoryEvent[] = [];
  let skillsShown: string[] | undefined;
  let usage = emptyUsage;
  let result: ClaudeResultLine | undefined;
  let apiRetries = 0;
  // What was read so far: the whole parse at the end, or the part before a malformed line.
  const done = (): ClaudeLogParse => ({
    events,
    ...(skillsShown === undefined ? {} : { skillsShown }),
    usage,
    ...(result === undefined ? {} : { result }),
    apiRetries,
  });
  for (const { lineNumber, text: rawLine, value } of jsonLines(log)) {
    const head = lineSchema.safeParse(value);
    if (!head.success) {
      return { ...done(), malformedLine: { lineNumber, text: rawLine } };
    }
    const { type, subtype } = head.data;
    if (type === "system" && subtype === "init") {
      const init = initSchema.safeParse(value);
      if (init.success && init.data.skills !== undefined) {
        skillsShown = init.data.skills.map((skill) =>
          typeof skill === "string" ? skill : skill.name,
        );
      }
    } else if (type === "system" && subtype === "api_retry") {
      apiRetries += 1;
    } else if (type === "assistant" || type === "user") {
      const message = messageLineSchema.safeParse(value);
      if (!message.success) continue;
      const content = message.data.message.content;
      if (typeof content === "string") {
        if (type === "assistant" && content !== "")
          events.push({ type: "assistant_text", text: content });
        continue;
      }
      for (const block of content) {
        const event = blockEvent(block, type);
        if (event !== undefined) events.push(event);
      }
    } else if (type === "result") {
      const parsed = resultSchema.safeParse(value);
      if (!parsed.success) continue;
      const line = parsed.data;
      const lineUsage = line.usage;
      usage = addUsage(emptyUsage, {
        // Anthropic reports uncached input separately from cache reads and writes; our
        // `inputTokens` is all input, of which `cachedInputTokens` were read from the cache.
        inputTokens:
          (lineUsage?.input_tokens ?? 0) +
          (lineUsage?.cache_read_input_tokens ?? 0) +
          (lineUsage?.cache_creation_input_tokens ?? 0),
        cachedInputTokens: lineUsage?.cache_read_input_tokens ?? 0,
        outputTokens: lineUsage?.output_tokens ?? 0,
        ...(line.total_cost_usd === undefined ? {} : { costUsd: line.total_cost_usd }),
      });
      const errorTexts = (line.errors ?? []).map((item) =>
        typeof item === "string" ? item : JSON.stringify(item),
      );
      result = {
        subtype: line.subtype ?? "",
        isError: line.is_error === true || (line.subtype ?? "success") !== "success",
        text: line.result ?? errorTexts.join("\n"),
        ...(typeof line.api_error === "string"
          ? { apiError: line.api_error }
          : line.terminal_reason === "api_error"
            ? { apiError: "api_error" }
            : {}),
        ...(typeof line.api_error_status === "number"
          ? { apiErrorStatus: line.api_error_status }
          : {}),
      };
    }
  }
  return done();
}
