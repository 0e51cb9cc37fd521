/**
 * `ModelClient`: one model, reached through the AI SDK with skillsmith's call policy (retries,
 * concurrency limit, cache, usage ledger, redaction). `generateText` for free text and tool
 * calls, `generateObject` for zod-validated structured output, `languageModel(role)` for agent
 * loops that drive the AI SDK themselves.
 */
// Types only: the AI SDK loads on the first call (~0.2 s of start-up for commands calling no model).
import type { ModelMessage, ToolSet } from "ai";
import { z } from "zod";
import { definedFields } from "../core/defined.js";
import { InfrastructureError, isSkillsmithError } from "../core/errors.js";
import { Semaphore } from "../core/limit.js";
import type { CacheMode, ModelCallCache } from "./cache.js";
import {
  loadModelConfig,
  type ModelConfig,
  type ProviderFlags,
  type ResolvedProviderSettings,
  resolveProviderSettings,
} from "./config.js";
import { ModelOutputError } from "./errors.js";
import { createCallPolicyMiddleware } from "./middleware.js";
import type { TokenUsage } from "./prices.js";
import {
  createLanguageModel,
  type LanguageModelOptions,
  type ProviderLanguageModel,
} from "./provider.js";
import { redactSecrets } from "./redact.js";
import type { RetryOptions } from "./retry.js";
import { type ModelSpec, parseModelSpec } from "./spec.js";
import { UsageLedger } from "./usage.js";

export const defaultConcurrency = 4;

/**
 * Semaphores per provider, shared by every client given the same `ProviderLimits`. A provider's
 * limit is fixed when its semaphore is first needed: the constructor's figure, else the hint of
 * that first caller (its config file), else `defaultConcurrency`.
 */
export class ProviderLimits {
  private readonly semaphores = new Map<string, Semaphore>();

  constructor(private readonly limits: Readonly<Record<string, number>> = {}) {}

  for(provider: string, limitHint?: number): Semaphore {
    let semaphore = this.semaphores.get(provider);
    if (semaphore === undefined) {
      semaphore = new Semaphore(this.limits[provider] ?? limitHint ?? defaultConcurrency);
      this.semaphores.set(provider, semaphore);
    }
    return semaphore;
  }
}

/** Clients created without explicit limits share these, so the limit holds across a process. */
const processLimits = new ProviderLimits();

export interface ModelClientOptions extends LanguageModelOptions {
  /** A spec string (`anthropic:claude-haiku-4-5`) or a parsed spec. */
  readonly spec: string | ModelSpec;
  readonly flags?: ProviderFlags;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  /** The `model` config section; loaded from `skillsmith.config.json` when omitted. */
  readonly config?: ModelConfig;
  readonly cache?: ModelCallCache;
  readonly cacheMode?: CacheMode;
  readonly retry?: RetryOptions;
  /** Concurrency limits per provider; by default one set shared by the whole process. */
  readonly limits?: ProviderLimits;
  readonly ledger?: UsageLedger;
}

export interface TextRequest {
  /** What the call is for (requirement-writer, solver, critic...): usage is totalled per role. */
  readonly role: string;
  readonly system?: string;
  readonly prompt?: string;
  readonly messages?: ModelMessage[];
  /** Tool definitions (without `execute`): the answer's tool calls are returned, not run. */
  readonly tools?: ToolSet;
  readonly temperature?: number;
  readonly maxOutputTokens?: number;
  readonly seed?: number;
  readonly abortSignal?: AbortSignal;
}

export interface TextResult {
  readonly text: string;
  readonly toolCalls: { toolCallId: string; toolName: string; input: unknown }[];
  readonly finishReason: string;
  readonly usage: TokenUsage;
  /** True when every model call behind this result came from the cache. */
  readonly fromCache: boolean;
}

export interface ObjectResult<T> {
  readonly object: T;
  readonly usage: TokenUsage;
  /** 1, or 2 when the first answer failed validation and the repair attempt succeeded. */
  readonly attempts: number;
}

const zeroUsage: TokenUsage = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };

function addUsage(left: TokenUsage, right: TokenUsage): TokenUsage {
  return {
    inputTokens: left.inputTokens + right.inputTokens,
    cachedInputTokens: left.cachedInputTokens + right.cachedInputTokens,
    outputTokens: left.outputTokens + right.outputTokens,
  };
}

/** Pull a JSON value out of an answer that may wrap it in prose or a code fence. */
export function extractJson(
  text: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  const candidates = [fenced?.[1], text];
  const start = text.search(/[[{]/);
  if (start >= 0) {
    const end = Math.max(text.lastIndexOf("}"), text.lastIndexOf("]"));
    if (end > start) candidates.push(text.slice(start, end + 1));
  }
  let lastError = "the answer contains no JSON";
  for (const candidate of candidates) {
    if (candidate === undefined || candidate.trim() === "") continue;
    try {
      return { ok: true, value: JSON.parse(candidate.trim()) };
    } catch (error) {
      lastError = `the answer is not valid JSON: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  return { ok: false, error: lastError };
}

export class ModelClient {
  readonly spec: ModelSpec;
  readonly settings: ResolvedProviderSettings;
  readonly ledger: UsageLedger;
  /** Created on first use, so that constructing a client loads no provider package. */
  private baseModel: Promise<ProviderLanguageModel> | undefined;
  private readonly semaphore: Semaphore;
  private readonly knownSecrets: string[];

  constructor(private readonly options: ModelClientOptions) {
    this.spec = typeof options.spec === "string" ? parseModelSpec(options.spec) : options.spec;
    const env = options.env ?? process.env;
    const config =
      options.config ?? loadModelConfig({ cwd: options.cwd ?? process.cwd(), env }).config;
    this.settings = resolveProviderSettings(this.spec, {
      ...(options.flags === undefined ? {} : { flags: options.flags }),
      env,
      config,
    });
    this.knownSecrets = this.settings.apiKey === undefined ? [] : [this.settings.apiKey];
    this.ledger = options.ledger ?? new UsageLedger(config.prices ?? {});
    this.semaphore = (options.limits ?? processLimits).for(
      this.spec.provider,
      config.concurrency?.[this.spec.provider],
    );
  }

  /**
   * The model wrapped with the call policy, its usage booked under `role`: for agent loops that
   * call the AI SDK (`generateText` with tools, `streamText`) themselves.
   */
  async languageModel(
    role: string,
    onCall?: (usage: TokenUsage, fromCache: boolean) => void,
  ): Promise<ProviderLanguageModel> {
    const { wrapLanguageModel } = await import("ai");
    this.baseModel ??= createLanguageModel(this.spec, this.settings, this.options);
    return wrapLanguageModel({
      model: await this.baseModel,
      middleware: createCallPolicyMiddleware({
        provider: this.spec.provider,
        model: this.spec.model,
        ...definedFields({
          cache: this.options.cache,
          cacheMode: this.options.cacheMode,
          retry: this.options.retry,
        }),
        semaphore: this.semaphore,
        knownSecrets: this.knownSecrets,
        onUsage: (usage, details) => {
          this.ledger.record({ role, spec: this.spec, usage, fromCache: details.fromCache });
          onCall?.(usage, details.fromCache);
        },
      }),
    });
  }

  /** One model call (no tool execution): text, tool calls, usage. */
  async generateText(request: TextRequest): Promise<TextResult> {
    let usage = zeroUsage;
    let allFromCache = true;
    const { generateText } = await import("ai");
    const model = await this.languageModel(request.role, (callUsage, fromCache) => {
      usage = addUsage(usage, callUsage);
      allFromCache &&= fromCache;
    });
    try {
      const result = await generateText({
        model,
        // Our middleware is the only retry layer, so the SDK's own is off.
        maxRetries: 0,
        ...(request.system === undefined ? {} : { system: request.system }),
        ...(request.messages === undefined
          ? { prompt: request.prompt ?? "" }
          : { messages: request.messages }),
        ...definedFields({
          tools: request.tools,
          temperature: request.temperature,
          maxOutputTokens: request.maxOutputTokens,
          seed: request.seed,
          abortSignal: request.abortSignal,
        }),
      });
      return {
        text: result.text,
        toolCalls: result.toolCalls.map((call) => ({
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.input,
        })),
        finishReason: result.finishReason,
        usage,
        fromCache: allFromCache,
      };
    } catch (error) {
      throw this.typedFailure(error);
    }
  }

  /**
   * Structured output: the model is asked for JSON matching `schema`, the answer is validated
   * with zod, and on failure asked once more with the validation error. A second failure is a
   * `ModelOutputError` (the model's fault), never an infrastructure error.
   */
  async generateObject<T>(
    schema: z.ZodType<T>,
    request: TextRequest & { readonly schemaDescription?: string },
  ): Promise<ObjectResult<T>> {
    const jsonSchema = JSON.stringify(z.toJSONSchema(schema, { unrepresentable: "any" }));
    const instruction = [
      request.schemaDescription,
      `Answer with one JSON value that conforms to this JSON Schema, and nothing else (no prose, no code fence):\n${jsonSchema}`,
    ]
      .filter((part) => part !== undefined)
      .join("\n");
    const system =
      request.system === undefined ? instruction : `${request.system}\n\n${instruction}`;
    const messages: ModelMessage[] = request.messages ?? [
      { role: "user", content: request.prompt ?? "" },
    ];
    let usage = zeroUsage;
    let problem = "";
    let answer = "";
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      const conversation: ModelMessage[] =
        attempt === 1
          ? messages
          : [
              ...messages,
              { role: "assistant", content: answer },
              {
                role: "user",
                content: `That answer was rejected: ${problem}\nAnswer again with only the corrected JSON value.`,
              },
            ];
      // Structured output offers no tools: the answer must be the JSON value itself.
      const { tools: _offeredTools, ...withoutTools } = request;
      const result = await this.generateText({
        ...withoutTools,
        system,
        messages: conversation,
      });
      usage = addUsage(usage, result.usage);
      answer = result.text;
      const extracted = extractJson(answer);
      if (!extracted.ok) {
        problem = extracted.error;
        continue;
      }
      const parsed = schema.safeParse(extracted.value);
      if (parsed.success) return { object: parsed.data, usage, attempts: attempt };
      problem = `it does not match the schema: ${parsed.error.issues
        .map(
          (issue) =>
            `${issue.path.length === 0 ? "(root)" : issue.path.join(".")}: ${issue.message}`,
        )
        .join("; ")}`;
    }
    throw new ModelOutputError(
      redactSecrets(
        `${this.describe()} gave no valid structured output after a repair attempt: ${problem}`,
        this.knownSecrets,
      ),
      { data: { answer: redactSecrets(answer.slice(0, 2_000), this.knownSecrets), usage } },
    );
  }

  private describe(): string {
    return `${this.spec.provider}:${this.spec.model}`;
  }

  /** Every failure leaves as a typed, redacted skillsmith error. */
  private typedFailure(error: unknown): Error {
    if (isSkillsmithError(error)) {
      if (error.family !== "infrastructure") return error;
      return new InfrastructureError(error.code, redactSecrets(error.message, this.knownSecrets), {
        cause: error.cause,
        retryable: error.retryable,
        data: redactSecrets(error.data, this.knownSecrets),
      });
    }
    const message = error instanceof Error ? error.message : String(error);
    const statusCode = (error as { statusCode?: unknown }).statusCode;
    return new InfrastructureError(
      "model.request-failed",
      redactSecrets(`${this.describe()} request failed: ${message}`, this.knownSecrets),
      {
        cause: error,
        retryable: false,
        data: typeof statusCode === "number" ? { statusCode } : {},
      },
    );
  }
}
