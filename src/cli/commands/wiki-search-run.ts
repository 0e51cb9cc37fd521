/**
 * What `wiki search` does once its flags are read, apart from commander: the command registers
 * it, and `fast-path.ts` runs it for a plain query without loading commander (the first query's
 * start-up is most of its cost on a small wiki). One function, so both answer alike.
 */
import { UsageError } from "../../core/errors.js";
import {
  type IdfScope,
  openCardSearch,
  type SearchOptions,
  type SelectionStrategy,
  searchSkills,
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
  embeddingClientFor,
  modelFor,
  parseCount,
  renderSearch,
  wikiToRead,
} from "./wiki-shared.js";

/** Run `wiki search <query>` with its flags (as commander gives them, defaults filled). */
export async function runWikiSearch(
  context: CommandContext,
  query: string,
  flags: SearchFlags,
): Promise<void> {
  const { io } = context;
  const strategy = flags.strategy ?? (flags.select === true ? "select" : "bm25-only");
  if (strategy === "select" && flags.model === undefined)
    throw new UsageError("cli.wiki-model", "--select needs --model <spec>");
  const embedding = strategy.includes("embedding")
    ? await embeddingClientFor(io, strategy, flags.embeddingModel)
    : undefined;
  // Check the acquisition's flags before searching, so a mistake costs nothing.
  const acquisition = flags.online === true ? await import("./wiki-online.js") : undefined;
  const online = acquisition === undefined ? undefined : await acquisition.onlinePlan(io, flags);
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
