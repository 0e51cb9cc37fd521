/**
 * Online acquisition: when the offline wiki has no adequate candidate for a task, issue a
 * targeted query (built from the task: `resources/query.ts`) to the configured resource search
 * backends (GitHub repository and code search, any JSON search endpoint, local folders:
 * `resources/search.ts`), fetch each result through the URL connectors, distil and gate it with
 * the same build as the offline wiki, and put accepted skills in a separate online pool for
 * that task or split (budget ≤ 100). The pool is its own wiki folder, never merged into the
 * offline wiki, and `pool.json` records every acquisition: the task, the query, each request,
 * each resource, each failure and the outcomes.
 *
 * A backend that is down, slow, rate-limited or answers garbage, and a result that cannot be
 * fetched, are recorded under `failed` and skipped; the rest of the acquisition goes on. Every
 * fetch goes to a temporary folder, entries are written atomically by the build and `pool.json`
 * is replaced atomically, so a failure leaves nothing half-written.
 *
 * Resources the user supplied (`--resources`: folders, lists, URLs) are connectors that rank
 * what they hold against the query by BM25, as before.
 *
 * One file (over 400 lines) because `acquireOnline` is one recorded transaction (query, fetch,
 * build, pool record) and the connectors and the pool record schema exist only for it; the search
 * backends and fetchers are their own modules.
 */

import { mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { z } from "zod";
import { definedFields } from "../core/defined.js";
import { currentErrorCode } from "../core/error-code-renames.js";
import { InputError, InternalError, isSkillsmithError } from "../core/errors.js";
import { writeFileAtomic } from "../core/fs.js";
import type { ModelClient } from "../model/index.js";
import { type BuildSummary, buildWiki } from "./build.js";
import type { CodeRunner } from "./gates.js";
import { defaultThresholds, WIKI_ONLINE_POOL_FORMAT, wikiFileSchema } from "./meta.js";
import { ONLINE_POOL_BUDGET_LIMIT } from "./online-constants.js";
import {
  fetchedInput,
  listResourceInputs,
  type ResourceInput,
  type ResourceSpec,
  resolveResourceArgument,
} from "./resources/collect.js";
import { type TargetedQuery, targetedQuery } from "./resources/query.js";
import { repositoryFiles } from "./resources/repository.js";
import {
  DEFAULT_SEARCH_TIMEOUT_MS,
  type ResourceSearchBackendV1,
  rankResources,
  type SearchAnswer,
  type SearchHit,
} from "./resources/search.js";
import {
  type FetchedResource,
  type FetchOptions,
  fetchRemoteResource,
  looksLikeUrl,
  manifestPathOf,
  parseResourceUrl,
  type RemoteResourceSpec,
} from "./resources/url.js";
import type { SearchResult } from "./search.js";
import { jsonText, listEntries, readJsonFile } from "./store.js";

export { ONLINE_POOL_BUDGET_LIMIT };
export const POOL_RECORD_FILE = "pool.json";

/** What a connector may use while finding resources for one acquisition. */
export interface ConnectorContext {
  /** A folder to fetch into; it lives until the acquisition's build is done. */
  readonly workDir: string;
  readonly fetch?: FetchOptions;
  /** A resource that could not be fetched: skipped, and recorded with the acquisition. */
  readonly onFailure?: (path: string, error: Error) => void;
}

/** A source of resources for a query: a local folder, a resource list, URLs. */
export interface ResourceConnectorV1 {
  readonly specificationVersion: "v1";
  readonly name: string;
  find(query: string, limit: number, context?: ConnectorContext): Promise<ResourceInput[]>;
}

/**
 * Whether the shortlist has no adequate candidate: nothing scored at least `minScore`, or the
 * selector was asked and picked none.
 */
export function needsAcquisition(result: SearchResult, minScore: number): boolean {
  const best = result.shortlist[0]?.score ?? 0;
  if (best < minScore) return true;
  return result.strategy === "select" && result.selected.length === 0;
}

/**
 * A connector over a list of resources, local or URLs: resources are ranked by BM25 over their
 * names and text (file names or URLs for videos and images, with their subtitles or captions),
 * and the best `limit` with a positive score are returned. URLs are fetched into the context's
 * work folder first, since their text is what they are ranked by.
 */
export class ResourceListConnector implements ResourceConnectorV1 {
  readonly specificationVersion = "v1" as const;

  constructor(
    readonly name: string,
    private readonly list: () => Promise<readonly ResourceSpec[]>,
  ) {}

  async find(query: string, limit: number, context?: ConnectorContext): Promise<ResourceInput[]> {
    const inputs: ResourceInput[] = [];
    let fetchDir: string | undefined;
    for (const spec of await this.list()) {
      if (spec.kind === "local") {
        inputs.push(spec.input);
        continue;
      }
      if (context === undefined)
        throw new InternalError(
          "wiki.online-no-context",
          `connector ${this.name} lists URLs and needs a work folder to fetch them into`,
        );
      fetchDir ??= await mkdtemp(join(context.workDir, "connector-"));
      try {
        const fetched = await fetchRemoteResource(
          spec.remote,
          join(fetchDir, String(inputs.length)),
          context.fetch,
        );
        inputs.push(fetchedInput(spec.remote, fetched));
      } catch (error) {
        // A dead link among the configured resources must not fail the search that needed help.
        if (!isSkillsmithError(error) || error.family === "internal") throw error;
        context.onFailure?.(spec.remote.path, error);
      }
    }
    return rankResources(query, inputs, limit);
  }
}

/** A connector over a local folder of resources (same layout as `wiki build --resources`). */
export class LocalFolderConnector extends ResourceListConnector {
  constructor(root: string) {
    super(`folder:${root}`, async () =>
      (await listResourceInputs(root)).inputs.map((input) => ({ kind: "local" as const, input })),
    );
  }
}

/**
 * Connectors for `--resources` arguments, checked now so a mistake is reported before any
 * search: a folder → its own connector; a resource list → one connector over its paths and URLs;
 * all bare URLs together → one connector (so the per-connector limit applies across them).
 */
export async function connectorsFor(
  resourceArguments: readonly string[],
): Promise<ResourceConnectorV1[]> {
  const connectors: ResourceConnectorV1[] = [];
  const urls: ResourceSpec[] = [];
  for (const argument of resourceArguments) {
    if (looksLikeUrl(argument)) {
      urls.push(...(await resolveResourceArgument(argument)));
      continue;
    }
    let isFolder: boolean;
    try {
      isFolder = (await stat(argument)).isDirectory();
    } catch (cause) {
      throw new InputError(
        "wiki.resources-missing",
        "no such folder or resource list",
        { file: argument },
        { cause },
      );
    }
    if (isFolder) {
      await listResourceInputs(argument);
      connectors.push(new LocalFolderConnector(argument));
    } else {
      const specs = await resolveResourceArgument(argument);
      connectors.push(new ResourceListConnector(`list:${argument}`, async () => specs));
    }
  }
  if (urls.length > 0)
    connectors.push(
      new ResourceListConnector(
        urls.length === 1 && urls[0]?.kind === "remote" ? `url:${urls[0].remote.path}` : "urls",
        async () => urls,
      ),
    );
  return connectors;
}

const failureSchema = z.strictObject({
  /** The backend or connector. */
  connector: z.string(),
  /** What was being done: the search request, or fetching one result. */
  stage: z.enum(["search", "fetch"]).optional(),
  /** The request or the result's URL (or path). */
  path: z.string(),
  /**
   * The error's code (`wiki.search-timeout`, `wiki.url-status`, …); a pool written by an older
   * version spelled codes differently (`wiki.search.timeout`): read under their current names.
   */
  code: z.string().transform(currentErrorCode).optional(),
  error: z.string(),
});
export type AcquisitionFailure = z.infer<typeof failureSchema>;

export const poolRecordSchema = wikiFileSchema(WIKI_ONLINE_POOL_FORMAT, {
  budget: z.number().int().positive().max(ONLINE_POOL_BUDGET_LIMIT),
  acquisitions: z.array(
    z.strictObject({
      /** The task that triggered the acquisition. */
      query: z.string(),
      /** The targeted query's words (uncovered by the offline shortlist first). */
      terms: z.array(z.string()).optional(),
      at: z.string().datetime(),
      connectors: z.array(z.string()),
      /** Each backend's request as sent (no credentials) and how many results it gave. */
      searches: z
        .array(
          z.strictObject({
            connector: z.string(),
            request: z.string(),
            hits: z.number().int().nonnegative(),
            total: z.number().int().nonnegative().optional(),
          }),
        )
        .optional(),
      resources: z.array(
        z.strictObject({
          connector: z.string(),
          /** The path in the pool's resource manifest (and skill ids). */
          path: z.string(),
          /** The file it was read from, or the URL it was fetched from. */
          source: z.string(),
          type: z.string(),
          fetched_at: z.string().datetime().optional(),
        }),
      ),
      /** Searches that failed and results that could not be fetched (skipped). */
      failed: z.array(failureSchema).optional(),
      accepted: z.array(z.string()),
      outcomes: z.record(z.string(), z.number().int().nonnegative()),
    }),
  ),
});
export type PoolRecord = z.infer<typeof poolRecordSchema>;

export interface AcquireOptions {
  /** The task (its text is what the targeted query is built from). */
  readonly query: string;
  /** The pool's wiki folder; must not be (or be inside) the offline wiki. */
  readonly pool: string;
  readonly offlineWiki: string;
  readonly domain: string;
  /** Search backends to query. */
  readonly backends?: readonly ResourceSearchBackendV1[];
  /** Resources the user supplied, ranked against the query. */
  readonly connectors?: readonly ResourceConnectorV1[];
  /** Card texts of the offline shortlist: the query leads with the task words they lack. */
  readonly covered?: readonly string[];
  readonly model: ModelClient;
  /** At most this many skills in the pool, at most 100. */
  readonly budget: number;
  /** Resources taken from each backend or connector (default 3). */
  readonly resourcesPerConnector?: number;
  /** Most words in the targeted query (default 6). */
  readonly maxTerms?: number;
  /** Time limit of one search request (default 15 s). */
  readonly searchTimeoutMs?: number;
  /** Timeouts and size caps of URL resources. */
  readonly fetch?: FetchOptions;
  readonly runner?: CodeRunner;
  readonly now?: () => Date;
  readonly onProgress?: (line: string) => void;
  readonly signal?: AbortSignal;
}

export interface AcquireResult {
  readonly pool: string;
  readonly query: TargetedQuery;
  readonly searches: NonNullable<PoolRecord["acquisitions"][number]["searches"]>;
  readonly resources: number;
  /** Searches that failed and results that could not be fetched (skipped). */
  readonly failed: AcquisitionFailure[];
  /** Every backend failed to answer (and no connector was given): nothing could be looked at. */
  readonly allFailed: boolean;
  readonly summary: BuildSummary | null;
  readonly poolSize: number;
}

function failureOf(
  connector: string,
  stage: "search" | "fetch",
  path: string,
  error: unknown,
): AcquisitionFailure {
  return {
    connector,
    stage,
    path,
    ...(isSkillsmithError(error) ? { code: error.code } : {}),
    error: error instanceof Error ? error.message : String(error),
  };
}

/** Only the web may be named by a search result: never a local path or an ssh/git/file URL. */
const RESULT_SCHEMES = new Set(["http", "https"]);

/** Fetch one URL search hit through the URL connectors into `dir`. */
async function fetchHit(
  hit: Extract<SearchHit, { kind: "url" }>,
  backend: string,
  dir: string,
  options: FetchOptions,
  clones: Map<string, Promise<FetchedResource>>,
): Promise<ResourceInput> {
  const where = { field: `result of ${backend}` };
  const parsed = parseResourceUrl(hit.url, where);
  if (!RESULT_SCHEMES.has(parsed.scheme))
    throw new InputError(
      "wiki.search-result-scheme",
      `${hit.url}: a search result may only name an http or https resource, not a ${parsed.scheme} URL`,
      where,
    );
  const url = hit.ref === undefined ? parsed : { ...parsed, ref: hit.ref };
  const spec: RemoteResourceSpec = {
    path: hit.manifestPath ?? manifestPathOf(url),
    url,
    where,
    ...definedFields({ type: hit.type, declaredLicence: hit.licence }),
  };
  // Several code hits in one repository at one commit share one clone.
  const key = `${url.href}#${url.ref ?? ""}`;
  let fetching = (hit.type ?? url.impliedType) === "repository" ? clones.get(key) : undefined;
  if (fetching === undefined) {
    fetching = fetchRemoteResource(spec, join(dir, String(clones.size)), options);
    if ((hit.type ?? url.impliedType) === "repository") clones.set(key, fetching);
  }
  let fetched: FetchedResource;
  try {
    fetched = await fetching;
  } catch (error) {
    clones.delete(key);
    throw error;
  }
  if (hit.files !== undefined) {
    // The files come from the search answer: each must be a regular file of the checkout (no
    // `../`, no symlink), or the hit is refused here rather than failing the whole build.
    const present = new Set(await repositoryFiles(fetched.absolutePath));
    const absent = hit.files.filter((file) => !present.has(file));
    if (absent.length > 0)
      throw new InputError(
        "wiki.search-result-file",
        `${spec.path}: the repository at ${fetched.origin.commit ?? "its default branch"} has no file ${absent.map((file) => JSON.stringify(file)).join(", ")}`,
        where,
      );
  }
  // The search result's licence, not the spec's: a backend reports what the host declared.
  const { declaredLicence: _unused, ...input } = fetchedInput(spec, fetched);
  return {
    ...input,
    ...definedFields({ declaredLicence: hit.licence, focus: hit.files }),
  };
}

/** The pool's folder, once the budget is in range and the pool lies outside the offline wiki. */
function checkedPool(options: AcquireOptions): string {
  if (
    !Number.isInteger(options.budget) ||
    options.budget < 1 ||
    options.budget > ONLINE_POOL_BUDGET_LIMIT
  )
    throw new InputError(
      "wiki.online-budget",
      `the online pool budget must be an integer from 1 to ${ONLINE_POOL_BUDGET_LIMIT}, got ${options.budget}`,
      { field: "budget" },
    );
  const pool = resolve(options.pool);
  const inside = relative(resolve(options.offlineWiki), pool);
  if (inside === "" || (!inside.startsWith("..") && !inside.startsWith("/")))
    throw new InputError(
      "wiki.online-pool-inside-offline",
      "the online pool must live outside the offline wiki, which it is never merged into",
      { file: pool },
    );
  return pool;
}

/** The pool's record of earlier acquisitions; a new one (with `budget`) when there is none yet. */
async function readPoolRecord(recordPath: string, budget: number): Promise<PoolRecord> {
  try {
    return await readJsonFile(recordPath, poolRecordSchema);
  } catch (error) {
    if (!(error instanceof InputError && error.code === "wiki.file-unreadable")) throw error;
    return { format: WIKI_ONLINE_POOL_FORMAT, budget, acquisitions: [] };
  }
}

/** Acquire skills for one task into the online pool. */
export async function acquireOnline(options: AcquireOptions): Promise<AcquireResult> {
  const pool = checkedPool(options);
  const backends = options.backends ?? [];
  const connectors = options.connectors ?? [];
  const perSource = options.resourcesPerConnector ?? defaultThresholds.online_resources_per_backend;
  const query = targetedQuery(options.query, {
    domain: options.domain,
    maxTerms: options.maxTerms ?? defaultThresholds.online_query_terms,
    ...(options.covered === undefined ? {} : { covered: options.covered }),
  });
  const now = options.now ?? (() => new Date());
  const progress = options.onProgress ?? (() => {});
  const recordPath = join(pool, POOL_RECORD_FILE);
  const record = await readPoolRecord(recordPath, options.budget);
  const found: { connector: string; index: number; input: ResourceInput }[] = [];
  const failed: AcquisitionFailure[] = [];
  const searches: AcquireResult["searches"] = [];
  const identity = (input: ResourceInput) =>
    input.remote === undefined ? input.absolutePath : input.path;
  const add = (connector: string, index: number, input: ResourceInput) => {
    if (!found.some((each) => identity(each.input) === identity(input)))
      found.push({ connector, index, input });
  };
  const fetchOptions: FetchOptions = {
    ...definedFields({ now: options.now, signal: options.signal }),
    ...options.fetch,
  };
  const workDir = await mkdtemp(join(tmpdir(), "skillsmith-online-"));
  let summary: BuildSummary | null = null;
  let answered = connectors.length;
  progress(
    `online acquisition for "${options.query}": query "${query.text}"${query.uncovered.length === 0 ? "" : ` (not in the wiki: ${query.uncovered.join(", ")})`}`,
  );
  try {
    const clones = new Map<string, Promise<FetchedResource>>();
    for (const [index, backend] of backends.entries()) {
      let answer: SearchAnswer;
      try {
        answer = await backend.search(query, perSource, {
          timeoutMs: options.searchTimeoutMs ?? DEFAULT_SEARCH_TIMEOUT_MS,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
        });
      } catch (error) {
        // A backend's bug is not an answer to record: only its typed failures are.
        if (!isSkillsmithError(error) || error.family === "internal") throw error;
        failed.push(failureOf(backend.name, "search", query.text, error));
        progress(`  search ${backend.name} failed: ${error.message}`);
        continue;
      }
      answered += 1;
      const hits = answer.hits.slice(0, perSource);
      searches.push({
        connector: backend.name,
        request: answer.request,
        hits: hits.length,
        ...(answer.total === undefined ? {} : { total: answer.total }),
      });
      progress(`  ${backend.name}: ${hits.length} results (${answer.request})`);
      for (const hit of hits) {
        if (hit.kind === "local") {
          add(backend.name, index, hit.input);
          continue;
        }
        try {
          add(
            backend.name,
            index,
            await fetchHit(
              hit,
              backend.name,
              join(workDir, `backend-${index}`),
              fetchOptions,
              clones,
            ),
          );
        } catch (error) {
          if (!isSkillsmithError(error) || error.family === "internal") throw error;
          failed.push(failureOf(backend.name, "fetch", hit.manifestPath ?? hit.url, error));
          progress(`  skipped ${hit.manifestPath ?? hit.url}: ${error.message}`);
        }
      }
    }
    for (const [position, connector] of connectors.entries()) {
      const index = backends.length + position;
      const context: ConnectorContext = {
        workDir,
        fetch: fetchOptions,
        onFailure: (path, error) => {
          failed.push(failureOf(connector.name, "fetch", path, error));
          progress(`  skipped ${path}: ${error.message}`);
        },
      };
      for (const input of await connector.find(options.query, perSource, context))
        add(connector.name, index, input);
    }
    progress(
      `online acquisition: ${found.length} resources from ${backends.length + connectors.length} sources${failed.length === 0 ? "" : `, ${failed.length} failures`}`,
    );
    if (found.length > 0)
      summary = await buildWiki({
        wiki: pool,
        domain: options.domain,
        inputs: found.map(({ index, input }) => ({ ...input, path: poolPath(index, input) })),
        model: options.model,
        maxEntries: record.budget,
        ...definedFields({
          runner: options.runner,
          now: options.now,
          onProgress: options.onProgress,
        }),
      });
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  const outcomes: Record<string, number> = {};
  for (const report of summary?.reports ?? [])
    outcomes[report.outcome] = (outcomes[report.outcome] ?? 0) + 1;
  record.acquisitions.push({
    query: options.query,
    terms: [...query.terms],
    at: now().toISOString(),
    connectors: [...backends.map((each) => each.name), ...connectors.map((each) => each.name)],
    searches,
    resources: found.map(({ connector, index, input }) => ({
      connector,
      path: poolPath(index, input),
      source: input.remote === undefined ? input.absolutePath : input.remote.url,
      type: input.type,
      ...(input.remote === undefined ? {} : { fetched_at: input.remote.fetchedAt }),
    })),
    ...(failed.length === 0 ? {} : { failed }),
    accepted: (summary?.reports ?? [])
      .filter((report) => report.outcome === "accepted")
      .map((report) => report.skill_id),
    outcomes,
  });
  await mkdir(pool, { recursive: true });
  await writeFileAtomic(recordPath, jsonText(poolRecordSchema.parse(record)));
  return {
    pool,
    query,
    searches,
    resources: found.length,
    failed,
    allFailed: backends.length + connectors.length > 0 && answered === 0,
    summary,
    poolSize: (await listEntries(pool, options.domain)).length,
  };
}

/**
 * A resource's path in the pool: URLs as they are; local files under `connector-<n>/`, so paths
 * (and skill ids) are short, stable, free of temporary folder names and distinct across
 * connectors; pool.json maps them back to the real files.
 */
function poolPath(connectorIndex: number, input: ResourceInput): string {
  return input.remote === undefined ? `connector-${connectorIndex}/${input.path}` : input.path;
}
