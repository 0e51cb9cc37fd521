/**
 * Finding skills in two stages. Stage 1: BM25 over name ⊕ tags ⊕ applicability ⊕ category
 * path gives a shortlist of K (verified entries only unless asked). Stage 2: a model reads
 * compact cards of the shortlist and selects at most n, zero allowed, with a one-line reason
 * each. Other strategies for comparison: bm25-only (top n of the shortlist), random (seeded,
 * from every eligible entry), none, embedding (cosine between the query and every eligible card,
 * top n) and bm25+embedding (the BM25 shortlist re-ranked by cosine, top n).
 *
 * One file (a little over 400 lines) because the two stages and the comparison strategies are one
 * selection function over one search interface; the index-backed search is `search-index.ts`.
 */
import { rm } from "node:fs/promises";
import { Bm25Index, tokenize } from "../core/bm25.js";
import { isSkillsmithError, UnsupportedError } from "../core/errors.js";
import { EMBEDDING_MODEL_VARIABLE } from "../model/embedding-variable.js";
import type { EmbeddingClient, ModelClient } from "../model/index.js";
import {
  cardOf,
  indexedText,
  mergeBoosted,
  type SkillCard,
  seededSample,
  shortlistConfigOf,
} from "./cards.js";
import type { CardEmbeddings } from "./embedding.js";
import type { Thresholds } from "./meta.js";
import { readEntries, readWikiManifestChecked } from "./meta-check.js";
import {
  type SelectionStrategy,
  type ShortlistField,
  type ShortlistSizeRule,
  selectionStrategies,
  shortlistFields,
} from "./search-constants.js";
import {
  buildInProgress,
  IndexedWikiSearch,
  searchIndexPath,
  writeSearchIndex,
} from "./search-index.js";
import type { WikiEntry } from "./store.js";

export { cardOf, indexedText, type SkillCard, shortlistConfigOf } from "./cards.js";
export { type SelectionStrategy, selectionStrategies };

/** How one search built its shortlist; recorded in every search result. */
export interface ShortlistConfig {
  /** The shortlist size used. */
  readonly k: number;
  /** `k` (the paper's fixed K) or `max(5n,25)` (the public code's pool, n = selection size). */
  readonly size: ShortlistSizeRule;
  readonly fields: readonly ShortlistField[];
  /** Score factor of entries with a visual modality (1 = none). */
  readonly visual_boost: number;
  /** BM25's k1 used (the wiki's `bm25_k1` unless a preset or option gave another). */
  readonly bm25_k1: number;
  /** The documents BM25's statistics (N, df, average length) are taken over: see `IdfScope`. */
  readonly idf_over: IdfScope;
}

/**
 * `all`: every entry of the searched domain(s), before the verified filter (the default; the
 * index file's way). `searched`: only the entries this search may return (verified unless
 * unverified ones are included), entries without a single token left out — the public
 * Resource2Skill code's way (`bm25.py` counts the documents it scores), `--selection public-code`.
 */
export type IdfScope = "all" | "searched";

export interface ShortlistOptions {
  /** An explicit K (with size `k`). */
  readonly k?: number;
  readonly size?: ShortlistSizeRule;
  /** n, for size `max(5n,25)` (default the wiki's select_max). */
  readonly selectMax?: number;
  readonly fields?: readonly ShortlistField[];
  readonly visualBoost?: number;
  /** BM25's k1 (default the wiki's `bm25_k1`; the public code's 1.5 with `--selection public-code`). */
  readonly k1?: number;
  /** Which documents BM25's statistics cover (default `all`). */
  readonly idfOver?: IdfScope;
  readonly includeUnverified?: boolean;
}

export interface ShortlistHit {
  readonly card: SkillCard;
  readonly score: number;
}

/**
 * What the strategies need from a search over a wiki's cards: `WikiSearch` (the entries in
 * memory) and `IndexedWikiSearch` (the index file, `search-index.ts`) answer alike.
 */
export interface CardSearch {
  readonly thresholds: Thresholds;
  /** Entries searched. */
  readonly size: number;
  shortlistConfig(options?: ShortlistOptions): ShortlistConfig;
  shortlist(query: string, options?: ShortlistOptions): ShortlistHit[];
  /** Every eligible card, in skill-id order. */
  eligibleCards(includeUnverified: boolean): SkillCard[];
  /** The random strategy: a seeded sample of the eligible cards. */
  sampleEligible(count: number, seed: number, includeUnverified: boolean): SkillCard[];
  cardEmbeddings(client: EmbeddingClient): Promise<CardEmbeddings>;
}

/** An in-memory search over a wiki's cards; built once, queried many times (the MCP server keeps one). */
export class WikiSearch implements CardSearch {
  private readonly embeddings = new Map<EmbeddingClient, CardEmbeddings>();
  /** Indexes over other field sets than the four, built when first asked for. */
  private readonly fieldIndexes = new Map<string, Bm25Index>();
  private visualMask: Uint8Array | undefined;
  /** Searches over the eligible entries alone, by fields and eligibility (`scopedSearch`). */
  private readonly scopedSearches = new Map<string, WikiSearch>();

  private constructor(
    readonly entries: readonly WikiEntry[],
    readonly thresholds: Thresholds,
    private readonly index: Bm25Index,
    private readonly verified: Uint8Array,
    /** The wiki folder, where card embeddings are cached; none for an in-memory search. */
    readonly root: string | undefined,
  ) {}

  static async open(root: string, domain?: string): Promise<WikiSearch> {
    const manifest = await readWikiManifestChecked(root);
    const entries = await readEntries(root, domain);
    return WikiSearch.fromEntries(entries, manifest.thresholds, root);
  }

  static fromEntries(
    entries: readonly WikiEntry[],
    thresholds: Thresholds,
    root?: string,
  ): WikiSearch {
    const index = Bm25Index.build(
      entries.map((entry) => indexedText(entry.meta)),
      { k1: thresholds.bm25_k1, b: thresholds.bm25_b },
    );
    const verified = Uint8Array.from(entries, (entry) =>
      entry.meta.validation_status === "verified" ? 1 : 0,
    );
    return new WikiSearch(entries, thresholds, index, verified, root);
  }

  /** Card vectors of one embedding model: kept for the life of this search, cached on disk. */
  async cardEmbeddings(client: EmbeddingClient): Promise<CardEmbeddings> {
    let store = this.embeddings.get(client);
    if (store === undefined) {
      const { CardEmbeddings } = await import("./embedding.js");
      store = await CardEmbeddings.open(client, this.root);
      this.embeddings.set(client, store);
    }
    return store;
  }

  /** The shortlist settings a search uses: options > the wiki's recorded defaults. */
  shortlistConfig(options: ShortlistOptions = {}): ShortlistConfig {
    return shortlistConfigOf(this.thresholds, options);
  }

  private indexFor(fields: readonly ShortlistField[], k1: number): Bm25Index {
    if (fields.length === shortlistFields.length && k1 === this.thresholds.bm25_k1)
      return this.index;
    const key = `${fields.join(",")}|${k1}`;
    let index = this.fieldIndexes.get(key);
    if (index === undefined) {
      index = Bm25Index.build(
        this.entries.map((entry) => indexedText(entry.meta, fields)),
        { k1, b: this.thresholds.bm25_b },
      );
      this.fieldIndexes.set(key, index);
    }
    return index;
  }

  /**
   * Stage 1: the BM25 shortlist (K, fields and visual boost from the wiki's thresholds unless
   * given). With a boost, the best K of the entries with a visual and the best K of the others
   * are merged on boosted scores: the boost is uniform within each group, so this is exactly
   * the top K of every entry's boosted score.
   */
  shortlist(query: string, options: ShortlistOptions = {}): ShortlistHit[] {
    const config = this.shortlistConfig(options);
    if (config.idf_over === "searched")
      return this.scopedSearch(config, options.includeUnverified === true).shortlist(query, {
        ...options,
        idfOver: "all",
        includeUnverified: true,
      });
    const index = this.indexFor(config.fields, config.bm25_k1);
    const eligible = options.includeUnverified === true ? undefined : this.verified;
    let hits: { doc: number; score: number }[];
    if (config.visual_boost === 1) hits = index.search(query, config.k, eligible);
    else {
      this.visualMask ??= Uint8Array.from(this.entries, (entry) =>
        entry.meta.modalities_present.includes("visual") ? 1 : 0,
      );
      const visual = this.visualMask;
      const group = (wanted: number) =>
        Uint8Array.from(visual, (flag, doc) =>
          flag === wanted && (eligible === undefined || eligible[doc] === 1) ? 1 : 0,
        );
      hits = mergeBoosted(
        index.search(query, config.k, group(1)),
        index.search(query, config.k, group(0)),
        config.visual_boost,
        config.k,
      );
    }
    return hits.map((hit) => {
      const entry = this.entries[hit.doc];
      if (entry === undefined) throw new RangeError(`no entry ${hit.doc}`);
      return { card: cardOf(entry.meta), score: hit.score };
    });
  }

  /**
   * A search over only the entries this one may return, and only those with a token in the
   * fields searched: its BM25 statistics are the reference's (`idf_over: "searched"`).
   */
  private scopedSearch(config: ShortlistConfig, includeUnverified: boolean): WikiSearch {
    const key = `scoped|${config.fields.join(",")}|${includeUnverified}`;
    let scoped = this.scopedSearches.get(key);
    if (scoped === undefined) {
      const entries = this.eligible(includeUnverified).filter(
        (entry) => tokenize(indexedText(entry.meta, config.fields)).length > 0,
      );
      scoped = WikiSearch.fromEntries(entries, this.thresholds, this.root);
      this.scopedSearches.set(key, scoped);
    }
    return scoped;
  }

  eligible(includeUnverified: boolean): WikiEntry[] {
    return this.entries.filter(
      (entry) => includeUnverified || entry.meta.validation_status === "verified",
    );
  }

  get size(): number {
    return this.entries.length;
  }

  eligibleCards(includeUnverified: boolean): SkillCard[] {
    return this.eligible(includeUnverified).map((entry) => cardOf(entry.meta));
  }

  sampleEligible(count: number, seed: number, includeUnverified: boolean): SkillCard[] {
    return seededSample(this.eligible(includeUnverified), count, seed).map((entry) =>
      cardOf(entry.meta),
    );
  }
}

/**
 * The search `wiki search` uses: the index file when it is fresh and holds a posting set for the
 * fields asked for (the four, or the public code's three; `INDEXED_FIELD_SETS`), with either
 * statistics scope; else, when no build is running and the wiki can be written, the index
 * rebuilt and then used; else (a read-only wiki, a build in progress, other fields, a wiki the
 * index cannot hold) the entries read into memory. Every path answers alike
 * (`search-index.test.ts`).
 */
export async function openCardSearch(
  root: string,
  domain?: string,
  options: { readonly fields?: readonly ShortlistField[] } = {},
): Promise<CardSearch> {
  // A fresh index answers without reading wiki.json (its thresholds are in the header, its stat
  // in the stamp): the query then loads no schema at all.
  const indexedNow = await IndexedWikiSearch.open(root, undefined, domain);
  if (indexedNow !== undefined) {
    if (IndexedWikiSearch.indexes(options.fields ?? indexedNow.thresholds.shortlist_fields))
      return indexedNow;
    indexedNow.close();
  }
  const { thresholds } = await readWikiManifestChecked(root);
  if (!IndexedWikiSearch.indexes(options.fields ?? thresholds.shortlist_fields))
    return WikiSearch.open(root, domain);
  const open = () => IndexedWikiSearch.open(root, thresholds, domain);
  const indexed = await open();
  if (indexed !== undefined) return indexed;
  if (!(await buildInProgress(root))) {
    const fresh = async () => {
      const candidate = await open();
      candidate?.close();
      return candidate !== undefined;
    };
    try {
      await writeSearchIndex(root, { skipIf: fresh });
      const rebuilt = await open();
      if (rebuilt !== undefined) return rebuilt;
    } catch (error) {
      // A wiki we may not write (an installed example, a read-only mount) is searched as is.
      const code = (error as NodeJS.ErrnoException).code;
      if (
        code !== "EACCES" &&
        code !== "EROFS" &&
        code !== "EPERM" &&
        !(error instanceof RangeError)
      )
        throw error;
    }
  }
  return WikiSearch.open(root, domain);
}

export interface Selection {
  readonly card: SkillCard;
  readonly reason: string;
}

export interface SearchResult {
  readonly query: string;
  readonly strategy: SelectionStrategy;
  readonly shortlist: ShortlistHit[];
  readonly selected: Selection[];
  /** Ids the selector named that were not in the shortlist (dropped). */
  readonly rejected_ids: string[];
  /** The embedding strategies: the model that embedded query and cards. */
  readonly embedding_model?: string;
  /** How the shortlist was built: K, its size rule, the fields indexed, the visual boost. */
  readonly shortlist_config?: ShortlistConfig;
}

export interface SearchOptions {
  readonly strategy?: SelectionStrategy;
  readonly model?: ModelClient;
  /** For the embedding and bm25+embedding strategies. */
  readonly embedding?: EmbeddingClient;
  readonly includeUnverified?: boolean;
  readonly k?: number;
  readonly max?: number;
  readonly seed?: number;
  /** Shortlist size rule, fields and visual boost (default: the wiki's recorded defaults). */
  readonly shortlistSize?: ShortlistSizeRule;
  readonly fields?: readonly ShortlistField[];
  readonly visualBoost?: number;
  /** BM25's k1 (default the wiki's). */
  readonly k1?: number;
  /** Which documents BM25's statistics cover (default `all`). */
  readonly idfOver?: IdfScope;
}

/**
 * Search with a strategy. An index that answers a card its wiki does not hold as indexed (an
 * edited index, or one left stale by an entry edited in place) is never trusted: it is removed,
 * rebuilt from the entries and asked again, once.
 */
export async function searchSkills(
  search: CardSearch,
  query: string,
  options: SearchOptions = {},
): Promise<SearchResult> {
  try {
    return await searchWith(search, query, options);
  } catch (error) {
    if (
      !(search instanceof IndexedWikiSearch) ||
      !isSkillsmithError(error) ||
      error.code !== "wiki.index-mismatch"
    )
      throw error;
    search.close();
    await rm(searchIndexPath(search.root), { force: true });
    const rebuilt = await openCardSearch(search.root, search.domain, {
      ...(options.fields === undefined ? {} : { fields: options.fields }),
    });
    return searchWith(rebuilt, query, options);
  }
}

/**
 * Stage 1 of every strategy: the shortlist and the fields each result starts with. Also the
 * whole of a `bm25-only` search with `bm25OnlySelected`, which the start-up entry
 * (`cli/wiki-query.ts`) runs on the index without this module's other strategies.
 */
export function stageOne(search: CardSearch, query: string, options: SearchOptions) {
  const strategy = options.strategy ?? "bm25-only";
  const max = options.max ?? search.thresholds.select_max;
  const shortlistOptions: ShortlistOptions = {
    ...(options.k === undefined ? {} : { k: options.k }),
    ...(options.includeUnverified === undefined
      ? {}
      : { includeUnverified: options.includeUnverified }),
    ...(options.shortlistSize === undefined ? {} : { size: options.shortlistSize }),
    selectMax: max,
    ...(options.fields === undefined ? {} : { fields: options.fields }),
    ...(options.visualBoost === undefined ? {} : { visualBoost: options.visualBoost }),
    ...(options.k1 === undefined ? {} : { k1: options.k1 }),
    ...(options.idfOver === undefined ? {} : { idfOver: options.idfOver }),
  };
  const shortlist = search.shortlist(query, shortlistOptions);
  const base = {
    query,
    strategy,
    shortlist,
    rejected_ids: [] as string[],
    shortlist_config: search.shortlistConfig(shortlistOptions),
  };
  return { base, max };
}

/** The `bm25-only` strategy's picks: the shortlist's first `max`, each with its score. */
export function bm25OnlySelected(shortlist: readonly ShortlistHit[], max: number): Selection[] {
  return shortlist
    .slice(0, max)
    .map((hit) => ({ card: hit.card, reason: `BM25 score ${hit.score.toFixed(3)}` }));
}

async function searchWith(
  search: CardSearch,
  query: string,
  options: SearchOptions,
): Promise<SearchResult> {
  const { base, max } = stageOne(search, query, options);
  const { strategy, shortlist } = base;
  switch (strategy) {
    case "none":
      return { ...base, selected: [] };
    case "bm25-only":
      return { ...base, selected: bm25OnlySelected(shortlist, max) };
    case "random": {
      const picks = search.sampleEligible(
        max,
        options.seed ?? 0,
        options.includeUnverified === true,
      );
      return { ...base, selected: picks.map((card) => ({ card, reason: "random pick" })) };
    }
    case "select": {
      if (options.model === undefined)
        throw new UnsupportedError(
          "wiki.select-no-model",
          "selection needs a model (--model <spec>)",
        );
      const { selectFromShortlist } = await import("./select.js");
      const selected = await selectFromShortlist(options.model, query, shortlist, max);
      return { ...base, ...selected };
    }
    case "embedding":
    case "bm25+embedding": {
      if (options.embedding === undefined)
        throw new UnsupportedError(
          "wiki.select-no-embedding",
          `the ${strategy} strategy needs an embedding model: pass --embedding-model <provider:model> or set ${EMBEDDING_MODEL_VARIABLE} (e.g. openai:text-embedding-3-small)`,
        );
      const cards =
        strategy === "embedding"
          ? search.eligibleCards(options.includeUnverified === true)
          : shortlist.map((hit) => hit.card);
      const embedded = { ...base, embedding_model: options.embedding.spec };
      if (cards.length === 0) return { ...embedded, selected: [] };
      const store = await search.cardEmbeddings(options.embedding);
      const { rankByCosine } = await import("./embedding.js");
      const vectors = await store.vectorsOf(cards.map((card) => indexedText(card)));
      await store.save();
      const ranked = rankByCosine(await store.embedQuery(query), vectors, max);
      return {
        ...embedded,
        selected: ranked.map(({ index, similarity }) => ({
          card: cards[index] as SkillCard,
          reason: `cosine ${similarity.toFixed(3)}`,
        })),
      };
    }
  }
}
