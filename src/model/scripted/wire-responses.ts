/**
 * The OpenAI Responses wire format of a scripted reply: one JSON body, or the server-sent event
 * sequence the real API streams (items added, content and tool input in deltas, sequence
 * numbers). The shared pieces (ids, usage, tool calls, chunking) are in `wire.ts`.
 */
import { type ScriptedReply, stopReasonOf } from "./script.js";
import { pieces, type ReplyUsage, randomId, resolveToolCalls, type SseEvent } from "./wire.js";

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
