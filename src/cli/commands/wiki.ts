/**
 * `skillsmith wiki ...`: build, export and serve-mcp here; search in `wiki-search.ts` (its online
 * acquisition in `wiki-online.ts`); what they share in `wiki-shared.ts`. Models, the builder, the
 * exporter and the MCP server load inside the commands that use them, so `wiki search` starts
 * without them (see program.ts on start-up).
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { UsageError } from "../../core/errors.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";
import { waitForTerminationSignal } from "../interrupt.js";
import { registerWikiSearch } from "./wiki-search.js";
import {
  DEFAULT_MIN_SCORE,
  DEFAULT_WIKI_FOLDER,
  modelFor,
  parseCount,
  parseSeconds,
  renderSummary,
  resourceArgument,
  type WikiCommandOptions,
  wikiToRead,
} from "./wiki-shared.js";

// Other modules import these from here, where they were first defined.
export {
  DEFAULT_MIN_SCORE,
  DEFAULT_POOL_FOLDER,
  DEFAULT_WIKI_FOLDER,
  type WikiCommandOptions,
} from "./wiki-shared.js";

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
      `\nResources: a folder whose top-level entries are resources (folder = repository, .html/.md = article,\nvideo + .srt/.vtt beside it, image; licence from LICENSE, <meta name="license"> or a <file>.license\nsidecar), a JSON list {"resources": [{"path" | "url", "ref"?, "type"?, "licence"?}]}, or a URL:\nhttp(s) pages, images and videos are downloaded (timeout, size cap) into <wiki>/.cache/downloads;\nrepositories (.git, github.com/<owner>/<repo>, ssh, git, file or git+https URLs, #<ref>) are cloned\nwith --depth 1. The manifest records each URL, its fetch time and content hash. One model call per resource.\nGates: completeness, provenance, deduplication (merge), modality consistency, executability in the\nbubblewrap sandbox (failures kept as reference-only; no sandbox → exec_ok unknown). The first build\nfreezes the thresholds in <wiki>/wiki.json. Progress goes to stderr.`,
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

  registerWikiSearch(wiki, context);

  wiki
    .command("export")
    .description("Export a wiki entry as an Agent Skills folder (SKILL.md + scripts/ + assets/)")
    .argument(
      "<skill_id>",
      "the entry's id, or a prefix of it naming one entry (as `wiki search` prints)",
    )
    .requiredOption("--out <dir>", "folder to create the skill folder in")
    .option("--wiki <dir>", "the wiki folder (default ./skills_wiki, else the example wiki)")
    .option("--json", "print a JSON document")
    .action(async (id: string, flags: { out: string; wiki?: string; json?: boolean }) => {
      const { io } = context;
      const root = await wikiToRead(io, flags.wiki);
      // The 12-digit ids `wiki search` prints are accepted too (a prefix naming one entry).
      const { resolveEntry } = await import("../../wiki/store.js");
      const entry = await resolveEntry(root, id);
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
            "cli.wiki-min-score",
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
