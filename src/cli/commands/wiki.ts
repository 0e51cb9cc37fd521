import { dirname, join, resolve } from "node:path";
import { type Command, Option } from "commander";
import { InputError, UsageError } from "../../core/errors.js";
import { pathExists } from "../../core/fs.js";
import { packageRoot } from "../../core/paths.js";
// Types only at the top: models, the builder, the exporter and the MCP server load in the
// commands that use them, so `wiki search` starts without them (see program.ts on start-up).
import type { EmbeddingClient, ModelClient } from "../../model/index.js";
import type { BuildSummary } from "../../wiki/build.js";
import { EMBEDDING_MODEL_VARIABLE, resolveSearchEmbeddingModel } from "../../wiki/embedding.js";
import { type ShortlistField, type ShortlistSizeRule, shortlistFields } from "../../wiki/meta.js";
import type { AcquireResult, AcquisitionFailure, ResourceConnectorV1 } from "../../wiki/online.js";
import {
  GITHUB_API_URL,
  GITHUB_API_URL_VARIABLE,
  ONLINE_POOL_BUDGET_LIMIT,
} from "../../wiki/online-constants.js";
import type { ResourceSearchBackendV1 } from "../../wiki/resources/search.js";
import { looksLikeUrl } from "../../wiki/resources/url.js";
import {
  type CardSearch,
  indexedText,
  openCardSearch,
  type SearchOptions,
  type SearchResult,
  type SelectionStrategy,
  searchSkills,
  selectionStrategies,
  WikiSearch,
} from "../../wiki/search.js";
import { findEntry, readJsonFile, readWikiManifest } from "../../wiki/store.js";
import { type CliIo, type CommandContext, log, printJson, printLines } from "../context.js";
import { waitForTerminationSignal } from "../interrupt.js";

export interface WikiCommandOptions {
  /** Resolves when `serve-mcp --http` should stop; the default waits for SIGINT or SIGTERM. */
  readonly waitForStop?: () => Promise<void>;
}

export const DEFAULT_WIKI_FOLDER = "skills_wiki";
export const DEFAULT_POOL_FOLDER = "skills_wiki_online";
/** A best BM25 score below this is no adequate candidate (good matches score 5 or more). */
export const DEFAULT_MIN_SCORE = 2;

/** The flags of `wiki search --online`: where candidates come from and what they may cost. */
interface OnlineFlags {
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

/** Every flag of `wiki search`. */
interface SearchFlags extends OnlineFlags {
  wiki?: string;
  select?: boolean;
  strategy?: SelectionStrategy;
  seed: string;
  embeddingModel?: string;
  includeUnverified?: boolean;
  selection?: "paper" | "public-code";
  shortlistSize?: string;
  fields?: string;
  visualBoost?: string;
  online?: boolean;
  json?: boolean;
}

/**
 * `--wiki`, else ./skills_wiki when it exists, else the example wiki shipped with skillsmith. A
 * ./skills_wiki that is there but unreadable is an error, never a reason to read the example.
 */
async function wikiToRead(io: CliIo, flag: string | undefined): Promise<string> {
  if (flag !== undefined) return resolve(io.cwd, flag);
  const local = resolve(io.cwd, DEFAULT_WIKI_FOLDER);
  return (await pathExists(local)) ? local : join(packageRoot(), "examples", "wiki");
}

async function modelFor(io: CliIo, spec: string): Promise<ModelClient> {
  const { ModelClient } = await import("../../model/client.js");
  return new ModelClient({ spec, env: io.env, cwd: io.cwd });
}

/** The embedding model: --embedding-model > SKILLSMITH_EMBEDDING_MODEL > config > a usage error. */
async function embeddingClientFor(
  io: CliIo,
  strategy: SelectionStrategy,
  flag: string | undefined,
): Promise<EmbeddingClient> {
  const resolved = resolveSearchEmbeddingModel(flag, io);
  if (resolved === undefined)
    throw new UsageError(
      "cli.wiki.embedding-model",
      `--strategy ${strategy} needs an embedding model: pass --embedding-model <provider:model> (e.g. openai:text-embedding-3-small) or set ${EMBEDDING_MODEL_VARIABLE}`,
    );
  const { createEmbeddingClient } = await import("../../model/embedding.js");
  return createEmbeddingClient({ spec: resolved.spec, env: io.env, cwd: io.cwd });
}

/** A `--resources` value: URLs as given, paths relative to the working folder. */
function resourceArgument(io: CliIo, value: string): string {
  return looksLikeUrl(value) ? value : resolve(io.cwd, value);
}

function parseSeconds(value: string, flag: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new UsageError(
      "cli.seconds",
      `${flag}: expected a positive number of seconds, got "${value}"`,
    );
  return Math.round(seconds * 1000);
}

function parseCount(value: string, flag: string): number {
  const count = Number(value);
  if (!Number.isInteger(count) || count < 0)
    throw new UsageError("cli.count", `${flag}: expected a non-negative integer, got "${value}"`);
  return count;
}

/** `skillsmith wiki ...`: build, search, export and serve the skill wiki. */
export function registerWiki(
  program: Command,
  context: CommandContext,
  options: WikiCommandOptions = {},
): void {
  const wiki = program
    .command("wiki")
    .description(
      "The skill wiki: distil resources into verified skills, search them, serve them over MCP",
    );

  wiki
    .command("build")
    .description(
      "Distil resources (repositories, articles, videos, images) into gated wiki entries",
    )
    .addHelpText(
      "after",
      `\nResources: a folder whose top-level entries are resources (folder = repository, .html = article,\nvideo + .srt/.vtt beside it, image; licence from LICENSE, <meta name="license"> or a <file>.license\nsidecar), a JSON list {"resources": [{"path" | "url", "ref"?, "type"?, "licence"?}]}, or a URL:\nhttp(s) pages, images and videos are downloaded (timeout, size cap) into <wiki>/.cache/downloads;\nrepositories (.git, github.com/<owner>/<repo>, ssh, git, file or git+https URLs, #<ref>) are cloned\nwith --depth 1. The manifest records each URL, its fetch time and content hash. One model call per resource.\nGates: completeness, provenance, deduplication (merge), modality consistency, executability in the\nbubblewrap sandbox (failures kept as reference-only; no sandbox → exec_ok unknown). The first build\nfreezes the thresholds in <wiki>/wiki.json. Progress goes to stderr.`,
    )
    .requiredOption("--domain <domain>", "the domain (lowercase, hyphens), e.g. web-frontend")
    .requiredOption(
      "--resources <dir|manifest|url...>",
      "folders of resources, resource lists (JSON) and URLs (http(s) pages, images, videos; git repositories over http(s), ssh, git or file, with #<ref>)",
    )
    .option("--fetch-timeout <seconds>", "time limit of one URL download", "30")
    .requiredOption("--model <spec>", "distiller model, e.g. anthropic:claude-haiku-4-5")
    .option("--wiki <dir>", "the wiki folder", DEFAULT_WIKI_FOLDER)
    .option("--no-vision", "do not send frames and images to the model")
    .option("--json", "print the build summary (with every candidate's gate results) as JSON")
    .action(
      async (flags: {
        domain: string;
        resources: string[];
        fetchTimeout: string;
        model: string;
        wiki: string;
        vision: boolean;
        json?: boolean;
      }) => {
        const { io } = context;
        const { buildWiki } = await import("../../wiki/build.js");
        const summary = await buildWiki({
          wiki: resolve(io.cwd, flags.wiki),
          domain: flags.domain,
          resources: flags.resources.map((each) => resourceArgument(io, each)),
          fetch: { timeoutMs: parseSeconds(flags.fetchTimeout, "--fetch-timeout"), env: io.env },
          model: await modelFor(io, flags.model),
          vision: flags.vision,
          onProgress: (line) => log(io, line),
        });
        if (flags.json === true) printJson(io, summary);
        else printLines(io, renderSummary(summary));
      },
    );

  wiki
    .command("search")
    .description(
      "Find skills: BM25 shortlist (K=20), then optionally a model's selection of at most 5",
    )
    .argument("<query>", "the task or keywords")
    .option("--wiki <dir>", "the wiki folder (default ./skills_wiki, else the example wiki)")
    .option("--domain <domain>", "search one domain only")
    .option("--select", "stage 2: let a model pick at most 5 from the shortlist (needs --model)")
    .option("--model <spec>", "selector model for --select")
    .addOption(
      new Option("--strategy <strategy>", "selection strategy").choices([...selectionStrategies]),
    )
    .option("--seed <n>", "seed of the random strategy", "0")
    .option(
      "--embedding-model <spec>",
      `for --strategy embedding and bm25+embedding, e.g. openai:text-embedding-3-small (else ${EMBEDDING_MODEL_VARIABLE}, else "wiki.embeddingModel" in skillsmith.config.json)`,
    )
    .option("--include-unverified", "also search reference-only and unverified entries")
    .addOption(
      new Option(
        "--selection <preset>",
        "stage-1 defaults: paper (K=20 over name, tags, applicability, category path) or public-code (a pool of max(5n,25) over name, applicability, tags, visuals ×1.25)",
      ).choices(["paper", "public-code"]),
    )
    .option(
      "--shortlist-size <K|max(5n,25)>",
      "stage-1 shortlist size: a number K, or max(5n,25) (default: the wiki's recorded K, 20)",
    )
    .option(
      "--fields <list>",
      `fields stage 1 indexes, comma-separated from ${shortlistFields.join(",")} (default all four)`,
    )
    .option(
      "--visual-boost <x>",
      "multiply the BM25 score of entries with a visual by x ≥ 1 (default 1: none; the public code uses 1.25)",
    )
    .option(
      "--online",
      "when nothing adequate is found, acquire skills from --resources into a separate online pool",
    )
    .option(
      "--resources <dir|manifest|url...>",
      "for --online: folders of resources, resource lists and URLs to acquire from",
    )
    .option(
      "--search <backend...>",
      "for --online: search backends to query: github (repositories), github:code (needs GITHUB_TOKEN), folder:<dir>, json:<url template>",
    )
    .option(
      "--results-path <json-path>",
      "for --search json:<template>: JSON path to the result URLs in the answer, e.g. '$.items[*].url'",
    )
    .option(
      "--search-config <file>",
      'for --online: a JSON file {"backends": [{"kind": "github" | "json-endpoint" | "folder", ...}]}',
    )
    .option(
      "--github-api-url <url>",
      `for --search github…: the REST API base URL (else ${GITHUB_API_URL_VARIABLE}, else ${GITHUB_API_URL})`,
    )
    .option("--search-timeout <seconds>", "for --online: time limit of one search request", "15")
    .option(
      "--pool <dir>",
      "for --online: the online pool (a wiki of its own)",
      DEFAULT_POOL_FOLDER,
    )
    .option(
      "--budget <n>",
      `for --online: most skills the pool may hold (≤ ${ONLINE_POOL_BUDGET_LIMIT})`,
      "20",
    )
    .option(
      "--min-score <x>",
      "for --online: a best BM25 score below this means no adequate candidate",
      String(DEFAULT_MIN_SCORE),
    )
    .option("--fetch-timeout <seconds>", "for --online: time limit of one URL download", "30")
    .option("--json", "print a JSON document")
    .addHelpText(
      "after",
      `\nOnline acquisition (--online --domain <d> --model <spec> --search ... | --resources ...): when the best\nBM25 score is below --min-score, or the selector (--select) picks none, a targeted query is built from\nthe task (its words minus function words, those the shortlist lacks first, at most 6) and sent to each\nsearch backend; each result is fetched like a URL resource, distilled and gated like \`wiki build\`, and\naccepted skills go to --pool (never the offline wiki), whose pool.json records the query, every request,\nresource and failure. A backend that is down, slow, rate-limited or answers garbage is reported and\nskipped; when none answers the command exits 3. The pool is then searched with the same strategy.\n\nBackends: github (GET /search/repositories; GITHUB_TOKEN optional), github:code (GET /search/code;\nGITHUB_TOKEN required), folder:<dir>, json:<url template> with --results-path: template variables\n{searchTerms} {count} {startIndex} {startPage} {language} {domain} {task} {apiKey}, e.g.\n--search 'json:https://search.example/api?q={searchTerms}&n={count}' --results-path '$.results[*].url'.`,
    )
    .action(async (query: string, flags: SearchFlags) => {
      const { io } = context;
      const strategy = flags.strategy ?? (flags.select === true ? "select" : "bm25-only");
      if (strategy === "select" && flags.model === undefined)
        throw new UsageError("cli.wiki.model", "--select needs --model <spec>");
      const embedding = strategy.includes("embedding")
        ? await embeddingClientFor(io, strategy, flags.embeddingModel)
        : undefined;
      // Check the acquisition's flags before searching, so a mistake costs nothing.
      const online = flags.online === true ? await onlinePlan(io, flags) : undefined;
      const offlineWiki = await wikiToRead(io, flags.wiki);
      // In the order of before: "not a wiki" first, then mistakes in the selection flags.
      await readWikiManifest(offlineWiki);
      const selection = selectionOptions(flags);
      const search = await openCardSearch(
        offlineWiki,
        flags.domain,
        selection.fields === undefined ? {} : { fields: selection.fields },
      );
      const searchOptions = {
        strategy,
        ...(flags.model === undefined ? {} : { model: await modelFor(io, flags.model) }),
        ...(embedding === undefined ? {} : { embedding }),
        includeUnverified: flags.includeUnverified === true,
        seed: parseCount(flags.seed, "--seed"),
        ...selection,
      };
      const result = await searchSkills(search, query, searchOptions);
      if (online === undefined) {
        if (flags.json === true) printJson(io, result);
        else printLines(io, renderSearch(result));
        return;
      }
      const report = await acquireIfNeeded(
        io,
        query,
        result,
        search,
        offlineWiki,
        online,
        searchOptions,
      );
      if (flags.json === true) printJson(io, { ...result, online: report });
      else printLines(io, [...renderSearch(result), ...renderOnline(report)]);
      // Nothing could be asked: every backend was down, slow, rate-limited or broken.
      if (report.all_failed === true) context.exit(3);
    });

  wiki
    .command("export")
    .description("Export a wiki entry as an Agent Skills folder (SKILL.md + scripts/ + assets/)")
    .argument("<skill_id>", "the entry's id")
    .requiredOption("--out <dir>", "folder to create the skill folder in")
    .option("--wiki <dir>", "the wiki folder (default ./skills_wiki, else the example wiki)")
    .option("--json", "print a JSON document")
    .action(async (id: string, flags: { out: string; wiki?: string; json?: boolean }) => {
      const { io } = context;
      const root = await wikiToRead(io, flags.wiki);
      const entry = await findEntry(root, id);
      if (entry === undefined)
        throw new InputError("wiki.skill.missing", `no skill with id "${id}" in ${root}`, {
          field: "skill_id",
        });
      const { exportEntry } = await import("../../wiki/export.js");
      const result = await exportEntry(entry, resolve(io.cwd, flags.out));
      if (!result.validation.valid) context.exit(1);
      if (flags.json === true) printJson(io, result);
      else
        printLines(io, [
          `exported  ${result.name}  ${result.dir}  (${result.validation.valid ? "valid" : "INVALID"})`,
        ]);
    });

  wiki
    .command("serve-mcp")
    .description(
      "Serve the wiki over MCP: list categories, list skills, read a modality, search, apply",
    )
    .addHelpText(
      "after",
      "\nstdio by default. With --http: streamable HTTP on 127.0.0.1 at /mcp, requests need\n`Authorization: Bearer <token>`; the URL and a generated token are printed on stdout as JSON.\nRefuses to start when a domain's capabilities.json names an implementation that does not exist.\nThe verified entries are also served by the MCP Skills extension (SEP-2640): skills/list,\nskills/get and skill://<domain>/<name>/... resources, each entry exported as `wiki export` does.",
    )
    .option("--wiki <dir>", "the wiki folder (default ./skills_wiki, else the example wiki)")
    .option("--http", "serve streamable HTTP on loopback instead of stdio")
    .option("--port <n>", "port for --http (0 picks a free one)", "0")
    .option("--model <spec>", "selector model for search with select=true")
    .option(
      "--min-score <score>",
      "BM25 score a search hit needs to count as a candidate",
      String(DEFAULT_MIN_SCORE),
    )
    .action(
      async (flags: {
        wiki?: string;
        http?: boolean;
        port: string;
        model?: string;
        minScore: string;
      }) => {
        const { io } = context;
        const root = await wikiToRead(io, flags.wiki);
        const minScore = Number(flags.minScore);
        if (!Number.isFinite(minScore) || minScore < 0)
          throw new UsageError(
            "cli.wiki.min-score",
            `--min-score: expected a non-negative number, got "${flags.minScore}"`,
          );
        // The MCP SDK costs ~0.5 s of start-up: only this command loads it.
        const { openWikiServer, serveWikiHttp, serveWikiStdio } = await import("../../wiki/mcp.js");
        const state = await openWikiServer(root, {
          minScore,
          ...(flags.model === undefined ? {} : { model: await modelFor(io, flags.model) }),
        });
        if (flags.http !== true) {
          log(io, `serving ${state.search.entries.length} skills from ${root} over MCP on stdio`);
          await serveWikiStdio(state);
          return;
        }
        const port = parseCount(flags.port, "--port");
        if (port > 65_535)
          throw new UsageError("cli.port", `--port: expected 0 to 65535, got ${port}`);
        const server = await serveWikiHttp(state, { port });
        printJson(io, { url: server.url, token: server.token });
        log(
          io,
          `serving ${state.search.entries.length} skills from ${root} at ${server.url} (bearer token on stdout)`,
        );
        await (options.waitForStop ?? waitForTerminationSignal)();
        await server.close();
      },
    );
}

interface OnlinePlan {
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
function onlineModule(): Promise<typeof import("../../wiki/online.js")> {
  return import("../../wiki/online.js");
}

/** The search backends of `--search` and `--search-config`, each checked now. */
async function searchBackendsFor(
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

async function onlinePlan(io: CliIo, flags: OnlineFlags): Promise<OnlinePlan> {
  if (flags.domain === undefined)
    throw new UsageError("cli.wiki.online", "--online needs --domain <domain> (the pool's domain)");
  if (flags.model === undefined)
    throw new UsageError("cli.wiki.online", "--online needs --model <spec> (the distiller)");
  if (
    (flags.resources ?? []).length === 0 &&
    (flags.search ?? []).length === 0 &&
    flags.searchConfig === undefined
  )
    throw new UsageError(
      "cli.wiki.online",
      "--online needs something to acquire from: --search <backend...>, --search-config <file> or --resources <dir|manifest|url...>",
    );
  if (
    flags.resultsPath !== undefined &&
    !(flags.search ?? []).some((each) => each.startsWith("json:"))
  )
    throw new UsageError(
      "cli.wiki.results-path",
      "--results-path belongs to --search json:<template>",
    );
  const budget = parseCount(flags.budget, "--budget");
  if (budget < 1 || budget > ONLINE_POOL_BUDGET_LIMIT)
    throw new UsageError(
      "cli.wiki.budget",
      `--budget: expected 1 to ${ONLINE_POOL_BUDGET_LIMIT}, got ${budget}`,
    );
  const minScore = Number(flags.minScore);
  if (!Number.isFinite(minScore) || minScore < 0)
    throw new UsageError(
      "cli.wiki.min-score",
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

interface OnlineReport {
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

async function acquireIfNeeded(
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

function renderOnline(report: OnlineReport): string[] {
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
    lines.push(...renderSearch(report.result).map((line) => `  pool ${line.trimStart()}`));
  return lines;
}

function renderSummary(summary: BuildSummary): string[] {
  const lines = [
    `domain ${summary.domain}: ${summary.resources} resources, ${summary.candidates} candidates`,
    `  accepted        ${summary.accepted}`,
    `  merged          ${summary.merged}`,
    `  reference-only  ${summary.reference_only}`,
    `  unverified      ${summary.unverified}   (exec_ok unknown: no sandbox or no runner)`,
    `  rejected        completeness ${summary.rejected.completeness}, provenance ${summary.rejected.provenance}, modality ${summary.rejected.modality}`,
  ];
  if (summary.over_budget > 0) lines.push(`  over budget     ${summary.over_budget}`);
  for (const flagged of summary.flagged_licences)
    lines.push(
      `  licence ${flagged.flag}: ${flagged.path}${flagged.licence === null ? "" : ` (${flagged.licence})`}`,
    );
  return lines;
}

/** The public Resource2Skill code's stage-1 settings (core/skill_wiki/bm25.py). */
const PUBLIC_CODE_SELECTION = {
  shortlistSize: "max(5n,25)",
  fields: ["name", "applicability", "tags"],
  visualBoost: 1.25,
} as const;

/** Stage-1 settings from --selection, --shortlist-size, --fields, --visual-boost (flag > preset). */
function selectionOptions(flags: {
  selection?: "paper" | "public-code";
  shortlistSize?: string;
  fields?: string;
  visualBoost?: string;
}): Pick<SearchOptions, "k" | "shortlistSize" | "fields" | "visualBoost"> {
  const preset =
    flags.selection === "public-code"
      ? PUBLIC_CODE_SELECTION
      : flags.selection === "paper"
        ? { shortlistSize: "k" as const, fields: shortlistFields, visualBoost: 1 }
        : {};
  const options: {
    k?: number;
    shortlistSize?: ShortlistSizeRule;
    fields?: readonly ShortlistField[];
    visualBoost?: number;
  } = { ...preset };
  if (flags.selection === "paper") options.k = 20;
  if (flags.shortlistSize !== undefined) {
    const value = flags.shortlistSize.replace(/\s+/g, "");
    if (value === "max(5n,25)" || value === "pool") options.shortlistSize = "max(5n,25)";
    else {
      const k = Number(value);
      if (!Number.isInteger(k) || k < 1)
        throw new UsageError(
          "cli.wiki.shortlist-size",
          `--shortlist-size: expected a positive integer K or max(5n,25), got "${flags.shortlistSize}"`,
        );
      options.shortlistSize = "k";
      options.k = k;
    }
  }
  if (flags.fields !== undefined) {
    const fields = flags.fields.split(",").map((field) => field.trim());
    const unknown = fields.filter(
      (field) => !(shortlistFields as readonly string[]).includes(field),
    );
    if (unknown.length > 0 || fields.length === 0)
      throw new UsageError(
        "cli.wiki.fields",
        `--fields: unknown field${unknown.length === 1 ? "" : "s"} ${unknown.join(", ")}; expected some of ${shortlistFields.join(", ")}`,
      );
    options.fields = fields as ShortlistField[];
  }
  if (flags.visualBoost !== undefined) {
    const boost = Number(flags.visualBoost);
    if (!Number.isFinite(boost) || boost < 1)
      throw new UsageError(
        "cli.wiki.visual-boost",
        `--visual-boost: expected a number ≥ 1, got "${flags.visualBoost}"`,
      );
    options.visualBoost = boost;
  }
  return options;
}

function renderSearch(result: SearchResult): string[] {
  const config = result.shortlist_config;
  const lines = [
    `shortlist (${result.shortlist.length}) for "${result.query}"${config === undefined ? "" : ` — K ${config.k} (${config.size}) over ${config.fields.join(" ⊕ ")}, visual boost ×${config.visual_boost}`}:`,
  ];
  for (const [position, hit] of result.shortlist.entries())
    lines.push(
      `  ${String(position + 1).padStart(2)}. ${hit.score.toFixed(3)}  ${hit.card.skill_id.slice(0, 12)}  ${hit.card.skill_name}  [${hit.card.category_path.join("/")}]`,
    );
  lines.push(
    `selected by ${result.strategy}${result.embedding_model === undefined ? "" : ` (${result.embedding_model})`} (${result.selected.length}):`,
  );
  for (const pick of result.selected)
    lines.push(`  ${pick.card.skill_id}  ${pick.card.skill_name} — ${pick.reason}`);
  return lines;
}
