/**
 * `wiki search --online`: when the offline wiki has no adequate candidate, search resources,
 * acquire the best ones into a pool wiki and report what was asked and what it cost.
 */
import { dirname, resolve } from "node:path";
import { UsageError } from "../../core/errors.js";
// Types only at the top: models, the builder, the exporter and the MCP server load in the
// commands that use them, so `wiki search` starts without them (see program.ts on start-up).
import type { ModelClient } from "../../model/index.js";
import type { BuildSummary } from "../../wiki/build.js";
import type { AcquireResult, AcquisitionFailure, ResourceConnectorV1 } from "../../wiki/online.js";
import { ONLINE_POOL_BUDGET_LIMIT } from "../../wiki/online-constants.js";
import type { ResourceSearchBackendV1 } from "../../wiki/resources/search.js";
import {
  type CardSearch,
  indexedText,
  type SearchResult,
  searchSkills,
  WikiSearch,
} from "../../wiki/search.js";
import { readJsonFile } from "../../wiki/store.js";
import { type CliIo, log } from "../context.js";

import {
  modelFor,
  parseCount,
  parseSeconds,
  renderSearch,
  renderSummary,
  resourceArgument,
} from "./wiki-shared.js";

/** The flags of `wiki search --online`: where candidates come from and what they may cost. */
export interface OnlineFlags {
  domain?: string;
  model?: string;
  resources?: string[];
  search?: string[];
  resultsPath?: string;
  searchConfig?: string;
  githubApiUrl?: string;
  searchTimeout: string;
  pool: string;
  budget: string;
  minScore: string;
  fetchTimeout: string;
}

export interface OnlinePlan {
  readonly domain: string;
  readonly model: ModelClient;
  readonly connectors: ResourceConnectorV1[];
  readonly backends: ResourceSearchBackendV1[];
  readonly pool: string;
  readonly budget: number;
  readonly minScore: number;
  readonly timeoutMs: number;
  readonly searchTimeoutMs: number;
}

/** Online acquisition (the builder, the fetchers, the search backends): for `--online` only. */
export function onlineModule(): Promise<typeof import("../../wiki/online.js")> {
  return import("../../wiki/online.js");
}

/** The search backends of `--search` and `--search-config`, each checked now. */
export async function searchBackendsFor(
  io: CliIo,
  flags: { search?: string[]; resultsPath?: string; searchConfig?: string; githubApiUrl?: string },
): Promise<ResourceSearchBackendV1[]> {
  const { backendConfigOf, createSearchBackend, searchConfigFileSchema } = await import(
    "../../wiki/resources/search.js"
  );
  const backends: ResourceSearchBackendV1[] = [];
  for (const [index, spec] of (flags.search ?? []).entries())
    backends.push(
      createSearchBackend(
        backendConfigOf(spec, {
          ...(flags.resultsPath === undefined ? {} : { resultsPath: flags.resultsPath }),
          ...(flags.githubApiUrl === undefined ? {} : { githubApiUrl: flags.githubApiUrl }),
        }),
        { env: io.env, cwd: io.cwd, where: { field: `--search[${index}]` } },
      ),
    );
  if (flags.searchConfig !== undefined) {
    const file = resolve(io.cwd, flags.searchConfig);
    const config = await readJsonFile(file, searchConfigFileSchema);
    for (const [index, each] of config.backends.entries())
      backends.push(
        createSearchBackend(each, {
          env: io.env,
          cwd: dirname(file),
          where: { file, field: `backends.${index}` },
        }),
      );
  }
  return backends;
}

export async function onlinePlan(io: CliIo, flags: OnlineFlags): Promise<OnlinePlan> {
  if (flags.domain === undefined)
    throw new UsageError("cli.wiki-online", "--online needs --domain <domain> (the pool's domain)");
  if (flags.model === undefined)
    throw new UsageError("cli.wiki-online", "--online needs --model <spec> (the distiller)");
  if (
    (flags.resources ?? []).length === 0 &&
    (flags.search ?? []).length === 0 &&
    flags.searchConfig === undefined
  )
    throw new UsageError(
      "cli.wiki-online",
      "--online needs something to acquire from: --search <backend...>, --search-config <file> or --resources <dir|manifest|url...>",
    );
  if (
    flags.resultsPath !== undefined &&
    !(flags.search ?? []).some((each) => each.startsWith("json:"))
  )
    throw new UsageError(
      "cli.wiki-results-path",
      "--results-path belongs to --search json:<template>",
    );
  const budget = parseCount(flags.budget, "--budget");
  if (budget < 1 || budget > ONLINE_POOL_BUDGET_LIMIT)
    throw new UsageError(
      "cli.wiki-budget",
      `--budget: expected 1 to ${ONLINE_POOL_BUDGET_LIMIT}, got ${budget}`,
    );
  const minScore = Number(flags.minScore);
  if (!Number.isFinite(minScore) || minScore < 0)
    throw new UsageError(
      "cli.wiki-min-score",
      `--min-score: expected a non-negative number, got "${flags.minScore}"`,
    );
  return {
    domain: flags.domain,
    model: await modelFor(io, flags.model),
    connectors: await (await onlineModule()).connectorsFor(
      (flags.resources ?? []).map((each) => resourceArgument(io, each)),
    ),
    backends: await searchBackendsFor(io, flags),
    pool: resolve(io.cwd, flags.pool),
    budget,
    minScore,
    timeoutMs: parseSeconds(flags.fetchTimeout, "--fetch-timeout"),
    searchTimeoutMs: parseSeconds(flags.searchTimeout, "--search-timeout"),
  };
}

export interface OnlineReport {
  readonly triggered: boolean;
  /** Why acquisition ran, or why it was not needed. */
  readonly reason: string;
  readonly pool: string;
  /** The targeted query's words. */
  readonly terms?: readonly string[];
  readonly searches?: AcquireResult["searches"];
  readonly resources?: number;
  readonly failed?: AcquisitionFailure[];
  /** Every backend failed to answer: the command exits 3. */
  readonly all_failed?: boolean;
  readonly summary?: Omit<BuildSummary, "reports"> | null;
  readonly pool_size?: number;
  /** The pool searched with the same query and strategy. */
  readonly result?: SearchResult;
}

export async function acquireIfNeeded(
  io: CliIo,
  query: string,
  result: SearchResult,
  offline: CardSearch,
  offlineWiki: string,
  plan: OnlinePlan,
  searchOptions: Parameters<typeof searchSkills>[2],
): Promise<OnlineReport> {
  const { acquireOnline, needsAcquisition } = await onlineModule();
  const best = result.shortlist[0]?.score ?? 0;
  if (!needsAcquisition(result, plan.minScore))
    return {
      triggered: false,
      reason: `best score ${best.toFixed(3)} ≥ ${plan.minScore}${result.strategy === "select" ? " and the selector picked a skill" : ""}`,
      pool: plan.pool,
    };
  const reason =
    best < plan.minScore
      ? `best score ${best.toFixed(3)} < ${plan.minScore}`
      : "the selector found no skill that fits";
  log(io, `no adequate skill in the wiki (${reason}): acquiring online into ${plan.pool}`);
  const acquired = await acquireOnline({
    query,
    pool: plan.pool,
    offlineWiki,
    domain: plan.domain,
    connectors: plan.connectors,
    backends: plan.backends,
    covered: result.shortlist.map((hit) => indexedText(hit.card)),
    resourcesPerConnector: offline.thresholds.online_resources_per_backend,
    maxTerms: offline.thresholds.online_query_terms,
    searchTimeoutMs: plan.searchTimeoutMs,
    model: plan.model,
    budget: plan.budget,
    fetch: { timeoutMs: plan.timeoutMs, env: io.env },
    onProgress: (line) => log(io, line),
  });
  let poolResult: SearchResult | undefined;
  if (acquired.poolSize > 0)
    poolResult = await searchSkills(
      await WikiSearch.open(plan.pool, plan.domain),
      query,
      searchOptions,
    );
  const { reports: _reports, ...totals } = acquired.summary ?? { reports: [] };
  return {
    triggered: true,
    reason,
    pool: acquired.pool,
    terms: acquired.query.terms,
    searches: acquired.searches,
    resources: acquired.resources,
    failed: acquired.failed,
    all_failed: acquired.allFailed,
    summary: acquired.summary === null ? null : (totals as Omit<BuildSummary, "reports">),
    pool_size: acquired.poolSize,
    ...(poolResult === undefined ? {} : { result: poolResult }),
  };
}

export function renderOnline(report: OnlineReport): string[] {
  if (!report.triggered) return [`online acquisition not needed (${report.reason})`];
  const lines = [
    `online acquisition (${report.reason}): query "${(report.terms ?? []).join(" ")}", ${report.resources ?? 0} resources, pool ${report.pool} holds ${report.pool_size ?? 0} skills`,
  ];
  for (const search of report.searches ?? [])
    lines.push(`  ${search.connector}: ${search.hits} results  ${search.request}`);
  for (const failure of report.failed ?? [])
    lines.push(
      failure.stage === "search"
        ? `  FAILED ${failure.connector}: ${failure.error}`
        : `  skipped ${failure.path}: ${failure.error}`,
    );
  if (report.all_failed === true) lines.push("  no search backend answered: nothing was acquired");
  if (report.summary !== undefined && report.summary !== null)
    lines.push(...renderSummary({ ...report.summary, reports: [] }).map((line) => `  ${line}`));
  if (report.result !== undefined)
    lines.push(
      ...renderSearch(report.result, { wiki: report.pool }).map(
        (line) => `  pool ${line.trimStart()}`,
      ),
    );
  return lines;
}
