/**
 * Online acquisition: when the offline wiki has no adequate candidate for a task, query the
 * configured resource connectors, distil and gate what they return with the same build, and
 * put accepted skills in a separate online pool for that task or split (budget ≤ 100). The pool
 * is its own wiki folder, never merged into the offline wiki, and `pool.json` records every
 * acquisition (query, resources, failures, outcomes) for the run's records.
 *
 * Connectors: a local folder of resources, a resource list (paths and URLs), and URLs (pages,
 * images, videos, git repositories). A connector ranks its resources against the query by BM25
 * over their names and text; URL resources are fetched to be ranked, and one that cannot be
 * fetched is skipped and recorded rather than failing the search that triggered acquisition.
 */
import { mkdir, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { z } from "zod";
import { InputError, InternalError, isSkillsmithError } from "../core/errors.js";
import { writeFileAtomic } from "../core/fs.js";
import type { ModelClient } from "../model/index.js";
import { Bm25Index } from "./bm25.js";
import { type BuildSummary, buildWiki } from "./build.js";
import type { CodeRunner } from "./gates.js";
import { type ResourceType, WIKI_FORMAT_VERSION } from "./meta.js";
import {
  listResourceInputs,
  type ResourceInput,
  type ResourceSpec,
  resolveResourceArgument,
} from "./resources/collect.js";
import { repositoryFiles } from "./resources/repository.js";
import { type FetchOptions, fetchRemoteResource, looksLikeUrl } from "./resources/url.js";
import type { SearchResult } from "./search.js";
import { jsonText, listEntries, readJsonFile } from "./store.js";

export const ONLINE_POOL_BUDGET_LIMIT = 100;
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

const TEXT_SAMPLE_BYTES = 64 * 1024;

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
          "wiki.online.no-context",
          `connector ${this.name} lists URLs and needs a work folder to fetch them into`,
        );
      fetchDir ??= await mkdtemp(join(context.workDir, "connector-"));
      try {
        const fetched = await fetchRemoteResource(
          spec.remote,
          join(fetchDir, String(inputs.length)),
          context.fetch,
        );
        inputs.push({
          absolutePath: fetched.absolutePath,
          path: spec.remote.path,
          type: fetched.type,
          remote: fetched.origin,
          ...(spec.remote.declaredLicence === undefined
            ? {}
            : { declaredLicence: spec.remote.declaredLicence }),
        });
      } catch (error) {
        // A dead link among the configured resources must not fail the search that needed help.
        if (!isSkillsmithError(error) || error.family === "internal") throw error;
        context.onFailure?.(spec.remote.path, error);
      }
    }
    const texts: string[] = [];
    for (const input of inputs) texts.push(await describe(input));
    const index = Bm25Index.build(texts, { k1: 1.2, b: 0.75 });
    return index.search(query, limit).map((hit) => inputs[hit.doc] as ResourceInput);
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
        "wiki.resources.missing",
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

async function describe(input: ResourceInput): Promise<string> {
  const read = async (path: string) => {
    try {
      return (await readFile(path)).subarray(0, TEXT_SAMPLE_BYTES).toString("utf8");
    } catch {
      return "";
    }
  };
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

export const poolRecordSchema = z.strictObject({
  format: z.literal(WIKI_FORMAT_VERSION),
  budget: z.number().int().positive().max(ONLINE_POOL_BUDGET_LIMIT),
  acquisitions: z.array(
    z.strictObject({
      query: z.string(),
      at: z.string().datetime(),
      connectors: z.array(z.string()),
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
      /** Resources a connector could not fetch (skipped). */
      failed: z
        .array(z.strictObject({ connector: z.string(), path: z.string(), error: z.string() }))
        .optional(),
      accepted: z.array(z.string()),
      outcomes: z.record(z.string(), z.number().int().nonnegative()),
    }),
  ),
});
export type PoolRecord = z.infer<typeof poolRecordSchema>;

export interface AcquireOptions {
  readonly query: string;
  /** The pool's wiki folder; must not be (or be inside) the offline wiki. */
  readonly pool: string;
  readonly offlineWiki: string;
  readonly domain: string;
  readonly connectors: readonly ResourceConnectorV1[];
  readonly model: ModelClient;
  /** At most this many skills in the pool, at most 100. */
  readonly budget: number;
  readonly resourcesPerConnector?: number;
  /** Timeouts and size caps of URL resources. */
  readonly fetch?: FetchOptions;
  readonly runner?: CodeRunner;
  readonly now?: () => Date;
  readonly onProgress?: (line: string) => void;
}

export interface AcquireResult {
  readonly pool: string;
  readonly resources: number;
  /** Resources the connectors could not fetch (skipped). */
  readonly failed: { connector: string; path: string; error: string }[];
  readonly summary: BuildSummary | null;
  readonly poolSize: number;
}

/** Acquire skills for one query into the online pool. */
export async function acquireOnline(options: AcquireOptions): Promise<AcquireResult> {
  if (
    !Number.isInteger(options.budget) ||
    options.budget < 1 ||
    options.budget > ONLINE_POOL_BUDGET_LIMIT
  )
    throw new InputError(
      "wiki.online.budget",
      `the online pool budget must be an integer from 1 to ${ONLINE_POOL_BUDGET_LIMIT}, got ${options.budget}`,
      { field: "budget" },
    );
  const pool = resolve(options.pool);
  const offline = resolve(options.offlineWiki);
  const inside = relative(offline, pool);
  if (inside === "" || (!inside.startsWith("..") && !inside.startsWith("/")))
    throw new InputError(
      "wiki.online.pool-inside-offline",
      "the online pool must live outside the offline wiki, which it is never merged into",
      { file: pool },
    );
  const now = options.now ?? (() => new Date());
  await mkdir(pool, { recursive: true });
  const recordPath = join(pool, POOL_RECORD_FILE);
  let record: PoolRecord = {
    format: WIKI_FORMAT_VERSION,
    budget: options.budget,
    acquisitions: [],
  };
  try {
    record = await readJsonFile(recordPath, poolRecordSchema);
  } catch (error) {
    if (!(error instanceof InputError && error.code === "wiki.file.unreadable")) throw error;
  }
  const found: { connector: string; index: number; input: ResourceInput }[] = [];
  const failed: { connector: string; path: string; error: string }[] = [];
  const identity = (input: ResourceInput) =>
    input.remote === undefined ? input.absolutePath : input.path;
  const workDir = await mkdtemp(join(tmpdir(), "skillsmith-online-"));
  let summary: BuildSummary | null = null;
  try {
    for (const [index, connector] of options.connectors.entries()) {
      const context: ConnectorContext = {
        workDir,
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
        onFailure: (path, error) => {
          failed.push({ connector: connector.name, path, error: error.message });
          options.onProgress?.(`  skipped ${path}: ${error.message}`);
        },
      };
      for (const input of await connector.find(
        options.query,
        options.resourcesPerConnector ?? 3,
        context,
      ))
        if (!found.some((each) => identity(each.input) === identity(input)))
          found.push({ connector: connector.name, index, input });
    }
    options.onProgress?.(
      `online acquisition for "${options.query}": ${found.length} resources from ${options.connectors.length} connectors`,
    );
    if (found.length > 0)
      summary = await buildWiki({
        wiki: pool,
        domain: options.domain,
        inputs: found.map(({ index, input }) => ({ ...input, path: poolPath(index, input) })),
        model: options.model,
        maxEntries: record.budget,
        ...(options.runner === undefined ? {} : { runner: options.runner }),
        ...(options.now === undefined ? {} : { now: options.now }),
        ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      });
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  const outcomes: Record<string, number> = {};
  for (const report of summary?.reports ?? [])
    outcomes[report.outcome] = (outcomes[report.outcome] ?? 0) + 1;
  record.acquisitions.push({
    query: options.query,
    at: now().toISOString(),
    connectors: options.connectors.map((connector) => connector.name),
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
  await writeFileAtomic(recordPath, jsonText(poolRecordSchema.parse(record)));
  return {
    pool,
    resources: found.length,
    failed,
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
