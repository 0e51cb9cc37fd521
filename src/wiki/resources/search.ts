/**
 * Resource search for online acquisition: backends that turn a targeted query into resources
 * to fetch. One versioned interface (`ResourceSearchBackendV1`); backends are registered by
 * kind (`registerSearchBackend`) and created from a validated configuration, so a new source is
 * a registration, not a branch in the acquisition.
 *
 * Built in:
 * - `github`, `search: "repositories"`: GitHub's REST search (`GET /search/repositories`); each
 *   hit is the repository, cloned at its default branch by the URL connector.
 * - `github`, `search: "code"`: `GET /search/code` (needs a token); each hit is one file of a
 *   repository at the commit GitHub names in the hit's `html_url`, cloned by the URL connector
 *   and read as a repository limited to that file.
 * - `json-endpoint`: any OpenSearch-style or JSON search endpoint, by URL template (variables
 *   below) and a JSON path to the result URLs in the answer.
 * - `folder`: a local folder of resources, ranked by BM25 against the query.
 *
 * Every request has a time limit and a size cap; an endpoint that is down, slow, rate-limited or
 * answers something that is not the promised JSON fails with a typed error naming the backend
 * and the request (never the token), and the acquisition records it and carries on.
 */
import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { z } from "zod";
import {
  InfrastructureError,
  InputError,
  type InputLocation,
  isSkillsmithError,
} from "../../core/errors.js";
import { isMissing, unlessMissing, unreadableError } from "../../core/fs.js";
import { registerSecret } from "../../model/redact.js";
import { Bm25Index } from "../bm25.js";
import { type ResourceType, resourceTypes } from "../meta.js";
import {
  GITHUB_API_URL,
  GITHUB_API_URL_VARIABLE,
  GITHUB_TOKEN_VARIABLE,
} from "../online-constants.js";
import { listResourceInputs, type ResourceInput } from "./collect.js";
import type { TargetedQuery } from "./query.js";
import { repositoryFiles } from "./repository.js";

/** One resource a backend found: a URL to fetch, or a local resource. */
export type SearchHit =
  | {
      readonly kind: "url";
      /** What to fetch (http or https). */
      readonly url: string;
      /** Repositories: the branch, tag or commit to clone. */
      readonly ref?: string;
      readonly type?: ResourceType;
      /** Code hits: the repository files the resource is limited to. */
      readonly files?: readonly string[];
      /** The manifest path (and so the skill ids' source path); default: the URL (+ #ref). */
      readonly manifestPath?: string;
      readonly title?: string;
      /** A licence the search answer states (SPDX id). */
      readonly licence?: string;
    }
  | { readonly kind: "local"; readonly input: ResourceInput; readonly title?: string };

export interface SearchAnswer {
  /** The request as sent, for the record: method and URL, credentials left out. */
  readonly request: string;
  readonly hits: SearchHit[];
  /** The total the endpoint reported, when it reports one. */
  readonly total?: number;
}

export interface SearchContext {
  /** Time limit of one search request (headers and body). */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export interface ResourceSearchBackendV1 {
  readonly specificationVersion: "v1";
  /** The registered kind that made it, e.g. `github`. */
  readonly kind: string;
  /** A stable, credential-free name for records and messages, e.g. `github:code`. */
  readonly name: string;
  /** At most `limit` hits, best first. */
  search(query: TargetedQuery, limit: number, context: SearchContext): Promise<SearchAnswer>;
}

export interface BackendEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Where the configuration came from, for error messages. */
  readonly where: InputLocation;
}

interface BackendDefinition<Config> {
  readonly schema: z.ZodType<Config>;
  readonly create: (config: Config, environment: BackendEnvironment) => ResourceSearchBackendV1;
}

const registry = new Map<string, BackendDefinition<unknown>>();

/** Register a backend kind; its configurations are `{"kind": "<kind>", …}` checked by `schema`. */
export function registerSearchBackend<Config>(
  kind: string,
  definition: BackendDefinition<Config>,
): void {
  registry.set(kind, definition as BackendDefinition<unknown>);
}

export function searchBackendKinds(): string[] {
  return [...registry.keys()].sort();
}

/** A backend from its configuration; an unknown kind or a bad field is the user's mistake. */
export function createSearchBackend(
  config: unknown,
  environment: BackendEnvironment,
): ResourceSearchBackendV1 {
  const kind =
    typeof config === "object" && config !== null && "kind" in config
      ? (config as { kind: unknown }).kind
      : undefined;
  const definition = typeof kind === "string" ? registry.get(kind) : undefined;
  if (definition === undefined)
    throw new InputError(
      "wiki.search.unknown-kind",
      `unknown search backend kind ${JSON.stringify(kind ?? null)}; registered: ${searchBackendKinds().join(", ")}`,
      { ...environment.where, field: [environment.where.field, "kind"].filter(Boolean).join(".") },
    );
  const parsed = definition.schema.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputError(
      "wiki.search.config",
      `search backend "${String(kind)}": ${issue?.message ?? "invalid configuration"}`,
      {
        ...environment.where,
        field: [environment.where.field, ...(issue?.path ?? []).map(String)]
          .filter(Boolean)
          .join("."),
      },
    );
  }
  return definition.create(parsed.data, environment);
}

// ------------------------------------------------------------------------------------------
// HTTP for search requests

export const DEFAULT_SEARCH_TIMEOUT_MS = 15_000;
/** A search answer is a page of results; anything larger is not one. */
export const MAX_SEARCH_ANSWER_BYTES = 5 * 1024 * 1024;

function seconds(milliseconds: number): string {
  return `${Number((milliseconds / 1000).toFixed(3))} s`;
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
}

interface JsonAnswer {
  readonly value: unknown;
  readonly headers: Headers;
}

/**
 * GET a JSON document with a time limit over headers and body and a size cap. `shown` is the
 * URL as it may be printed (without secrets). Rate limits (429, or 403 with
 * `x-ratelimit-remaining: 0`) name when to retry.
 */
export async function getJson(
  url: string,
  options: {
    readonly backend: string;
    readonly shown: string;
    readonly headers?: Record<string, string>;
    readonly timeoutMs: number;
    readonly signal?: AbortSignal;
    readonly now?: () => Date;
  },
): Promise<JsonAnswer> {
  const what = `search ${options.backend}: GET ${options.shown}`;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  const onAbort = () => controller.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const timeout = (cause?: unknown) =>
    new InfrastructureError(
      "wiki.search.timeout",
      `${what}: no complete answer within ${seconds(options.timeoutMs)}`,
      { retryable: true, data: { backend: options.backend, timeoutMs: options.timeoutMs }, cause },
    );
  try {
    let response: Response;
    try {
      response = await fetch(url, {
        signal: controller.signal,
        redirect: "follow",
        headers: {
          "user-agent": "skillsmith-wiki",
          accept: "application/json",
          ...options.headers,
        },
      });
    } catch (cause) {
      if (timedOut) throw timeout(cause);
      throw new InfrastructureError(
        "wiki.search.unreachable",
        `${what} failed: ${networkReason(cause)}`,
        { retryable: true, data: { backend: options.backend }, cause },
      );
    }
    let text: string;
    try {
      text = await readCapped(response, MAX_SEARCH_ANSWER_BYTES, what);
    } catch (cause) {
      if (isSkillsmithError(cause)) throw cause;
      if (timedOut) throw timeout(cause);
      throw new InfrastructureError(
        "wiki.search.interrupted",
        `${what}: the answer broke off: ${networkReason(cause)}`,
        { retryable: true, data: { backend: options.backend }, cause },
      );
    }
    if (!response.ok) throw statusError(response, text, what, options);
    try {
      return { value: JSON.parse(text), headers: response.headers };
    } catch {
      throw new InfrastructureError(
        "wiki.search.invalid-answer",
        `${what}: the answer is not JSON (Content-Type "${response.headers.get("content-type") ?? "none"}", starts ${JSON.stringify(text.slice(0, 60))})`,
        { data: { backend: options.backend } },
      );
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

async function readCapped(response: Response, cap: number, what: string): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  const tooLarge = () =>
    new InfrastructureError(
      "wiki.search.too-large",
      `${what}: the answer is larger than ${cap} bytes, which no page of search results is`,
    );
  if (Number.isFinite(declared) && declared > cap) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (response.body === null) return "";
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > cap) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The error of a non-2xx answer: rate limits and server errors are retryable, 4xx are the user's. */
function statusError(
  response: Response,
  body: string,
  what: string,
  options: { backend: string; now?: () => Date },
): Error {
  const status = `HTTP ${response.status}${response.statusText === "" ? "" : ` ${response.statusText}`}`;
  let message = "";
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === "string") message = parsed.message;
  } catch {
    // Not a JSON error body (an HTML error page, plain text): its first line is the message.
    message = body.trim().split("\n")[0]?.slice(0, 160) ?? "";
  }
  // The message is the server's: no control characters reach a terminal or a log line.
  const clean = message
    .replace(/\p{Cc}+/gu, " ")
    .replace(/ {2,}/g, " ")
    .trim()
    .slice(0, 200);
  const detail = clean === "" ? "" : `: ${clean}`;
  const remaining = response.headers.get("x-ratelimit-remaining");
  const retryAfter = Number(response.headers.get("retry-after") ?? Number.NaN);
  const reset = Number(response.headers.get("x-ratelimit-reset") ?? Number.NaN);
  const rateLimited =
    response.status === 429 ||
    (response.status === 403 &&
      (remaining === "0" || Number.isFinite(retryAfter) || /rate limit/i.test(message)));
  if (rateLimited) {
    const when = Number.isFinite(retryAfter)
      ? `retry after ${retryAfter} s (retry-after)`
      : Number.isFinite(reset)
        ? `retry after ${new Date(reset * 1000).toISOString()} (x-ratelimit-reset)`
        : "retry in a minute or more";
    return new InfrastructureError(
      "wiki.search.rate-limited",
      `${what}: rate-limited (${status}${detail}); ${when}`,
      {
        retryable: true,
        data: {
          backend: options.backend,
          status: response.status,
          ...(Number.isFinite(retryAfter) ? { retryAfterSeconds: retryAfter } : {}),
          ...(Number.isFinite(reset) ? { resetAt: new Date(reset * 1000).toISOString() } : {}),
        },
      },
    );
  }
  if (response.status === 401)
    return new InputError(
      "wiki.search.unauthorised",
      `${what}: answered ${status}${detail}; check the token`,
      {},
      {
        data: { backend: options.backend, status: response.status },
      },
    );
  if (response.status >= 400 && response.status < 500)
    return new InputError(
      "wiki.search.status",
      `${what}: answered ${status}${detail}`,
      {},
      {
        data: { backend: options.backend, status: response.status },
      },
    );
  return new InfrastructureError("wiki.search.status", `${what}: answered ${status}${detail}`, {
    retryable: response.status >= 500,
    data: { backend: options.backend, status: response.status },
  });
}

function invalidAnswer(backend: string, request: string, problem: string): InfrastructureError {
  return new InfrastructureError(
    "wiki.search.invalid-answer",
    `search ${backend}: GET ${request}: ${problem}`,
    { data: { backend } },
  );
}

// ------------------------------------------------------------------------------------------
// GitHub

export { GITHUB_API_URL, GITHUB_API_URL_VARIABLE, GITHUB_TOKEN_VARIABLE };

const githubConfigSchema = z.strictObject({
  kind: z.literal("github"),
  search: z.enum(["repositories", "code"]).default("repositories"),
  /** REST API base URL (GitHub Enterprise, a test server); default GITHUB_API_URL, then api.github.com. */
  apiUrl: z.url().optional(),
  /** The environment variable holding the token (default GITHUB_TOKEN). */
  tokenVariable: z.string().min(1).default(GITHUB_TOKEN_VARIABLE),
  /** Search qualifiers appended to the terms, e.g. `language:css stars:>50`. */
  qualifiers: z.string().max(200).optional(),
});
type GithubConfig = z.infer<typeof githubConfigSchema>;

const githubLicenceSchema = z
  .object({ spdx_id: z.string().nullable().optional() })
  .nullable()
  .optional();
const repositoryHitSchema = z.object({
  full_name: z.string(),
  html_url: z.string(),
  clone_url: z.string().optional(),
  default_branch: z.string().optional(),
  description: z.string().nullable().optional(),
  license: githubLicenceSchema,
});
const codeHitSchema = z.object({
  name: z.string(),
  path: z.string(),
  html_url: z.string(),
  url: z.string().optional(),
  repository: z.object({
    full_name: z.string(),
    html_url: z.string(),
    clone_url: z.string().optional(),
  }),
});
const searchPageSchema = (item: z.ZodType) =>
  z.object({
    total_count: z.number().int().nonnegative(),
    incomplete_results: z.boolean().optional(),
    items: z.array(item),
  });

function spdxOf(licence: z.infer<typeof githubLicenceSchema>): string | undefined {
  const id = licence?.spdx_id ?? undefined;
  return id === undefined || id === null || id === "NOASSERTION" ? undefined : id;
}

/** `…/<owner>/<repo>/blob/<ref>/<path>` → ref and path (decoded). */
export function blobLocation(htmlUrl: string): { ref: string; path: string } | undefined {
  let url: URL;
  try {
    url = new URL(htmlUrl);
  } catch {
    // Not a URL at all: the caller skips the hit, as for any other URL that is not a blob.
    return undefined;
  }
  const segments = url.pathname.split("/");
  const blob = segments.indexOf("blob");
  if (blob < 0 || blob + 2 >= segments.length) return undefined;
  try {
    return {
      ref: decodeURIComponent(segments[blob + 1] ?? ""),
      path: segments
        .slice(blob + 2)
        .map((segment) => decodeURIComponent(segment))
        .join("/"),
    };
  } catch {
    // A malformed percent escape names no file: skipped like any other non-blob URL.
    return undefined;
  }
}

class GithubSearchBackend implements ResourceSearchBackendV1 {
  readonly specificationVersion = "v1" as const;
  readonly kind = "github";
  readonly name: string;
  private readonly apiUrl: string;
  private readonly token: string | undefined;

  constructor(
    private readonly config: GithubConfig,
    environment: BackendEnvironment,
  ) {
    this.apiUrl = (
      config.apiUrl ??
      environment.env[GITHUB_API_URL_VARIABLE] ??
      GITHUB_API_URL
    ).replace(/\/+$/, "");
    const token = environment.env[config.tokenVariable];
    this.token = token === undefined || token.trim() === "" ? undefined : token.trim();
    // Whatever variable holds it, the token is a known secret for every store from now on.
    registerSecret(this.token);
    this.name = `github:${config.search}${this.apiUrl === GITHUB_API_URL ? "" : `@${this.apiUrl}`}`;
    // GitHub answers code search only to authenticated requests: say so before any search.
    if (config.search === "code" && this.token === undefined)
      throw new InputError(
        "wiki.search.github-token",
        `GitHub code search needs a token: set ${config.tokenVariable} (a fine-grained token with read access to public repositories is enough)`,
        environment.where,
      );
  }

  async search(query: TargetedQuery, limit: number, context: SearchContext): Promise<SearchAnswer> {
    const q = [query.text, this.config.qualifiers ?? ""].filter((part) => part !== "").join(" ");
    const perPage = Math.min(100, Math.max(1, limit));
    const shown = `${this.apiUrl}/search/${this.config.search}?q=${encodeURIComponent(q)}&per_page=${perPage}`;
    const { value } = await getJson(shown, {
      backend: this.name,
      shown,
      timeoutMs: context.timeoutMs,
      ...(context.signal === undefined ? {} : { signal: context.signal }),
      headers: {
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
        ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
      },
    });
    const request = `GET ${shown}`;
    if (this.config.search === "repositories") {
      const page = searchPageSchema(repositoryHitSchema).safeParse(value);
      if (!page.success)
        throw invalidAnswer(
          this.name,
          shown,
          `not a GitHub search answer (${page.error.issues[0]?.message ?? "unexpected shape"} at ${page.error.issues[0]?.path.join(".") || "the top"})`,
        );
      const items = page.data.items as z.infer<typeof repositoryHitSchema>[];
      return {
        request,
        total: page.data.total_count,
        hits: items.slice(0, limit).map((item) => {
          const licence = spdxOf(item.license);
          return {
            kind: "url" as const,
            url: item.clone_url ?? `${item.html_url.replace(/\/+$/, "")}.git`,
            ...(item.default_branch === undefined ? {} : { ref: item.default_branch }),
            type: "repository" as const,
            title: item.description ? `${item.full_name}: ${item.description}` : item.full_name,
            ...(licence === undefined ? {} : { licence }),
          };
        }),
      };
    }
    const page = searchPageSchema(codeHitSchema).safeParse(value);
    if (!page.success)
      throw invalidAnswer(
        this.name,
        shown,
        `not a GitHub code search answer (${page.error.issues[0]?.message ?? "unexpected shape"} at ${page.error.issues[0]?.path.join(".") || "the top"})`,
      );
    const hits: SearchHit[] = [];
    for (const item of page.data.items as z.infer<typeof codeHitSchema>[]) {
      if (hits.length >= limit) break;
      const location = blobLocation(item.html_url);
      const ref =
        location?.ref ??
        (item.url === undefined
          ? undefined
          : (new URL(item.url).searchParams.get("ref") ?? undefined));
      // Without a readable commit the default branch is cloned; the file is checked there.
      const cloneUrl =
        item.repository.clone_url ?? `${item.repository.html_url.replace(/\/+$/, "")}.git`;
      hits.push({
        kind: "url",
        url: cloneUrl,
        ...(ref === undefined || ref === "" ? {} : { ref }),
        type: "repository",
        files: [location?.path ?? item.path],
        manifestPath: item.html_url,
        title: `${item.repository.full_name}: ${item.path}`,
      });
    }
    return { request, total: page.data.total_count, hits };
  }
}

registerSearchBackend("github", {
  schema: githubConfigSchema,
  create: (config, environment) => new GithubSearchBackend(config, environment),
});

// ------------------------------------------------------------------------------------------
// Any JSON (OpenSearch-style) endpoint by URL template

/**
 * Template variables (OpenSearch 1.1 names, plus three of ours), each URL-encoded when filled:
 * `{searchTerms}` the query's words; `{count}` how many results are wanted; `{startIndex}` 1;
 * `{startPage}` 1; `{language}` `*`; `{inputEncoding}` and `{outputEncoding}` `UTF-8`;
 * `{domain}` the wiki domain; `{task}` the whole task text; `{apiKey}` the value of the
 * environment variable `apiKeyVariable` names (never recorded: records show `{apiKey}`).
 * A trailing `?` (`{count?}`) marks an optional variable and is accepted.
 */
export const TEMPLATE_VARIABLES = [
  "searchTerms",
  "count",
  "startIndex",
  "startPage",
  "language",
  "inputEncoding",
  "outputEncoding",
  "domain",
  "task",
  "apiKey",
] as const;
type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
const TEMPLATE_VARIABLE = /\{([A-Za-z]+)\??\}/g;

function checkTemplate(template: string): string | undefined {
  let url: URL;
  try {
    url = new URL(template.replace(TEMPLATE_VARIABLE, "x"));
  } catch {
    // The parse failure is the finding: the caller reports this message naming the field.
    return "is not a URL once its variables are filled";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return `must be an http or https URL, not ${url.protocol}`;
  const variables = [...template.matchAll(TEMPLATE_VARIABLE)].map((match) => match[1] ?? "");
  const unknown = variables.filter(
    (name) => !(TEMPLATE_VARIABLES as readonly string[]).includes(name),
  );
  if (unknown.length > 0)
    return `has unknown variable${unknown.length === 1 ? "" : "s"} ${unknown.map((name) => `{${name}}`).join(", ")}; known: ${TEMPLATE_VARIABLES.map((name) => `{${name}}`).join(", ")}`;
  if (!variables.includes("searchTerms") && !variables.includes("task"))
    return "has neither {searchTerms} nor {task}, so the query would not reach the endpoint";
  return undefined;
}

export function fillTemplate(
  template: string,
  values: Readonly<Record<TemplateVariable, string>>,
): string {
  return template.replace(TEMPLATE_VARIABLE, (_, name: string) =>
    encodeURIComponent(values[name as TemplateVariable] ?? ""),
  );
}

/** One step of a JSON path: a key, an index, or every element / member (`*`). */
type PathStep = { key: string } | { index: number } | { all: true };

/**
 * A JSON path in the common subset: `$`, `.key`, `['key']` / `["key"]`, `[n]`, `[*]` and `.*`.
 * Examples: `$.items[*].link`, `$.data.results[*].url`, `$[3][*]` (the URLs of an OpenSearch
 * suggestions answer, `[query, [terms], [descriptions], [urls]]`).
 */
export function parseJsonPath(path: string): PathStep[] | string {
  if (!path.startsWith("$")) return 'must start with "$"';
  const patterns: readonly [RegExp, (match: RegExpExecArray) => PathStep][] = [
    [/^\.([A-Za-z_$][\w$-]*)/, (match) => ({ key: match[1] ?? "" })],
    [/^(?:\.\*|\[\*\])/, () => ({ all: true })],
    [/^\[(\d+)\]/, (match) => ({ index: Number(match[1]) })],
    [/^\[(['"])((?:(?!\1).)*)\1\]/, (match) => ({ key: match[2] ?? "" })],
  ];
  const steps: PathStep[] = [];
  let rest = path.slice(1);
  while (rest !== "") {
    let matched: RegExpExecArray | undefined;
    for (const [pattern, step] of patterns) {
      const match = pattern.exec(rest);
      if (match === null) continue;
      steps.push(step(match));
      matched = match;
      break;
    }
    if (matched === undefined) return `cannot read ${JSON.stringify(rest.slice(0, 20))}`;
    rest = rest.slice(matched[0].length);
  }
  return steps;
}

/**
 * The values a path selects. A key or index missing along the way is reported (with what was
 * there instead), so a wrong path reads as a wrong path, not as "no results".
 */
export function selectJsonPath(
  value: unknown,
  steps: readonly PathStep[],
): { values: unknown[] } | { missing: string } {
  let current: { value: unknown; at: string }[] = [{ value, at: "$" }];
  for (const step of steps) {
    const next: { value: unknown; at: string }[] = [];
    for (const { value: node, at } of current) {
      if ("all" in step) {
        if (Array.isArray(node))
          for (const [index, each] of node.entries())
            next.push({ value: each, at: `${at}[${index}]` });
        else if (typeof node === "object" && node !== null)
          for (const [key, each] of Object.entries(node))
            next.push({ value: each, at: `${at}.${key}` });
        else return { missing: `${at} is ${describe(node)}, not an array or object` };
      } else if ("index" in step) {
        if (!Array.isArray(node)) return { missing: `${at} is ${describe(node)}, not an array` };
        if (step.index < node.length)
          next.push({ value: node[step.index], at: `${at}[${step.index}]` });
        else return { missing: `${at} has ${node.length} elements, no [${step.index}]` };
      } else {
        if (typeof node !== "object" || node === null || Array.isArray(node))
          return { missing: `${at} is ${describe(node)}, not an object with "${step.key}"` };
        if (!(step.key in node))
          return {
            missing: `${at} has no "${step.key}" (it has ${
              Object.keys(node)
                .slice(0, 8)
                .map((key) => `"${key}"`)
                .join(", ") || "no keys"
            })`,
          };
        next.push({ value: (node as Record<string, unknown>)[step.key], at: `${at}.${step.key}` });
      }
    }
    current = next;
  }
  return { values: current.map((each) => each.value) };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

const endpointConfigSchema = z.strictObject({
  kind: z.literal("json-endpoint"),
  /** A short name for records and messages (default: the template's host). */
  name: z.string().min(1).max(64).optional(),
  /** The request URL with variables, e.g. `https://search.example/api?q={searchTerms}&n={count}`. */
  template: z.string().superRefine((template, context) => {
    const problem = checkTemplate(template);
    if (problem !== undefined) context.addIssue({ code: "custom", message: `template ${problem}` });
  }),
  /** JSON path to the result URLs (strings) in the answer, e.g. `$.items[*].link`. */
  results: z.string().superRefine((path, context) => {
    const parsed = parseJsonPath(path);
    if (typeof parsed === "string")
      context.addIssue({
        code: "custom",
        message: `results path ${JSON.stringify(path)} ${parsed}`,
      });
  }),
  /** The resource type of every result (default: told by each URL and its Content-Type). */
  type: z.enum(resourceTypes).optional(),
  /** The environment variable whose value fills `{apiKey}`. */
  apiKeyVariable: z.string().min(1).optional(),
});
type EndpointConfig = z.infer<typeof endpointConfigSchema>;

class JsonEndpointBackend implements ResourceSearchBackendV1 {
  readonly specificationVersion = "v1" as const;
  readonly kind = "json-endpoint";
  readonly name: string;
  private readonly steps: PathStep[];
  private readonly apiKey: string;

  constructor(
    private readonly config: EndpointConfig,
    environment: BackendEnvironment,
  ) {
    this.name = `json:${config.name ?? new URL(config.template.replace(TEMPLATE_VARIABLE, "x")).host}`;
    this.steps = parseJsonPath(config.results) as PathStep[];
    const usesKey = /\{apiKey\??\}/.test(config.template);
    const key =
      config.apiKeyVariable === undefined ? undefined : environment.env[config.apiKeyVariable];
    if (usesKey && (key === undefined || key === ""))
      throw new InputError(
        "wiki.search.api-key",
        config.apiKeyVariable === undefined
          ? "the template uses {apiKey}: name the environment variable holding it in apiKeyVariable"
          : `the template uses {apiKey}, but ${config.apiKeyVariable} is not set`,
        environment.where,
      );
    this.apiKey = key ?? "";
    registerSecret(key);
  }

  async search(query: TargetedQuery, limit: number, context: SearchContext): Promise<SearchAnswer> {
    const values = {
      searchTerms: query.text,
      count: String(limit),
      startIndex: "1",
      startPage: "1",
      language: "*",
      inputEncoding: "UTF-8",
      outputEncoding: "UTF-8",
      domain: query.domain,
      task: query.task,
      apiKey: this.apiKey,
    };
    const url = fillTemplate(this.config.template, values);
    const shown = fillTemplate(this.config.template.replace(/\{apiKey\??\}/g, "\u0000"), {
      ...values,
      apiKey: "",
    }).replaceAll("%00", "{apiKey}");
    const { value } = await getJson(url, {
      backend: this.name,
      shown,
      timeoutMs: context.timeoutMs,
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    });
    const selected = selectJsonPath(value, this.steps);
    if ("missing" in selected)
      throw invalidAnswer(
        this.name,
        shown,
        `the results path ${this.config.results} does not match the answer: ${selected.missing}`,
      );
    const hits: SearchHit[] = [];
    for (const [index, each] of selected.values.entries()) {
      if (typeof each !== "string")
        throw invalidAnswer(
          this.name,
          shown,
          `result ${index} of ${this.config.results} is ${describe(each)}, not a URL string`,
        );
      if (hits.length < limit)
        hits.push({
          kind: "url",
          url: each,
          ...(this.config.type === undefined ? {} : { type: this.config.type }),
        });
    }
    return { request: `GET ${shown}`, total: selected.values.length, hits };
  }
}

registerSearchBackend("json-endpoint", {
  schema: endpointConfigSchema,
  create: (config, environment) => new JsonEndpointBackend(config, environment),
});

// ------------------------------------------------------------------------------------------
// A local folder of resources, ranked by BM25

const TEXT_SAMPLE_BYTES = 64 * 1024;

/** The text a local resource is ranked by: its name, plus its text, README, subtitles or caption. */
export async function resourceText(input: ResourceInput): Promise<string> {
  // A companion that is not there adds no text; one that is there but unreadable is an error.
  const read = async (path: string) =>
    ((await unlessMissing(path, readFile(path))) ?? Buffer.alloc(0))
      .subarray(0, TEXT_SAMPLE_BYTES)
      .toString("utf8");
  const name = input.path.replace(/[^A-Za-z0-9]+/g, " ");
  const byType: Record<ResourceType, () => Promise<string>> = {
    article: async () => (await read(input.absolutePath)).replace(/<[^>]+>/g, " "),
    repository: async () => {
      const files = await repositoryFiles(input.absolutePath);
      const readme = files.find((file) => /^readme/i.test(file));
      return `${files.join(" ")} ${readme === undefined ? "" : await read(join(input.absolutePath, readme))}`;
    },
    video: async () => {
      const stem = input.absolutePath.replace(/\.[^.]+$/, "");
      return `${await read(`${stem}.srt`)} ${await read(`${stem}.vtt`)}`;
    },
    image: async () => read(`${input.absolutePath}.txt`),
  };
  return `${name}\n${await byType[input.type]()}`;
}

/** The best `limit` resources for `query` by BM25 over `resourceText`; none scoring 0. */
export async function rankResources(
  query: string,
  inputs: readonly ResourceInput[],
  limit: number,
): Promise<ResourceInput[]> {
  const texts: string[] = [];
  for (const input of inputs) texts.push(await resourceText(input));
  const index = Bm25Index.build(texts, { k1: 1.2, b: 0.75 });
  return index.search(query, limit).map((hit) => inputs[hit.doc] as ResourceInput);
}

const folderConfigSchema = z.strictObject({
  kind: z.literal("folder"),
  /** A folder of resources (as for `wiki build --resources`), relative to the working folder. */
  path: z.string().min(1),
});

class FolderSearchBackend implements ResourceSearchBackendV1 {
  readonly specificationVersion = "v1" as const;
  readonly kind = "folder";
  readonly name: string;

  constructor(private readonly root: string) {
    this.name = `folder:${root}`;
  }

  async search(query: TargetedQuery, limit: number): Promise<SearchAnswer> {
    const { inputs } = await listResourceInputs(this.root);
    const ranked = await rankResources(query.text, inputs, limit);
    return {
      request: `BM25 over ${inputs.length} resources in ${this.root}: ${query.text}`,
      total: ranked.length,
      hits: ranked.map((input) => ({ kind: "local" as const, input })),
    };
  }
}

registerSearchBackend("folder", {
  schema: folderConfigSchema,
  create: (config, environment) => {
    const root = resolve(environment.cwd, config.path);
    let isFolder = false;
    try {
      isFolder = statSync(root).isDirectory();
    } catch (error) {
      // Missing is reported below as "no such folder"; there but unreadable is its own error.
      if (!isMissing(error)) throw unreadableError(root, error);
    }
    if (!isFolder)
      throw new InputError("wiki.search.folder", `no such folder: ${root}`, environment.where);
    return new FolderSearchBackend(root);
  },
});

// ------------------------------------------------------------------------------------------
// Backends named on the command line

/**
 * A `--search` value: `github` or `github:repositories`, `github:code`, `folder:<dir>`, or
 * `json:<url template>` (its results path comes from `resultsPath`, `--results-path`).
 */
export function backendConfigOf(
  spec: string,
  options: { resultsPath?: string; githubApiUrl?: string },
): Record<string, unknown> {
  if (spec === "github" || spec === "github:repositories")
    return {
      kind: "github",
      search: "repositories",
      ...(options.githubApiUrl === undefined ? {} : { apiUrl: options.githubApiUrl }),
    };
  if (spec === "github:code")
    return {
      kind: "github",
      search: "code",
      ...(options.githubApiUrl === undefined ? {} : { apiUrl: options.githubApiUrl }),
    };
  if (spec.startsWith("folder:")) return { kind: "folder", path: spec.slice("folder:".length) };
  if (spec.startsWith("json:")) {
    if (options.resultsPath === undefined)
      throw new InputError(
        "wiki.search.results-path",
        `${spec}: a JSON endpoint needs --results-path <JSON path to the result URLs>, e.g. '$.items[*].url'`,
        { field: "--search" },
      );
    return {
      kind: "json-endpoint",
      template: spec.slice("json:".length),
      results: options.resultsPath,
    };
  }
  throw new InputError(
    "wiki.search.spec",
    `${JSON.stringify(spec)}: expected github, github:code, folder:<dir> or json:<url template>`,
    { field: "--search" },
  );
}

/** `--search-config <file>`: `{"backends": [{"kind": …}, …]}`. */
export const searchConfigFileSchema = z.strictObject({
  backends: z.array(z.looseObject({ kind: z.string() })).min(1),
});
