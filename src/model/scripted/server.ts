/**
 * The scripted model server: a local HTTP server (node:http only) speaking the Anthropic Messages
 * API and the OpenAI Chat Completions and Responses APIs, answering from a script, recording
 * every request, and injecting faults on demand.
 *
 * One file (~410 lines) on purpose: it is one request handler whose routing, recording, fault
 * injection and script cursor share per-server state (the cursor, the seeded fault draws, the
 * recorded list); the wire formats, request normalising and embeddings are already modules of
 * their own. Splitting the handler would pass that state between files for no reader's gain.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InfrastructureError } from "../../core/errors.js";
import { defaultEmbeddingDimensions, embeddingWords, scriptedEmbedding } from "./embeddings.js";
import { normaliseRequest, type ScriptedApi } from "./normalise.js";
import { type Script, ScriptCursor, type ScriptedReply } from "./script.js";
import {
  anthropicEvents,
  anthropicMessage,
  chatCompletion,
  chatEvents,
  formatSse,
  type SseEvent,
  usageFor,
} from "./wire.js";
import { responsesEvents, responsesResponse } from "./wire-responses.js";

export interface RecordedRequest {
  api:
    | "anthropic"
    | "anthropic-count-tokens"
    | "openai-chat"
    | "openai-responses"
    | "openai-embeddings";
  path: string;
  model: string;
  stream: boolean;
  /** With authorization / x-api-key values redacted. */
  headers: Record<string, string>;
  /** The raw JSON body as received. */
  body: unknown;
  /** All system / developer / instructions text joined. */
  system: string;
  toolNames: string[];
  /** User text of the latest user-side turn, tool results excluded ("" right after tool results). */
  lastUserMessage: string;
  toolResults: string[];
  /** What the server answered, tool call ids filled in (absent for injected faults). */
  reply?: ScriptedReply;
  fault?: "429" | "500" | "drop";
}

export interface ScriptedServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface ScriptedServerOptions {
  script: Script;
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Called with each request once it is recorded (e.g. to append it to a JSONL file). */
  onRequest?: (request: RecordedRequest) => void;
}

/** mulberry32: a small seeded PRNG, so a fault pattern replays exactly for a given seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const secretHeaders = new Set(["authorization", "x-api-key", "api-key", "proxy-authorization"]);

function recordHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers[name] = secretHeaders.has(name)
      ? "[REDACTED]"
      : Array.isArray(value)
        ? value.join(", ")
        : value;
  }
  return headers;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function sendJson(
  response: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(value);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...headers,
  });
  response.end(body);
}

function sendSse(
  response: ServerResponse,
  events: readonly SseEvent[],
  headers: Record<string, string> = {},
): void {
  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    ...headers,
  });
  for (const event of events) response.write(formatSse(event));
  response.end();
}

function errorBody(api: ScriptedApi | "anthropic-count-tokens", status: number, message: string) {
  if (api === "anthropic" || api === "anthropic-count-tokens") {
    const type =
      status === 429
        ? "rate_limit_error"
        : status === 404
          ? "not_found_error"
          : status === 400
            ? "invalid_request_error"
            : "api_error";
    return { type: "error", error: { type, message } };
  }
  const type =
    status === 429
      ? "rate_limit_exceeded"
      : status === 400
        ? "invalid_request_error"
        : "server_error";
  return { error: { message, type, param: null, code: type } };
}

const routes: Record<string, RecordedRequest["api"]> = {
  "/v1/messages": "anthropic",
  "/v1/messages/count_tokens": "anthropic-count-tokens",
  "/v1/chat/completions": "openai-chat",
  "/v1/responses": "openai-responses",
  "/v1/embeddings": "openai-embeddings",
};

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** Names of tools offered as freeform `custom` tools in a Responses request. */
function customToolNames(body: unknown): Set<string> {
  const names = new Set<string>();
  const tools =
    typeof body === "object" && body !== null ? (body as { tools?: unknown }).tools : undefined;
  if (!Array.isArray(tools)) return names;
  for (const tool of tools) {
    if (typeof tool === "object" && tool !== null) {
      const { type, name } = tool as { type?: unknown; name?: unknown };
      if (type === "custom" && typeof name === "string") names.add(name);
    }
  }
  return names;
}

function withIds(reply: ScriptedReply, prefix: string): ScriptedReply {
  if (reply.toolCalls === undefined) return reply;
  return {
    ...reply,
    toolCalls: reply.toolCalls.map((call) => ({
      ...call,
      id: call.id ?? `${prefix}${randomBytes(12).toString("hex")}`,
    })),
  };
}

/** `POST /v1/embeddings` in the OpenAI shape, answered by the scripted bag-of-words model. */
function answerEmbeddings(
  body: unknown,
  path: string,
  request: IncomingMessage,
  response: ServerResponse,
  script: Script,
  record: (entry: RecordedRequest) => void,
): void {
  const fields = (typeof body === "object" && body !== null ? body : {}) as {
    input?: unknown;
    model?: unknown;
  };
  const input = typeof fields.input === "string" ? [fields.input] : fields.input;
  const model = typeof fields.model === "string" ? fields.model : "";
  if (!Array.isArray(input) || !input.every((item) => typeof item === "string")) {
    sendJson(
      response,
      400,
      errorBody("openai-chat", 400, "input must be a string or an array of strings"),
    );
    return;
  }
  const texts = input as string[];
  record({
    api: "openai-embeddings",
    path,
    model,
    stream: false,
    headers: recordHeaders(request),
    body,
    system: "",
    toolNames: [],
    lastUserMessage: texts.join("\n"),
    toolResults: [],
  });
  const dimensions = script.embeddings?.dimensions ?? defaultEmbeddingDimensions;
  const tokens = texts.reduce((sum, text) => sum + embeddingWords(text).length, 0);
  sendJson(response, 200, {
    object: "list",
    model,
    data: texts.map((text, index) => ({
      object: "embedding",
      index,
      embedding: scriptedEmbedding(text, dimensions),
    })),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

/** What every request of one server shares: the script's cursor, its faults and the record. */
interface ServerState {
  readonly script: Script;
  readonly cursor: ScriptCursor;
  readonly faults: NonNullable<Script["faults"]>;
  readonly random: () => number;
  readonly record: (entry: RecordedRequest) => void;
}

/** `GET /v1/models`: the ids clients check before they send anything. */
function answerModels(response: ServerResponse): void {
  const created = Math.floor(Date.now() / 1000);
  const ids = ["scripted-model", "claude-haiku-4-5", "gpt-5-mini"];
  sendJson(response, 200, {
    object: "list",
    data: ids.map((id) => ({
      id,
      object: "model",
      type: "model",
      created,
      owned_by: "skillsmith",
      display_name: id,
    })),
  });
}

/** A request's JSON body; undefined once malformed JSON was answered with a 400, as the real APIs do. */
function jsonBodyOr400(
  raw: string,
  api: RecordedRequest["api"],
  response: ServerResponse,
): { readonly body: unknown } | undefined {
  try {
    return { body: JSON.parse(raw) };
  } catch {
    sendJson(
      response,
      400,
      errorBody(
        api === "openai-embeddings" ? "openai-chat" : api,
        400,
        "request body is not valid JSON",
      ),
    );
    return undefined;
  }
}

/** Answers with the script's injected fault when the draw says so; true when it did. */
async function injectedFault(
  state: ServerState,
  entry: RecordedRequest & { api: ScriptedApi },
  request: IncomingMessage,
  response: ServerResponse,
): Promise<boolean> {
  const { faults } = state;
  if ((faults.latencyMs ?? 0) > 0) await delay(faults.latencyMs ?? 0);
  const draw = state.random();
  const rate429 = faults.rate429 ?? 0;
  const rate500 = faults.rate500 ?? 0;
  const rateDrop = faults.rateDrop ?? 0;
  if (draw < rate429) {
    state.record({ ...entry, fault: "429" });
    sendJson(response, 429, errorBody(entry.api, 429, "scripted rate limit"), {
      "retry-after": String(faults.retryAfterSeconds ?? 1),
    });
    return true;
  }
  if (draw < rate429 + rate500) {
    state.record({ ...entry, fault: "500" });
    sendJson(response, 500, errorBody(entry.api, 500, "scripted server error"));
    return true;
  }
  if (draw < rate429 + rate500 + rateDrop) {
    state.record({ ...entry, fault: "drop" });
    request.socket.destroy();
    return true;
  }
  return false;
}

/** The scripted reply in the wire format of the request's API, streamed when it asked. */
function sendReply(
  response: ServerResponse,
  entry: RecordedRequest & { api: ScriptedApi },
  reply: ScriptedReply,
  rawLength: number,
): void {
  const usage = usageFor(reply, rawLength);
  const model = entry.model === "" ? "scripted-model" : entry.model;
  const { body, stream } = entry;
  switch (entry.api) {
    case "anthropic":
      if (stream) sendSse(response, anthropicEvents(reply, model, usage));
      else sendJson(response, 200, anthropicMessage(reply, model, usage));
      return;
    case "openai-chat": {
      if (stream) {
        const streamOptions = (body as { stream_options?: { include_usage?: unknown } })
          .stream_options;
        sendSse(response, chatEvents(reply, model, usage, streamOptions?.include_usage === true));
      } else sendJson(response, 200, chatCompletion(reply, model, usage));
      return;
    }
    case "openai-responses": {
      const custom = customToolNames(body);
      if (stream) sendSse(response, responsesEvents(reply, model, usage, custom));
      else sendJson(response, 200, responsesResponse(reply, model, usage, custom));
      return;
    }
  }
}

async function handleRequest(
  state: ServerState,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = new URL(request.url ?? "/", "http://localhost").pathname.replace(/\/+$/, "");
  if (request.method === "GET" && (path === "/v1/models" || path === "/models")) {
    answerModels(response);
    return;
  }
  const api = routes[path];
  if (request.method !== "POST" || api === undefined) {
    await readBody(request);
    sendJson(response, 404, {
      error: { message: `no route for ${request.method} ${path}`, type: "not_found" },
    });
    return;
  }
  const raw = await readBody(request);
  const parsed = jsonBodyOr400(raw, api, response);
  if (parsed === undefined) return;
  const { body } = parsed;
  if (api === "openai-embeddings") {
    answerEmbeddings(body, path, request, response, state.script, state.record);
    return;
  }
  const matchable = normaliseRequest(api === "anthropic-count-tokens" ? "anthropic" : api, body);
  const entry: RecordedRequest = {
    api,
    path,
    model: matchable.model,
    stream:
      typeof body === "object" && body !== null && (body as { stream?: unknown }).stream === true,
    headers: recordHeaders(request),
    body,
    system: matchable.system,
    toolNames: matchable.toolNames,
    lastUserMessage: matchable.lastUserMessage,
    toolResults: matchable.toolResults,
  };
  if (api === "anthropic-count-tokens") {
    state.record(entry);
    sendJson(response, 200, { input_tokens: Math.ceil(raw.length / 4) });
    return;
  }
  const modelEntry = { ...entry, api };
  if (await injectedFault(state, modelEntry, request, response)) return;
  const reply = withIds(state.cursor.next(matchable), api === "anthropic" ? "toolu_" : "call_");
  state.record({ ...entry, reply });
  sendReply(response, modelEntry, reply, raw.length);
}

/** Start a scripted model server; resolves once it listens. Port 0 (default) picks a free port. */
export function startScriptedServer(options: ScriptedServerOptions): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const host = options.host ?? "127.0.0.1";
  const faults = options.script.faults ?? {};
  const state: ServerState = {
    script: options.script,
    cursor: new ScriptCursor(options.script),
    faults,
    random: seededRandom(faults.seed ?? 1),
    record: (entry) => {
      requests.push(entry);
      options.onRequest?.(entry);
    },
  };
  const server = createServer((request, response) => {
    handleRequest(state, request, response).catch((error: unknown) => {
      if (!response.headersSent)
        sendJson(response, 500, {
          error: {
            message: error instanceof Error ? error.message : String(error),
            type: "server_error",
          },
        });
      else response.destroy();
    });
  });
  // Keep-alive sockets would hold `close()` open; clients reconnect when needed.
  server.keepAliveTimeout = 1_000;

  return new Promise((resolve, reject) => {
    server.once("error", (cause) =>
      reject(
        new InfrastructureError(
          "model.scripted-listen",
          `cannot listen on ${host}:${options.port ?? 0}`,
          {
            cause,
            data: { host, port: options.port ?? 0 },
          },
        ),
      ),
    );
    server.listen(options.port ?? 0, host, () => {
      const port = (server.address() as AddressInfo).port;
      const urlHost = host.includes(":") ? `[${host}]` : host;
      resolve({
        url: `http://${urlHost}:${port}`,
        port,
        requests,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error === undefined ? done() : fail(error)));
            server.closeAllConnections();
          }),
      });
    });
  });
}
