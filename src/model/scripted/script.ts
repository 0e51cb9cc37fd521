/**
 * The script a scripted model server answers from: rules matched against each request, then
 * ordered turns, then a fallback. Only a model's words are scripted; the HTTP, the SDKs and the
 * agent CLIs talking to the server are real.
 */
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { z } from "zod";
import { InputError } from "../../core/errors.js";
import { parseInput } from "../../core/parse.js";
import { readYamlValue } from "../../core/yaml.js";

export interface ScriptedToolCall {
  name: string;
  input: Record<string, unknown>;
  id?: string;
}

export interface ScriptedReply {
  /** Assistant text (may be combined with tool calls). */
  text?: string;
  /** tool_use blocks (Anthropic) / tool_calls (Chat) / function_call items (Responses). */
  toolCalls?: ScriptedToolCall[];
  /** `inputTokens` counts every input token, cached ones included (as OpenAI reports it). */
  usage?: { inputTokens?: number; outputTokens?: number; cachedInputTokens?: number };
  /** Derived from `toolCalls` when omitted. */
  stopReason?: "end_turn" | "tool_use" | "max_tokens";
}

/** Every given field must match (AND); regexes are JavaScript source strings. */
export interface ScriptMatch {
  /** Regex over the user text of the latest user-side turn (tool results excluded). */
  lastUserMessage?: string;
  /** Regex over the text of the most recent tool result in the request. */
  toolResult?: string;
  /** Exact name of a tool that must be offered in the request. */
  toolOffered?: string;
  /** Regex over the system prompt (all system text joined). */
  system?: string;
  api?: "anthropic" | "openai-chat" | "openai-responses";
  /** Regex over the requested model id. */
  model?: string;
}

export interface ScriptRule {
  match: ScriptMatch;
  reply: ScriptedReply;
  /** How often the rule may fire; unlimited when omitted. */
  times?: number;
}

export interface ScriptFaults {
  rate429?: number;
  rate500?: number;
  rateDrop?: number;
  latencyMs?: number;
  retryAfterSeconds?: number;
  seed?: number;
}

export interface Script {
  /** Checked first, in order; the first match with remaining `times` wins. */
  rules?: ScriptRule[];
  /** Then the next unconsumed turn, in order. */
  turns?: ScriptedReply[];
  /** Then this; default: text "(script exhausted)" with end_turn. */
  fallback?: ScriptedReply;
  /** Shares in [0,1], drawn with a seeded PRNG. */
  faults?: ScriptFaults;
  /** `POST /v1/embeddings`: the bag-of-words vectors' length (default 256). */
  embeddings?: { dimensions?: number };
}

const regexSource = z.string().refine(
  (source) => {
    try {
      new RegExp(source);
      return true;
    } catch {
      // A probe: zod reports the invalid pattern with its path in the script.
      return false;
    }
  },
  { message: "expected a valid JavaScript regular expression" },
);

const toolCallSchema = z.strictObject({
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  id: z.string().min(1).optional(),
});

const replySchema = z.strictObject({
  text: z.string().optional(),
  toolCalls: z.array(toolCallSchema).optional(),
  usage: z
    .strictObject({
      inputTokens: z.number().int().nonnegative().optional(),
      outputTokens: z.number().int().nonnegative().optional(),
      cachedInputTokens: z.number().int().nonnegative().optional(),
    })
    .optional(),
  stopReason: z.enum(["end_turn", "tool_use", "max_tokens"]).optional(),
});

const share = z.number().min(0).max(1);

export const scriptSchema = z
  .strictObject({
    rules: z
      .array(
        z.strictObject({
          match: z.strictObject({
            lastUserMessage: regexSource.optional(),
            toolResult: regexSource.optional(),
            toolOffered: z.string().optional(),
            system: regexSource.optional(),
            api: z.enum(["anthropic", "openai-chat", "openai-responses"]).optional(),
            model: regexSource.optional(),
          }),
          reply: replySchema,
          times: z.number().int().positive().optional(),
        }),
      )
      .optional(),
    turns: z.array(replySchema).optional(),
    fallback: replySchema.optional(),
    faults: z
      .strictObject({
        rate429: share.optional(),
        rate500: share.optional(),
        rateDrop: share.optional(),
        latencyMs: z.number().nonnegative().optional(),
        retryAfterSeconds: z.number().nonnegative().optional(),
        seed: z.number().int().optional(),
      })
      .refine(
        (faults) => (faults.rate429 ?? 0) + (faults.rate500 ?? 0) + (faults.rateDrop ?? 0) <= 1,
        { message: "rate429 + rate500 + rateDrop must not exceed 1" },
      )
      .optional(),
    embeddings: z
      .strictObject({ dimensions: z.number().int().min(1).max(8192).optional() })
      .optional(),
  })
  .describe("scripted model server script");

/**
 * Validate an already-parsed script object; `source` names the file in error messages, and
 * `lineOf` (a YAML file's) the line of a failing field.
 */
export function parseScript(
  value: unknown,
  source = "script",
  lineOf?: (path: readonly (string | number)[]) => number | undefined,
): Script {
  // A cast only for optional fields: zod infers them as `T | undefined`, `Script` leaves them out;
  // the strict schema checks every field `Script` has.
  return parseInput(scriptSchema, value, {
    code: "model.script-invalid",
    location: { file: source },
    ...(lineOf === undefined ? {} : { lineOf }),
    describe: (problem) =>
      `${problem.message} (a script has optional "rules", "turns", "fallback" and "faults")`,
  }) as Script;
}

/** Read a script file (JSON, or YAML for `.yaml`/`.yml`). */
export async function loadScript(path: string): Promise<Script> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (cause) {
    throw new InputError(
      "model.script-unreadable",
      "cannot read the script file",
      { file: path },
      {
        cause,
      },
    );
  }
  const extension = extname(path).toLowerCase();
  if (extension === ".yaml" || extension === ".yml") {
    const read = readYamlValue(text);
    if (!read.ok)
      throw new InputError("model.script-syntax", `not valid YAML: ${read.error.message}`, {
        file: path,
        ...(read.error.line === undefined ? {} : { line: read.error.line }),
      });
    return parseScript(read.value.value, path, read.value.lineOf);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new InputError(
      "model.script-syntax",
      `not valid JSON: ${cause instanceof Error ? cause.message : String(cause)}`,
      { file: path },
      { cause },
    );
  }
  return parseScript(value, path);
}

/** What the matcher sees of a request, normalised across the three APIs. */
export interface MatchableRequest {
  api: "anthropic" | "openai-chat" | "openai-responses";
  model: string;
  system: string;
  toolNames: string[];
  lastUserMessage: string;
  toolResults: string[];
}

export const exhaustedReply: ScriptedReply = { text: "(script exhausted)", stopReason: "end_turn" };

/**
 * The script's mutable state: how often each rule fired and which turn is next. One instance per
 * server, so concurrent requests consume turns in arrival order.
 */
export class ScriptCursor {
  private readonly ruleUses: number[];
  private readonly compiled: { match: ScriptMatch; regexes: Partial<Record<string, RegExp>> }[];
  private nextTurn = 0;

  constructor(private readonly script: Script) {
    const rules = script.rules ?? [];
    this.ruleUses = rules.map(() => 0);
    this.compiled = rules.map((rule) => ({
      match: rule.match,
      regexes: {
        lastUserMessage: compile(rule.match.lastUserMessage),
        toolResult: compile(rule.match.toolResult),
        system: compile(rule.match.system),
        model: compile(rule.match.model),
      },
    }));
  }

  /** Pick the reply for a request and consume it (a rule's use or a turn). */
  next(request: MatchableRequest): ScriptedReply {
    const rules = this.script.rules ?? [];
    for (const [index, rule] of rules.entries()) {
      const uses = this.ruleUses[index] ?? 0;
      if (rule.times !== undefined && uses >= rule.times) continue;
      const compiled = this.compiled[index];
      if (compiled === undefined || !matches(compiled.match, compiled.regexes, request)) continue;
      this.ruleUses[index] = uses + 1;
      return rule.reply;
    }
    const turns = this.script.turns ?? [];
    const turn = turns[this.nextTurn];
    if (turn !== undefined) {
      this.nextTurn += 1;
      return turn;
    }
    return this.script.fallback ?? exhaustedReply;
  }
}

function compile(source: string | undefined): RegExp | undefined {
  return source === undefined ? undefined : new RegExp(source);
}

function matches(
  match: ScriptMatch,
  regexes: Partial<Record<string, RegExp>>,
  request: MatchableRequest,
): boolean {
  if (match.api !== undefined && match.api !== request.api) return false;
  if (match.toolOffered !== undefined && !request.toolNames.includes(match.toolOffered))
    return false;
  if (regexes.model !== undefined && !regexes.model.test(request.model)) return false;
  if (regexes.system !== undefined && !regexes.system.test(request.system)) return false;
  if (
    regexes.lastUserMessage !== undefined &&
    !regexes.lastUserMessage.test(request.lastUserMessage)
  )
    return false;
  if (regexes.toolResult !== undefined) {
    const latest = request.toolResults.at(-1);
    if (latest === undefined || !regexes.toolResult.test(latest)) return false;
  }
  return true;
}

/** Stop reason of a reply: explicit, else `tool_use` when it calls tools. */
export function stopReasonOf(reply: ScriptedReply): "end_turn" | "tool_use" | "max_tokens" {
  if (reply.stopReason !== undefined) return reply.stopReason;
  return (reply.toolCalls?.length ?? 0) > 0 ? "tool_use" : "end_turn";
}
