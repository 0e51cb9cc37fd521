/**
 * One AI SDK middleware that gives any language model our call policy: cache lookup (and
 * replay-only), a per-provider concurrency limit, retries with backoff, and a usage callback.
 * As middleware it applies to `generateText`, `streamText` and agent loops alike.
 */
import type { LanguageModelMiddleware } from "ai";
import type { Semaphore } from "../core/limit.js";
import { type CacheMode, cacheKey, type ModelCallCache } from "./cache.js";
import { CacheMissError } from "./errors.js";
import type { TokenUsage } from "./prices.js";
import { redactSecrets } from "./redact.js";
import { type RetryOptions, withRetries } from "./retry.js";

type WrapGenerate = NonNullable<LanguageModelMiddleware["wrapGenerate"]>;
type WrapStream = NonNullable<LanguageModelMiddleware["wrapStream"]>;
type CallOptions = Parameters<WrapGenerate>[0]["params"];
type GenerateResult = Awaited<ReturnType<WrapGenerate>>;
type StreamResult = Awaited<ReturnType<WrapStream>>;
type StreamPart = StreamResult["stream"] extends ReadableStream<infer Part> ? Part : never;
type Content = GenerateResult["content"][number];
type Usage = GenerateResult["usage"];

export interface CallPolicy {
  readonly provider: string;
  readonly model: string;
  readonly cache?: ModelCallCache;
  readonly cacheMode?: CacheMode;
  readonly retry?: RetryOptions;
  readonly semaphore?: Semaphore;
  /** Secret values never to store (the API key, at least). */
  readonly knownSecrets?: readonly string[];
  /** Called once per answered call, with normalised token counts. */
  readonly onUsage?: (
    usage: TokenUsage,
    details: { fromCache: boolean; cacheKey?: string },
  ) => void;
}

/**
 * The settings that can change an answer. Listed explicitly (not "everything but headers"), so
 * credentials or transport details added to the call options later cannot leak into the key.
 */
/** The fields of a call that can change its answer (see `callIdentity`). */
type CallIdentity = Pick<
  CallOptions,
  | "prompt"
  | "tools"
  | "toolChoice"
  | "responseFormat"
  | "maxOutputTokens"
  | "temperature"
  | "topP"
  | "topK"
  | "presencePenalty"
  | "frequencyPenalty"
  | "stopSequences"
  | "seed"
  | "providerOptions"
>;

// The return type is named, not inferred: an inferred one printed `JSONSchema7` (a type of
// @ai-sdk/provider's) into our declarations without its import, failing skipLibCheck: false.
export function callIdentity(params: CallOptions): {
  [Key in keyof CallIdentity]-?: CallIdentity[Key] | undefined;
} {
  return {
    prompt: params.prompt,
    tools: params.tools,
    toolChoice: params.toolChoice,
    responseFormat: params.responseFormat,
    maxOutputTokens: params.maxOutputTokens,
    temperature: params.temperature,
    topP: params.topP,
    topK: params.topK,
    presencePenalty: params.presencePenalty,
    frequencyPenalty: params.frequencyPenalty,
    stopSequences: params.stopSequences,
    seed: params.seed,
    providerOptions: params.providerOptions,
  };
}

/** What is stored per call: the answer, not the transport (no headers, no raw bodies). */
interface StoredCall {
  content: Content[];
  finishReason: GenerateResult["finishReason"];
  usage: Usage;
  providerMetadata?: GenerateResult["providerMetadata"];
  response?: { id?: string; modelId?: string; timestamp?: string };
}

export function normaliseUsage(usage: Usage): TokenUsage {
  return {
    inputTokens: usage.inputTokens.total ?? 0,
    cachedInputTokens: usage.inputTokens.cacheRead ?? 0,
    outputTokens: usage.outputTokens.total ?? 0,
  };
}

function toStored(result: GenerateResult): StoredCall {
  return {
    content: result.content,
    finishReason: result.finishReason,
    usage: { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens },
    ...(result.providerMetadata === undefined ? {} : { providerMetadata: result.providerMetadata }),
    response: {
      ...(result.response?.id === undefined ? {} : { id: result.response.id }),
      ...(result.response?.modelId === undefined ? {} : { modelId: result.response.modelId }),
      ...(result.response?.timestamp === undefined
        ? {}
        : { timestamp: result.response.timestamp.toISOString() }),
    },
  };
}

function fromStored(stored: StoredCall): GenerateResult {
  return {
    content: stored.content,
    finishReason: stored.finishReason,
    usage: stored.usage,
    ...(stored.providerMetadata === undefined ? {} : { providerMetadata: stored.providerMetadata }),
    response: {
      ...(stored.response?.id === undefined ? {} : { id: stored.response.id }),
      ...(stored.response?.modelId === undefined ? {} : { modelId: stored.response.modelId }),
      ...(stored.response?.timestamp === undefined
        ? {}
        : { timestamp: new Date(stored.response.timestamp) }),
    },
    warnings: [],
  };
}

/** Replay a stored answer as the stream parts a provider would have produced. */
function streamFromStored(stored: StoredCall): ReadableStream<StreamPart> {
  const parts: StreamPart[] = [{ type: "stream-start", warnings: [] }];
  for (const [index, item] of stored.content.entries()) {
    const id = String(index);
    if (item.type === "text") {
      parts.push(
        { type: "text-start", id },
        { type: "text-delta", id, delta: item.text },
        { type: "text-end", id },
      );
    } else if (item.type === "reasoning") {
      parts.push(
        { type: "reasoning-start", id },
        { type: "reasoning-delta", id, delta: item.text },
        { type: "reasoning-end", id },
      );
    } else {
      parts.push(item as StreamPart);
    }
  }
  parts.push({
    type: "finish",
    finishReason: stored.finishReason,
    usage: stored.usage,
    ...(stored.providerMetadata === undefined ? {} : { providerMetadata: stored.providerMetadata }),
  });
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

/** Assemble stream parts back into the content of a call, for storing a streamed answer. */
class StreamCollector {
  private readonly content: Content[] = [];
  private readonly texts = new Map<string, { type: "text" | "reasoning"; text: string }>();
  finish?: Extract<StreamPart, { type: "finish" }>;
  failed = false;

  add(part: StreamPart): void {
    switch (part.type) {
      case "text-start":
      case "reasoning-start": {
        const entry = {
          type: part.type === "text-start" ? ("text" as const) : ("reasoning" as const),
          text: "",
        };
        this.texts.set(`${entry.type}:${part.id}`, entry);
        this.content.push(entry as Content);
        break;
      }
      case "text-delta":
      case "reasoning-delta": {
        const entry = this.texts.get(
          `${part.type === "text-delta" ? "text" : "reasoning"}:${part.id}`,
        );
        if (entry !== undefined) entry.text += part.delta;
        break;
      }
      case "tool-call":
      case "tool-result":
      case "file":
      case "source":
        this.content.push(part as Content);
        break;
      case "finish":
        this.finish = part;
        break;
      case "error":
        this.failed = true;
        break;
      default:
        break;
    }
  }

  stored(): StoredCall | undefined {
    if (this.failed || this.finish === undefined) return undefined;
    return {
      content: this.content,
      finishReason: this.finish.finishReason,
      usage: this.finish.usage,
      ...(this.finish.providerMetadata === undefined
        ? {}
        : { providerMetadata: this.finish.providerMetadata }),
    };
  }
}

export function createCallPolicyMiddleware(policy: CallPolicy): LanguageModelMiddleware {
  const mode = policy.cache === undefined ? "off" : (policy.cacheMode ?? "use");
  const label = `${policy.provider}:${policy.model}`;
  const keyOf = (params: CallOptions) =>
    cacheKey({ provider: policy.provider, model: policy.model, request: callIdentity(params) });
  const store = (key: string, stored: StoredCall) => {
    if (policy.cache === undefined || (mode !== "use" && mode !== "refresh")) return;
    policy.cache.set(
      key,
      { provider: policy.provider, model: policy.model },
      redactSecrets(stored, policy.knownSecrets),
    );
  };
  const lookup = (key: string): StoredCall | undefined => {
    if (policy.cache === undefined) return undefined;
    if (mode === "use" || mode === "replay-only") {
      const hit = policy.cache.get(key) as StoredCall | undefined;
      if (hit !== undefined) return hit;
    }
    if (mode === "replay-only") throw new CacheMissError(key, policy.cache.path);
    return undefined;
  };
  const limited = <T>(task: () => PromiseLike<T>): Promise<T> =>
    policy.semaphore === undefined
      ? Promise.resolve(task())
      : policy.semaphore.run(async () => task());

  /** Tells the policy what a call used, and whether the cache answered it (under which key). */
  const reportUsage = (
    usage: Parameters<typeof normaliseUsage>[0],
    fromCache: boolean,
    key: string | undefined,
  ) =>
    policy.onUsage?.(normaliseUsage(usage), {
      fromCache,
      ...(key === undefined ? {} : { cacheKey: key }),
    });

  return {
    specificationVersion: "v3",
    wrapGenerate: async ({ doGenerate, params }) => {
      const key = mode === "off" ? undefined : keyOf(params);
      const hit = key === undefined ? undefined : lookup(key);
      if (hit !== undefined) {
        reportUsage(hit.usage, true, key);
        return fromStored(hit);
      }
      const result = await withRetries(() => limited(doGenerate), policy.retry, label);
      if (key !== undefined) store(key, toStored(result));
      reportUsage(result.usage, false, key);
      return result;
    },
    wrapStream: async ({ doStream, params }) => {
      const key = mode === "off" ? undefined : keyOf(params);
      const hit = key === undefined ? undefined : lookup(key);
      if (hit !== undefined) {
        reportUsage(hit.usage, true, key);
        return { stream: streamFromStored(hit) };
      }
      // Only opening the stream is retried: once parts reach the caller a retry would repeat them.
      const { result, release } = await withRetries(
        async () => {
          const release =
            policy.semaphore === undefined ? () => {} : await policy.semaphore.acquire();
          try {
            return { result: await doStream(), release };
          } catch (error) {
            release();
            throw error;
          }
        },
        policy.retry,
        label,
      );
      const collector = new StreamCollector();
      const reader = result.stream.getReader();
      let released = false;
      const finish = () => {
        if (released) return;
        released = true;
        release();
      };
      // A pulling wrapper (not a TransformStream) so a cancelled stream also frees its permit.
      const observed = new ReadableStream<StreamPart>({
        async pull(controller) {
          let next: Awaited<ReturnType<typeof reader.read>>;
          try {
            next = await reader.read();
          } catch (error) {
            finish();
            controller.error(error);
            return;
          }
          if (!next.done) {
            collector.add(next.value);
            controller.enqueue(next.value);
            return;
          }
          finish();
          controller.close();
          const stored = collector.stored();
          if (stored === undefined) return;
          if (key !== undefined) store(key, stored);
          reportUsage(stored.usage, false, key);
        },
        async cancel(reason) {
          finish();
          await reader.cancel(reason);
        },
      });
      return { ...result, stream: observed };
    },
  };
}
