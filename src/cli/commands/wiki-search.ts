/** `skillsmith wiki search`: a BM25 shortlist, optionally a model's selection, optionally online. */
import { type Command, Option } from "commander";
import { UsageError } from "../../core/errors.js";
import { EMBEDDING_MODEL_VARIABLE } from "../../model/embedding-variable.js";
import {
  GITHUB_API_URL,
  GITHUB_API_URL_VARIABLE,
  ONLINE_POOL_BUDGET_LIMIT,
} from "../../wiki/online-constants.js";
import {
  type IdfScope,
  openCardSearch,
  type SearchOptions,
  type SelectionStrategy,
  searchSkills,
  selectionStrategies,
} from "../../wiki/search.js";
import {
  type ShortlistField,
  type ShortlistSizeRule,
  shortlistFields,
} from "../../wiki/search-constants.js";
import { IndexedWikiSearch } from "../../wiki/search-index.js";
import { type CommandContext, printJson, printLines } from "../context.js";
// Only the types at the top: the acquisition (and the schemas it reads with) loads with --online,
// so a query on a fresh index starts without zod.
import type { OnlineFlags } from "./wiki-online.js";
import {
  DEFAULT_MIN_SCORE,
  DEFAULT_POOL_FOLDER,
  embeddingClientFor,
  modelFor,
  parseCount,
  renderSearch,
  wikiToRead,
} from "./wiki-shared.js";

export function registerWikiSearch(wiki: Command, context: CommandContext): void {
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
        "stage-1 defaults: paper (K=20 over name, tags, applicability, category path) or public-code (a pool of max(5n,25) over name, applicability, tags, visuals ×1.25, BM25 k1 1.5 with its statistics over the entries searched)",
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
        throw new UsageError("cli.wiki-model", "--select needs --model <spec>");
      const embedding = strategy.includes("embedding")
        ? await embeddingClientFor(io, strategy, flags.embeddingModel)
        : undefined;
      // Check the acquisition's flags before searching, so a mistake costs nothing.
      const acquisition = flags.online === true ? await import("./wiki-online.js") : undefined;
      const online =
        acquisition === undefined ? undefined : await acquisition.onlinePlan(io, flags);
      const offlineWiki = await wikiToRead(io, flags.wiki);
      // In the order of before: "not a wiki" first, then mistakes in the selection flags. A
      // fresh index proves a valid wiki.json (it was read when the index was written, and its
      // stat is in the index's stamp); without one, the manifest is read and validated.
      const probe = await IndexedWikiSearch.open(offlineWiki, undefined, flags.domain);
      probe?.close();
      if (probe === undefined)
        await (await import("../../wiki/meta-check.js")).readWikiManifestChecked(offlineWiki);
      const selection = selectionOptions(flags);
      const search = await openCardSearch(offlineWiki, flags.domain, {
        ...(selection.fields === undefined ? {} : { fields: selection.fields }),
        ...(selection.idfOver === undefined ? {} : { idfOver: selection.idfOver }),
      });
      const searchOptions = {
        strategy,
        ...(flags.model === undefined ? {} : { model: await modelFor(io, flags.model) }),
        ...(embedding === undefined ? {} : { embedding }),
        includeUnverified: flags.includeUnverified === true,
        seed: parseCount(flags.seed, "--seed"),
        ...selection,
      };
      const result = await searchSkills(search, query, searchOptions);
      const searched = {
        wiki: offlineWiki,
        ...(flags.domain === undefined ? {} : { domain: flags.domain }),
      };
      if (online === undefined || acquisition === undefined) {
        if (flags.json === true) printJson(io, { ...result, ...searched });
        else printLines(io, renderSearch(result, searched));
        return;
      }
      const report = await acquisition.acquireIfNeeded(
        io,
        query,
        result,
        search,
        offlineWiki,
        online,
        searchOptions,
      );
      if (flags.json === true) printJson(io, { ...result, ...searched, online: report });
      else printLines(io, [...renderSearch(result, searched), ...acquisition.renderOnline(report)]);
      // Nothing could be asked: every backend was down, slow, rate-limited or broken.
      if (report.all_failed === true) context.exit(3);
    });
}

/** Every flag of `wiki search`. */
export interface SearchFlags extends OnlineFlags {
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
 * The public Resource2Skill code's stage-1 settings (its `bm25.py`): pool max(5n, 25) over
 * name ⊕ applicability ⊕ tags, visuals ×1.25, k1 = 1.5. Differences that remain are in
 * src/wiki/README.md ("Selection").
 */
export const PUBLIC_CODE_SELECTION = {
  shortlistSize: "max(5n,25)",
  fields: ["name", "applicability", "tags"],
  visualBoost: 1.25,
  k1: 1.5,
  idfOver: "searched",
} as const;

/** Stage-1 settings from --selection, --shortlist-size, --fields, --visual-boost (flag > preset). */
export function selectionOptions(flags: {
  selection?: "paper" | "public-code";
  shortlistSize?: string;
  fields?: string;
  visualBoost?: string;
}): Pick<SearchOptions, "k" | "shortlistSize" | "fields" | "visualBoost" | "k1" | "idfOver"> {
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
    k1?: number;
    idfOver?: IdfScope;
  } = { ...preset };
  if (flags.selection === "paper") options.k = 20;
  if (flags.shortlistSize !== undefined) {
    const value = flags.shortlistSize.replace(/\s+/g, "");
    if (value === "max(5n,25)" || value === "pool") options.shortlistSize = "max(5n,25)";
    else {
      const k = Number(value);
      if (!Number.isInteger(k) || k < 1)
        throw new UsageError(
          "cli.wiki-shortlist-size",
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
        "cli.wiki-fields",
        `--fields: unknown field${unknown.length === 1 ? "" : "s"} ${unknown.join(", ")}; expected some of ${shortlistFields.join(", ")}`,
      );
    options.fields = fields as ShortlistField[];
  }
  if (flags.visualBoost !== undefined) {
    const boost = Number(flags.visualBoost);
    if (!Number.isFinite(boost) || boost < 1)
      throw new UsageError(
        "cli.wiki-visual-boost",
        `--visual-boost: expected a number ≥ 1, got "${flags.visualBoost}"`,
      );
    options.visualBoost = boost;
  }
  return options;
}
