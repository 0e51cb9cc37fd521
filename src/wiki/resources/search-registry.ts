import type { z } from "zod";
import { InputError, type InputLocation } from "../../core/errors.js";
import { parseResult } from "../../core/parse.js";
import type { ResourceType } from "../meta.js";
import type { ResourceInput } from "./collect.js";
import type { TargetedQuery } from "./query.js";

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
      "wiki.search-unknown-kind",
      `unknown search backend kind ${JSON.stringify(kind ?? null)}; registered: ${searchBackendKinds().join(", ")}`,
      { ...environment.where, field: [environment.where.field, "kind"].filter(Boolean).join(".") },
    );
  const parsed = parseResult(definition.schema, config);
  if (!parsed.ok)
    throw new InputError(
      "wiki.search-config",
      `search backend "${String(kind)}": ${parsed.error.message}`,
      {
        ...environment.where,
        field: [environment.where.field, parsed.error.field].filter(Boolean).join("."),
      },
    );
  return definition.create(parsed.value, environment);
}
