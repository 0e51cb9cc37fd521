/**
 * The wire formats: a scripted reply rendered as an Anthropic Messages response, an OpenAI Chat
 * Completion or an OpenAI Responses response, each as one JSON body or as the server-sent event
 * sequence the real APIs stream. Shapes follow the providers' API references and the AI SDK
 * parsers that read them (field names, event order, `[DONE]`, sequence numbers). The Responses
 * API, the largest of the three, is in `wire-responses.ts`.
 */
import { randomBytes } from "node:crypto";
import { type ScriptedReply, stopReasonOf } from "./script.js";

export interface ReplyUsage {
  /** All input tokens, cached ones included. */
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

/** One server-sent event; `event` is omitted for APIs that send data lines only. */
export interface SseEvent {
  event?: string;
  data: string;
}

export function formatSse(event: SseEvent): string {
  return `${event.event === undefined ? "" : `event: ${event.event}\n`}data: ${event.data}\n\n`;
}

export function randomId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString("hex")}`;
}

/** Usage of a reply: the script's figures, else rough counts (characters / 4). */
export function usageFor(reply: ScriptedReply, requestCharacters: number): ReplyUsage {
  const replyCharacters =
    (reply.text ?? "").length +
    (reply.toolCalls ?? []).reduce(
      (sum, call) => sum + call.name.length + JSON.stringify(call.input).length,
      0,
    );
  return {
    inputTokens: reply.usage?.inputTokens ?? Math.ceil(requestCharacters / 4),
    cachedInputTokens: reply.usage?.cachedInputTokens ?? 0,
    outputTokens: reply.usage?.outputTokens ?? Math.ceil(replyCharacters / 4),
  };
}

/** Tool calls with their ids fixed once, so stream and record agree. */
export interface ResolvedToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
  arguments: string;
}

export function resolveToolCalls(reply: ScriptedReply, prefix: string): ResolvedToolCall[] {
  return (reply.toolCalls ?? []).map((call) => ({
    id: call.id ?? randomId(prefix),
    name: call.name,
    input: call.input,
    arguments: JSON.stringify(call.input),
  }));
}

/** Split a string into a few pieces so streaming clients really assemble deltas. */
export function pieces(text: string, size = 24): string[] {
  if (text.length === 0) return [];
  const result: string[] = [];
  for (let start = 0; start < text.length; start += size)
    result.push(text.slice(start, start + size));
  return result;
}

// ------------------------------------------------------------------------------------------
// Anthropic Messages

function anthropicUsage(usage: ReplyUsage) {
  // Anthropic reports cache reads separately from `input_tokens`.
  return {
    input_tokens: Math.max(0, usage.inputTokens - usage.cachedInputTokens),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: usage.cachedInputTokens,
    output_tokens: usage.outputTokens,
  };
}

export function anthropicMessage(reply: ScriptedReply, model: string, usage: ReplyUsage) {
  const content: Record<string, unknown>[] = [];
  if (reply.text !== undefined && reply.text !== "")
    content.push({ type: "text", text: reply.text });
  for (const call of resolveToolCalls(reply, "toolu_"))
    content.push({ type: "tool_use", id: call.id, name: call.name, input: call.input });
  return {
    id: randomId("msg_"),
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReasonOf(reply),
    stop_sequence: null,
    usage: anthropicUsage(usage),
  };
}

export function anthropicEvents(
  reply: ScriptedReply,
  model: string,
  usage: ReplyUsage,
): SseEvent[] {
  const events: SseEvent[] = [];
  const push = (type: string, payload: Record<string, unknown>) =>
    events.push({ event: type, data: JSON.stringify({ type, ...payload }) });
  const fullUsage = anthropicUsage(usage);
  push("message_start", {
    message: {
      id: randomId("msg_"),
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...fullUsage, output_tokens: 1 },
    },
  });
  let index = 0;
  if (reply.text !== undefined && reply.text !== "") {
    push("content_block_start", { index, content_block: { type: "text", text: "" } });
    for (const text of pieces(reply.text))
      push("content_block_delta", { index, delta: { type: "text_delta", text } });
    push("content_block_stop", { index });
    index += 1;
  }
  for (const call of resolveToolCalls(reply, "toolu_")) {
    push("content_block_start", {
      index,
      content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
    });
    for (const partial of pieces(call.arguments))
      push("content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json: partial },
      });
    push("content_block_stop", { index });
    index += 1;
  }
  push("message_delta", {
    delta: { stop_reason: stopReasonOf(reply), stop_sequence: null },
    usage: { output_tokens: usage.outputTokens },
  });
  push("message_stop", {});
  return events;
}

// ------------------------------------------------------------------------------------------
// OpenAI Chat Completions

function chatFinishReason(reply: ScriptedReply): string {
  switch (stopReasonOf(reply)) {
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
      return "length";
    case "end_turn":
      return "stop";
  }
}

function chatUsage(usage: ReplyUsage) {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens },
  };
}

export function chatCompletion(reply: ScriptedReply, model: string, usage: ReplyUsage) {
  const calls = resolveToolCalls(reply, "call_");
  return {
    id: randomId("chatcmpl-"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: reply.text ?? null,
          ...(calls.length === 0
            ? {}
            : {
                tool_calls: calls.map((call) => ({
                  id: call.id,
                  type: "function",
                  function: { name: call.name, arguments: call.arguments },
                })),
              }),
        },
        finish_reason: chatFinishReason(reply),
      },
    ],
    usage: chatUsage(usage),
  };
}

export function chatEvents(
  reply: ScriptedReply,
  model: string,
  usage: ReplyUsage,
  includeUsage: boolean,
): SseEvent[] {
  const id = randomId("chatcmpl-");
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): SseEvent => ({
    data: JSON.stringify({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices,
      ...extra,
    }),
  });
  const events: SseEvent[] = [
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
  ];
  for (const text of pieces(reply.text ?? ""))
    events.push(chunk([{ index: 0, delta: { content: text }, finish_reason: null }]));
  for (const [callIndex, call] of resolveToolCalls(reply, "call_").entries()) {
    events.push(
      chunk([
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index: callIndex,
                id: call.id,
                type: "function",
                function: { name: call.name, arguments: "" },
              },
            ],
          },
          finish_reason: null,
        },
      ]),
    );
    for (const partial of pieces(call.arguments))
      events.push(
        chunk([
          {
            index: 0,
            delta: { tool_calls: [{ index: callIndex, function: { arguments: partial } }] },
            finish_reason: null,
          },
        ]),
      );
  }
  events.push(chunk([{ index: 0, delta: {}, finish_reason: chatFinishReason(reply) }]));
  // With `stream_options.include_usage` the API sends one more chunk: no choices, the usage.
  if (includeUsage) events.push(chunk([], { usage: chatUsage(usage) }));
  events.push({ data: "[DONE]" });
  return events;
}
