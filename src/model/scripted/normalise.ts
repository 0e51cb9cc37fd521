/**
 * Reduce a request body of any of the three APIs to the fields scripts match on and tests
 * assert on. Request bodies come from real clients and are untrusted: every access is defensive
 * and a surprising shape yields empty fields, never an exception.
 */
import type { MatchableRequest } from "./script.js";

export type ScriptedApi = MatchableRequest["api"];

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function asString(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** Text of a content value that is a string, an array of parts, or a part. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map(textOf)
      .filter((part) => part !== "")
      .join("\n");
  if (isObject(content)) {
    if (typeof content.text === "string") return content.text;
    if ("content" in content) return textOf(content.content);
    if ("output" in content) return textOf(content.output);
  }
  return "";
}

export function normaliseRequest(api: ScriptedApi, body: unknown): MatchableRequest {
  const request = isObject(body) ? body : {};
  const model = asString(request.model);
  switch (api) {
    case "anthropic":
      return { api, model, ...normaliseAnthropic(request) };
    case "openai-chat":
      return { api, model, ...normaliseChat(request) };
    case "openai-responses":
      return { api, model, ...normaliseResponses(request) };
  }
}

type Fields = Omit<MatchableRequest, "api" | "model">;

function normaliseAnthropic(request: Json): Fields {
  const system = textOf(request.system);
  const toolNames = asArray(request.tools)
    .map((tool) => (isObject(tool) ? asString(tool.name) : ""))
    .filter((name) => name !== "");
  const toolResults: string[] = [];
  let lastUserMessage = "";
  for (const message of asArray(request.messages)) {
    if (!isObject(message) || message.role !== "user") continue;
    const texts: string[] = [];
    const content = message.content;
    if (typeof content === "string") texts.push(content);
    for (const block of asArray(content)) {
      if (!isObject(block)) continue;
      if (block.type === "tool_result") toolResults.push(textOf(block.content));
      else if (block.type === "text") texts.push(asString(block.text));
    }
    lastUserMessage = texts.join("\n");
  }
  return { system, toolNames, lastUserMessage, toolResults };
}

function normaliseChat(request: Json): Fields {
  const systemParts: string[] = [];
  const toolResults: string[] = [];
  // The latest user-side turn: the messages after the last assistant message.
  let userTurn: string[] = [];
  for (const message of asArray(request.messages)) {
    if (!isObject(message)) continue;
    switch (message.role) {
      case "system":
      case "developer":
        systemParts.push(textOf(message.content));
        break;
      case "assistant":
        userTurn = [];
        break;
      case "tool":
      case "function":
        toolResults.push(textOf(message.content));
        break;
      case "user":
        userTurn.push(textOf(message.content));
        break;
    }
  }
  const toolNames = asArray(request.tools)
    .map((tool) => {
      if (!isObject(tool)) return "";
      return isObject(tool.function) ? asString(tool.function.name) : asString(tool.name);
    })
    .filter((name) => name !== "");
  return {
    system: systemParts.join("\n"),
    toolNames,
    lastUserMessage: userTurn.join("\n"),
    toolResults,
  };
}

const responsesToolOutputTypes = new Set([
  "function_call_output",
  "custom_tool_call_output",
  "local_shell_call_output",
  "shell_call_output",
  "apply_patch_call_output",
]);

function normaliseResponses(request: Json): Fields {
  const systemParts: string[] = [];
  if (typeof request.instructions === "string") systemParts.push(request.instructions);
  const toolResults: string[] = [];
  let userTurn: string[] = [];
  const input =
    typeof request.input === "string"
      ? [{ role: "user", content: request.input }]
      : asArray(request.input);
  for (const item of input) {
    if (!isObject(item)) continue;
    const type = asString(item.type);
    if (responsesToolOutputTypes.has(type)) {
      toolResults.push(textOf(item.output));
      continue;
    }
    if (type !== "" && type !== "message") {
      // Calls and reasoning are the assistant's side of the conversation.
      userTurn = [];
      continue;
    }
    if (item.role === "system" || item.role === "developer") systemParts.push(textOf(item.content));
    else if (item.role === "assistant") userTurn = [];
    else if (item.role === "user") userTurn.push(textOf(item.content));
  }
  // Built-in tools (web_search, local_shell, ...) have a type and no name; a `namespace` tool
  // (Codex's sub-agent tools) groups further tools, which are offered too.
  const toolNames = asArray(request.tools).flatMap((tool): string[] => {
    if (!isObject(tool)) return [];
    const name = asString(tool.name) || asString(tool.type);
    const nested = asArray(tool.tools)
      .map((inner) => (isObject(inner) ? asString(inner.name) : ""))
      .filter((innerName) => innerName !== "");
    return [name, ...nested].filter((each) => each !== "");
  });
  return {
    system: systemParts.join("\n"),
    toolNames,
    lastUserMessage: userTurn.join("\n"),
    toolResults,
  };
}
