/** What the `wiki` subcommands share: default folders, flag parsers, model clients, renderings. */
import { join, resolve } from "node:path";
import { UsageError } from "../../core/errors.js";
import { pathExists } from "../../core/fs.js";
import { packageRoot } from "../../core/paths.js";
import { EMBEDDING_MODEL_VARIABLE } from "../../model/embedding-variable.js";
// Types only at the top: models, the builder, the exporter and the MCP server load in the
// commands that use them, so `wiki search` starts without them (see program.ts on start-up).
import type { EmbeddingClient, ModelClient } from "../../model/index.js";
import type { BuildSummary } from "../../wiki/build.js";
import { looksLikeUrl } from "../../wiki/resources/url.js";
import type { SearchResult, SelectionStrategy } from "../../wiki/search.js";
import type { CliIo } from "../context.js";

export interface WikiCommandOptions {
  /** Resolves when `serve-mcp --http` should stop; the default waits for SIGINT or SIGTERM. */
  readonly waitForStop?: () => Promise<void>;
}

export const DEFAULT_WIKI_FOLDER = "skills_wiki";
export const DEFAULT_POOL_FOLDER = "skills_wiki_online";
/** A best BM25 score below this is no adequate candidate (good matches score 5 or more). */
export const DEFAULT_MIN_SCORE = 2;

/**
 * `--wiki`, else ./skills_wiki when it exists, else the example wiki shipped with skillsmith. A
 * ./skills_wiki that is there but unreadable is an error, never a reason to read the example.
 */
export async function wikiToRead(io: CliIo, flag: string | undefined): Promise<string> {
  if (flag !== undefined) return resolve(io.cwd, flag);
  const local = resolve(io.cwd, DEFAULT_WIKI_FOLDER);
  return (await pathExists(local)) ? local : join(packageRoot(), "examples", "wiki");
}

export async function modelFor(io: CliIo, spec: string): Promise<ModelClient> {
  const { ModelClient } = await import("../../model/client.js");
  return new ModelClient({ spec, env: io.env, cwd: io.cwd });
}

/** The embedding model: --embedding-model > SKILLSMITH_EMBEDDING_MODEL > config > a usage error. */
export async function embeddingClientFor(
  io: CliIo,
  strategy: SelectionStrategy,
  flag: string | undefined,
): Promise<EmbeddingClient> {
  const { resolveSearchEmbeddingModel } = await import("../../wiki/embedding.js");
  const resolved = resolveSearchEmbeddingModel(flag, io);
  if (resolved === undefined)
    throw new UsageError(
      "cli.wiki-embedding-model",
      `--strategy ${strategy} needs an embedding model: pass --embedding-model <provider:model> (e.g. openai:text-embedding-3-small) or set ${EMBEDDING_MODEL_VARIABLE}`,
    );
  const { createEmbeddingClient } = await import("../../model/embedding.js");
  return createEmbeddingClient({ spec: resolved.spec, env: io.env, cwd: io.cwd });
}

/** A `--resources` value: URLs as given, paths relative to the working folder. */
export function resourceArgument(io: CliIo, value: string): string {
  return looksLikeUrl(value) ? value : resolve(io.cwd, value);
}

export function parseSeconds(value: string, flag: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new UsageError(
      "cli.seconds",
      `${flag}: expected a positive number of seconds, got "${value}"`,
    );
  return Math.round(seconds * 1000);
}

export function parseCount(value: string, flag: string): number {
  const count = Number(value);
  if (!Number.isInteger(count) || count < 0)
    throw new UsageError("cli.count", `${flag}: expected a non-negative integer, got "${value}"`);
  return count;
}

export function renderSummary(summary: BuildSummary): string[] {
  const lines = [
    `domain ${summary.domain}: ${summary.resources} resources, ${summary.candidates} candidates`,
    `  accepted        ${summary.accepted}${summary.accepted_text_only > 0 ? `   (${summary.accepted_text_only} text only: verified by the text gates, nothing executed)` : ""}`,
    `  merged          ${summary.merged}`,
    `  reference-only  ${summary.reference_only}`,
    `  unverified      ${summary.unverified}   (exec_ok unknown: no sandbox or no runner)`,
    `  flagged         ${summary.flagged}   (a high content finding: never verified)`,
    `  rejected        completeness ${summary.rejected.completeness}, provenance ${summary.rejected.provenance}, modality ${summary.rejected.modality}`,
  ];
  if (summary.over_budget > 0) lines.push(`  over budget     ${summary.over_budget}`);
  // A resource's own findings are recorded once (resources.json); each of its entries is flagged.
  for (const flagged of summary.flagged_resources)
    lines.push(
      `  resource flagged: ${flagged.path} (${[...new Set(flagged.findings.filter((finding) => finding.severity === "high").map((finding) => finding.code))].join(", ")})`,
    );
  for (const flagged of summary.flagged_licences)
    lines.push(
      `  licence ${flagged.flag}: ${flagged.path}${flagged.licence === null ? "" : ` (${flagged.licence})`}`,
    );
  return lines;
}

/** Where a search looked: the wiki folder and, with --domain, the one domain. */
export interface SearchedWiki {
  readonly wiki: string;
  readonly domain?: string;
}

function searchedText(where: SearchedWiki): string {
  return `wiki ${where.wiki}${where.domain === undefined ? "" : ` (domain ${where.domain})`}`;
}

/**
 * A search as text: which wiki was searched, then the shortlist with full skill ids (every id
 * printed is one `wiki export` takes), or one line when nothing matched.
 */
export function renderSearch(result: SearchResult, where: SearchedWiki): string[] {
  if (result.shortlist.length === 0 && result.selected.length === 0)
    return [`no entry matches "${result.query}" in ${searchedText(where)}`];
  const config = result.shortlist_config;
  const lines = [
    `shortlist (${result.shortlist.length}) for "${result.query}" in ${searchedText(where)}${config === undefined ? "" : ` — K ${config.k} (${config.size}) over ${config.fields.join(" ⊕ ")}, visual boost ×${config.visual_boost}`}:`,
  ];
  for (const [position, hit] of result.shortlist.entries())
    lines.push(
      `  ${String(position + 1).padStart(2)}. ${hit.score.toFixed(3)}  ${hit.card.skill_id}  ${hit.card.skill_name}  [${hit.card.category_path.join("/")}]`,
    );
  lines.push(
    `selected by ${result.strategy}${result.embedding_model === undefined ? "" : ` (${result.embedding_model})`} (${result.selected.length}):`,
  );
  for (const pick of result.selected)
    lines.push(`  ${pick.card.skill_id}  ${pick.card.skill_name} — ${pick.reason}`);
  return lines;
}
