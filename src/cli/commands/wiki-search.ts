/** `skillsmith wiki search`: a BM25 shortlist, optionally a model's selection, optionally online. */
import { type Command, Option } from "commander";
import { EMBEDDING_MODEL_VARIABLE } from "../../model/embedding-variable.js";
import {
  GITHUB_API_URL,
  GITHUB_API_URL_VARIABLE,
  ONLINE_POOL_BUDGET_LIMIT,
} from "../../wiki/online-constants.js";
import { selectionStrategies, shortlistFields } from "../../wiki/search-constants.js";
import type { CommandContext } from "../context.js";
import { runWikiSearch, type SearchFlags } from "./wiki-search-run.js";
import { DEFAULT_MIN_SCORE, DEFAULT_POOL_FOLDER } from "./wiki-shared.js";

export { PUBLIC_CODE_SELECTION, type SearchFlags, selectionOptions } from "./wiki-search-run.js";

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
    .action((query: string, flags: SearchFlags) => runWikiSearch(context, query, flags));
}
