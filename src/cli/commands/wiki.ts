import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Command, Option } from "commander";
import { InputError, UsageError } from "../../core/errors.js";
import { packageRoot } from "../../core/paths.js";
import { ModelClient } from "../../model/index.js";
import { type BuildSummary, buildWiki } from "../../wiki/build.js";
import { exportEntry } from "../../wiki/export.js";
import { openWikiServer, serveWikiHttp, serveWikiStdio } from "../../wiki/mcp.js";
import {
  type SearchResult,
  type SelectionStrategy,
  searchSkills,
  selectionStrategies,
  WikiSearch,
} from "../../wiki/search.js";
import { findEntry } from "../../wiki/store.js";
import { type CliIo, type CommandContext, log, printJson, printLines } from "../context.js";

export interface WikiCommandOptions {
  /** Resolves when `serve-mcp --http` should stop; the default waits for SIGINT or SIGTERM. */
  readonly waitForStop?: () => Promise<void>;
}

export const DEFAULT_WIKI_FOLDER = "skills_wiki";

function waitForTerminationSignal(): Promise<void> {
  return new Promise((done) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      done();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

/** `--wiki`, else ./skills_wiki when it exists, else the example wiki shipped with skillsmith. */
function wikiToRead(io: CliIo, flag: string | undefined): string {
  if (flag !== undefined) return resolve(io.cwd, flag);
  const local = resolve(io.cwd, DEFAULT_WIKI_FOLDER);
  return existsSync(local) ? local : join(packageRoot(), "examples", "wiki");
}

function modelFor(io: CliIo, spec: string): ModelClient {
  return new ModelClient({ spec, env: io.env, cwd: io.cwd });
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
      `\nResources: a folder whose top-level entries are resources (folder = repository, .html = article,\nvideo + .srt/.vtt beside it, image; licence from LICENSE, <meta name="license"> or a <file>.license\nsidecar), or a JSON list {"resources": [{"path", "type"?, "licence"?}]}. One model call per resource.\nGates: completeness, provenance, deduplication (merge), modality consistency, executability in the\nbubblewrap sandbox (failures kept as reference-only; no sandbox → exec_ok unknown). The first build\nfreezes the thresholds in <wiki>/wiki.json. Progress goes to stderr.`,
    )
    .requiredOption("--domain <domain>", "the domain (lowercase, hyphens), e.g. web-frontend")
    .requiredOption("--resources <dir|manifest>", "folder of resources or a resource list (JSON)")
    .requiredOption("--model <spec>", "distiller model, e.g. anthropic:claude-haiku-4-5")
    .option("--wiki <dir>", "the wiki folder", DEFAULT_WIKI_FOLDER)
    .option("--no-vision", "do not send frames and images to the model")
    .option("--json", "print the build summary (with every candidate's gate results) as JSON")
    .action(
      async (flags: {
        domain: string;
        resources: string;
        model: string;
        wiki: string;
        vision: boolean;
        json?: boolean;
      }) => {
        const { io } = context;
        const summary = await buildWiki({
          wiki: resolve(io.cwd, flags.wiki),
          domain: flags.domain,
          resources: resolve(io.cwd, flags.resources),
          model: modelFor(io, flags.model),
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
    .option("--include-unverified", "also search reference-only and unverified entries")
    .option("--json", "print a JSON document")
    .action(
      async (
        query: string,
        flags: {
          wiki?: string;
          domain?: string;
          select?: boolean;
          model?: string;
          strategy?: SelectionStrategy;
          seed: string;
          includeUnverified?: boolean;
          json?: boolean;
        },
      ) => {
        const { io } = context;
        const strategy = flags.strategy ?? (flags.select === true ? "select" : "bm25-only");
        if (strategy === "select" && flags.model === undefined)
          throw new UsageError("cli.wiki.model", "--select needs --model <spec>");
        const search = await WikiSearch.open(wikiToRead(io, flags.wiki), flags.domain);
        const result = await searchSkills(search, query, {
          strategy,
          ...(flags.model === undefined ? {} : { model: modelFor(io, flags.model) }),
          includeUnverified: flags.includeUnverified === true,
          seed: parseCount(flags.seed, "--seed"),
        });
        if (flags.json === true) printJson(io, result);
        else printLines(io, renderSearch(result));
      },
    );

  wiki
    .command("export")
    .description("Export a wiki entry as an Agent Skills folder (SKILL.md + scripts/ + assets/)")
    .argument("<skill_id>", "the entry's id")
    .requiredOption("--out <dir>", "folder to create the skill folder in")
    .option("--wiki <dir>", "the wiki folder (default ./skills_wiki, else the example wiki)")
    .option("--json", "print a JSON document")
    .action(async (id: string, flags: { out: string; wiki?: string; json?: boolean }) => {
      const { io } = context;
      const root = wikiToRead(io, flags.wiki);
      const entry = await findEntry(root, id);
      if (entry === undefined)
        throw new InputError("wiki.skill.missing", `no skill with id "${id}" in ${root}`, {
          field: "skill_id",
        });
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
      "\nstdio by default. With --http: streamable HTTP on 127.0.0.1 at /mcp, requests need\n`Authorization: Bearer <token>`; the URL and a generated token are printed on stdout as JSON.\nRefuses to start when a domain's capabilities.json names an implementation that does not exist.",
    )
    .option("--wiki <dir>", "the wiki folder (default ./skills_wiki, else the example wiki)")
    .option("--http", "serve streamable HTTP on loopback instead of stdio")
    .option("--port <n>", "port for --http (0 picks a free one)", "0")
    .option("--model <spec>", "selector model for search with select=true")
    .action(async (flags: { wiki?: string; http?: boolean; port: string; model?: string }) => {
      const { io } = context;
      const root = wikiToRead(io, flags.wiki);
      const state = await openWikiServer(
        root,
        flags.model === undefined ? {} : { model: modelFor(io, flags.model) },
      );
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
    });
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

function renderSearch(result: SearchResult): string[] {
  const lines = [`shortlist (${result.shortlist.length}) for "${result.query}":`];
  for (const [position, hit] of result.shortlist.entries())
    lines.push(
      `  ${String(position + 1).padStart(2)}. ${hit.score.toFixed(3)}  ${hit.card.skill_id.slice(0, 12)}  ${hit.card.skill_name}  [${hit.card.category_path.join("/")}]`,
    );
  lines.push(`selected by ${result.strategy} (${result.selected.length}):`);
  for (const pick of result.selected)
    lines.push(`  ${pick.card.skill_id}  ${pick.card.skill_name} — ${pick.reason}`);
  return lines;
}
