/**
 * The wire formats: a scripted reply rendered as an Anthropic Messages response, an OpenAI Chat
 * Completion or an OpenAI Responses response, each as one JSON body or as the server-sent event
 * sequence the real APIs stream. Shapes follow the providers' API references and the AI SDK
 * parsers that read them (field names, event order, `[DONE]`, sequence numbers).
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

function randomId(prefix: string): string {
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
function pieces(text: string, size = 24): string[] {
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

// ------------------------------------------------------------------------------------------
// OpenAI Responses

function responsesUsage(usage: ReplyUsage) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/**
 * Output items of a reply. A call to a tool the client offered as a freeform `custom` tool
 * (Codex's `apply_patch`) becomes a `custom_tool_call` whose input is the script's `input.input`
 * string; every other call is a `function_call` with JSON arguments.
 */
function responsesOutputItems(reply: ScriptedReply, customTools: ReadonlySet<string>) {
  const items: Record<string, unknown>[] = [];
  if (reply.text !== undefined && reply.text !== "") {
    items.push({
      type: "message",
      id: randomId("msg_"),
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: reply.text, annotations: [], logprobs: [] }],
    });
  }
  for (const call of resolveToolCalls(reply, "call_")) {
    if (customTools.has(call.name)) {
      const input = call.input.input;
      items.push({
        type: "custom_tool_call",
        id: randomId("ctc_"),
        call_id: call.id,
        name: call.name,
        input: typeof input === "string" ? input : call.arguments,
        status: "completed",
      });
    } else {
      items.push({
        type: "function_call",
        id: randomId("fc_"),
        call_id: call.id,
        name: call.name,
        arguments: call.arguments,
        status: "completed",
      });
    }
  }
  return items;
}

function responseEnvelope(
  id: string,
  model: string,
  status: string,
  output: unknown[],
  usage: ReturnType<typeof responsesUsage> | null,
  reply: ScriptedReply,
) {
  return {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details:
      status === "completed" && stopReasonOf(reply) === "max_tokens"
        ? { reason: "max_output_tokens" }
        : null,
    model,
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage,
  };
}

export function responsesResponse(
  reply: ScriptedReply,
  model: string,
  usage: ReplyUsage,
  customTools: ReadonlySet<string>,
) {
  const items = responsesOutputItems(reply, customTools);
  return responseEnvelope(
    randomId("resp_"),
    model,
    "completed",
    items,
    responsesUsage(usage),
    reply,
  );
}

/**
 * The events of one tool call's input, as the Responses API streams it: the item added with its
 * input empty, the input in pieces (`<event>.delta`), then whole (`<event>.done`).
 */
function streamToolInput(
  push: (type: string, payload: Record<string, unknown>) => void,
  item: Record<string, unknown>,
  itemId: string,
  outputIndex: number,
  event: "function_call_arguments" | "custom_tool_call_input",
  field: "arguments" | "input",
): void {
  const text = String(item[field]);
  push("response.output_item.added", {
    output_index: outputIndex,
    item: { ...item, [field]: "", status: "in_progress" },
  });
  for (const delta of pieces(text)) {
    push(`response.${event}.delta`, { item_id: itemId, output_index: outputIndex, delta });
  }
  push(`response.${event}.done`, { item_id: itemId, output_index: outputIndex, [field]: text });
}

export function responsesEvents(
  reply: ScriptedReply,
  model: string,
  usage: ReplyUsage,
  customTools: ReadonlySet<string>,
): SseEvent[] {
  const id = randomId("resp_");
  const events: SseEvent[] = [];
  let sequence = 0;
  const push = (type: string, payload: Record<string, unknown>) => {
    events.push({
      event: type,
      data: JSON.stringify({ type, sequence_number: sequence, ...payload }),
    });
    sequence += 1;
  };
  const items = responsesOutputItems(reply, customTools);
  push("response.created", {
    response: responseEnvelope(id, model, "in_progress", [], null, reply),
  });
  push("response.in_progress", {
    response: responseEnvelope(id, model, "in_progress", [], null, reply),
  });
  for (const [outputIndex, item] of items.entries()) {
    const itemId = String(item.id);
    if (item.type === "message") {
      const text = reply.text ?? "";
      push("response.output_item.added", {
        output_index: outputIndex,
        item: { ...item, status: "in_progress", content: [] },
      });
      const emptyPart = { type: "output_text", text: "", annotations: [], logprobs: [] };
      push("response.content_part.added", {
        item_id: itemId,
        output_index: outputIndex,
        content_index: 0,
        part: emptyPart,
      });
      for (const delta of pieces(text))
        push("response.output_text.delta", {
          item_id: itemId,
          output_index: outputIndex,
          content_index: 0,
          delta,
          logprobs: [],
        });
      push("response.output_text.done", {
        item_id: itemId,
        output_index: outputIndex,
        content_index: 0,
        text,
        logprobs: [],
      });
      push("response.content_part.done", {
        item_id: itemId,
        output_index: outputIndex,
        content_index: 0,
        part: { ...emptyPart, text },
      });
    } else if (item.type === "function_call") {
      streamToolInput(push, item, itemId, outputIndex, "function_call_arguments", "arguments");
    } else {
      streamToolInput(push, item, itemId, outputIndex, "custom_tool_call_input", "input");
    }
    push("response.output_item.done", { output_index: outputIndex, item });
  }
  push("response.completed", {
    response: responseEnvelope(id, model, "completed", items, responsesUsage(usage), reply),
  });
  return events;
}
