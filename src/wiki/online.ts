/**
 * Online acquisition: when the offline wiki has no adequate candidate for a task, query the
 * configured resource connectors, distil and gate what they return with the same build, and
 * put accepted skills in a separate online pool for that task or split (budget ≤ 100). The pool
 * is its own wiki folder, never merged into the offline wiki, and `pool.json` records every
 * acquisition (query, resources, outcomes) for the run's records.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { z } from "zod";
import { InputError } from "../core/errors.js";
import { writeFileAtomic } from "../core/fs.js";
import type { ModelClient } from "../model/index.js";
import { Bm25Index } from "./bm25.js";
import { type BuildSummary, buildWiki } from "./build.js";
import type { CodeRunner } from "./gates.js";
import { type ResourceType, WIKI_FORMAT_VERSION } from "./meta.js";
import { listResourceInputs, type ResourceInput } from "./resources/collect.js";
import { repositoryFiles } from "./resources/repository.js";
import type { SearchResult } from "./search.js";
import { jsonText, listEntries, readJsonFile } from "./store.js";

export const ONLINE_POOL_BUDGET_LIMIT = 100;
export const POOL_RECORD_FILE = "pool.json";

/** A source of resources for a query (a local folder here; web search where a network is). */
export interface ResourceConnectorV1 {
  readonly specificationVersion: "v1";
  readonly name: string;
  find(query: string, limit: number): Promise<ResourceInput[]>;
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
 * A connector over a local folder of resources (same layout as `wiki build --resources`):
 * resources are ranked by BM25 over their names and text (file names for videos and images,
 * with their subtitles or captions), and the best `limit` with a positive score are returned.
 */
export class LocalFolderConnector implements ResourceConnectorV1 {
  readonly specificationVersion = "v1" as const;
  readonly name: string;

  constructor(private readonly root: string) {
    this.name = `folder:${root}`;
  }

  async find(query: string, limit: number): Promise<ResourceInput[]> {
    const { inputs } = await listResourceInputs(this.root);
    const texts: string[] = [];
    for (const input of inputs) texts.push(await describe(input));
    const index = Bm25Index.build(texts, { k1: 1.2, b: 0.75 });
    return index.search(query, limit).map((hit) => inputs[hit.doc] as ResourceInput);
  }
}

async function describe(input: ResourceInput): Promise<string> {
  const read = async (path: string) => {
    try {
      return (await readFile(path)).subarray(0, TEXT_SAMPLE_BYTES).toString("utf8");
    } catch {
      return "";
    }
  };
  const name = input.path.replace(/[._/-]+/g, " ");
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
          path: z.string(),
          source: z.string(),
          type: z.string(),
        }),
      ),
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
  readonly runner?: CodeRunner;
  readonly now?: () => Date;
  readonly onProgress?: (line: string) => void;
}

export interface AcquireResult {
  readonly pool: string;
  readonly resources: number;
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
  const found: { connector: string; input: ResourceInput }[] = [];
  for (const connector of options.connectors) {
    for (const input of await connector.find(options.query, options.resourcesPerConnector ?? 3))
      if (!found.some((each) => each.input.absolutePath === input.absolutePath))
        found.push({ connector: connector.name, input });
  }
  options.onProgress?.(
    `online acquisition for "${options.query}": ${found.length} resources from ${options.connectors.length} connectors`,
  );
  let summary: BuildSummary | null = null;
  if (found.length > 0) {
    // The build reads a resource list. Each resource is linked into a temporary folder as
    // `connector-<n>/<its path in the connector>`, so manifest paths (and skill ids) are short,
    // stable and free of temporary folder names; pool.json maps them back to the real paths.
    const listDir = await mkdtemp(join(tmpdir(), "skillsmith-online-"));
    try {
      const list = join(listDir, "resources.json");
      const entries = [];
      for (const { connector, input } of found) {
        const linked = `connector-${options.connectors.findIndex((each) => each.name === connector)}/${input.path}`;
        await mkdir(dirname(join(listDir, linked)), { recursive: true });
        await symlink(input.absolutePath, join(listDir, linked));
        entries.push({ path: linked, type: input.type });
      }
      await writeFile(list, jsonText({ resources: entries }));
      summary = await buildWiki({
        wiki: pool,
        domain: options.domain,
        resources: list,
        model: options.model,
        maxEntries: record.budget,
        ...(options.runner === undefined ? {} : { runner: options.runner }),
        ...(options.now === undefined ? {} : { now: options.now }),
        ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      });
    } finally {
      await rm(listDir, { recursive: true, force: true });
    }
  }
  const outcomes: Record<string, number> = {};
  for (const report of summary?.reports ?? [])
    outcomes[report.outcome] = (outcomes[report.outcome] ?? 0) + 1;
  record.acquisitions.push({
    query: options.query,
    at: now().toISOString(),
    connectors: options.connectors.map((connector) => connector.name),
    resources: found.map(({ connector, input }) => ({
      connector,
      path: `connector-${options.connectors.findIndex((each) => each.name === connector)}/${input.path}`,
      source: input.absolutePath,
      type: input.type,
    })),
    accepted: (summary?.reports ?? [])
      .filter((report) => report.outcome === "accepted")
      .map((report) => report.skill_id),
    outcomes,
  });
  await writeFileAtomic(recordPath, jsonText(poolRecordSchema.parse(record)));
  return {
    pool,
    resources: found.length,
    summary,
    poolSize: (await listEntries(pool, options.domain)).length,
  };
}
