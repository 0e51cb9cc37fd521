/**
 * Finding skills in two stages. Stage 1: BM25 over name ⊕ tags ⊕ applicability ⊕ category
 * path gives a shortlist of K (verified entries only unless asked). Stage 2: a model reads
 * compact cards of the shortlist and selects at most n, zero allowed, with a one-line reason
 * each. Other strategies for comparison: bm25-only (top n of the shortlist), random (seeded,
 * from every eligible entry), none, embedding (cosine between the query and every eligible card,
 * top n) and bm25+embedding (the BM25 shortlist re-ranked by cosine, top n).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { UnsupportedError } from "../core/errors.js";
import { packageRoot } from "../core/paths.js";
import type { EmbeddingClient, ModelClient } from "../model/index.js";
import { Bm25Index } from "./bm25.js";
import { CardEmbeddings, EMBEDDING_MODEL_VARIABLE, rankByCosine } from "./embedding.js";
import {
  type ShortlistField,
  type ShortlistSizeRule,
  type SkillMeta,
  shortlistFields,
  type Thresholds,
} from "./meta.js";
import { listEntries, readWikiManifest, type WikiEntry } from "./store.js";

export const selectionStrategies = [
  "select",
  "bm25-only",
  "random",
  "none",
  "embedding",
  "bm25+embedding",
] as const;
export type SelectionStrategy = (typeof selectionStrategies)[number];

/** The metadata card a selector (or an MCP client) reads: a few hundred tokens at most. */
export interface SkillCard {
  readonly skill_id: string;
  readonly skill_name: string;
  readonly domain: string;
  readonly category_path: string[];
  readonly tags: string[];
  readonly applicability: string;
  readonly modalities: string[];
  readonly exec_ok: boolean | "unknown";
  readonly validation_status: string;
}

const CARD_APPLICABILITY_CHARS = 600;

export function cardOf(meta: SkillMeta): SkillCard {
  return {
    skill_id: meta.skill_id,
    skill_name: meta.skill_name,
    domain: meta.domain,
    category_path: meta.category_path,
    tags: meta.tags,
    applicability:
      meta.applicability.length > CARD_APPLICABILITY_CHARS
        ? `${meta.applicability.slice(0, CARD_APPLICABILITY_CHARS)}…`
        : meta.applicability,
    modalities: meta.modalities_present,
    exec_ok: meta.exec_ok,
    validation_status: meta.validation_status,
  };
}

/**
 * The text stage 1 indexes for a card: name ⊕ tags ⊕ applicability ⊕ category path (the
 * paper's four fields), or the given subset in that order.
 */
export function indexedText(
  card: Pick<SkillCard, "skill_name" | "tags" | "applicability" | "category_path">,
  fields: readonly ShortlistField[] = shortlistFields,
): string {
  const text: Record<ShortlistField, string> = {
    name: card.skill_name,
    tags: card.tags.join(" "),
    applicability: card.applicability,
    category_path: card.category_path.join(" "),
  };
  return shortlistFields
    .filter((field) => fields.includes(field))
    .map((field) => text[field])
    .join("\n");
}

/** How one search built its shortlist; recorded in every search result. */
export interface ShortlistConfig {
  /** The shortlist size used. */
  readonly k: number;
  /** `k` (the paper's fixed K) or `max(5n,25)` (the public code's pool, n = selection size). */
  readonly size: ShortlistSizeRule;
  readonly fields: readonly ShortlistField[];
  /** Score factor of entries with a visual modality (1 = none). */
  readonly visual_boost: number;
}

export interface ShortlistOptions {
  /** An explicit K (with size `k`). */
  readonly k?: number;
  readonly size?: ShortlistSizeRule;
  /** n, for size `max(5n,25)` (default the wiki's select_max). */
  readonly selectMax?: number;
  readonly fields?: readonly ShortlistField[];
  readonly visualBoost?: number;
  readonly includeUnverified?: boolean;
}

export interface ShortlistHit {
  readonly card: SkillCard;
  readonly score: number;
}

/** An in-memory search over a wiki's cards; built once, queried many times (the MCP server keeps one). */
export class WikiSearch {
  private readonly embeddings = new Map<EmbeddingClient, CardEmbeddings>();
  /** Indexes over other field sets than the four, built when first asked for. */
  private readonly fieldIndexes = new Map<string, Bm25Index>();
  private visualMask: Uint8Array | undefined;

  private constructor(
    readonly entries: readonly WikiEntry[],
    readonly thresholds: Thresholds,
    private readonly index: Bm25Index,
    private readonly verified: Uint8Array,
    /** The wiki folder, where card embeddings are cached; none for an in-memory search. */
    readonly root: string | undefined,
  ) {}

  static async open(root: string, domain?: string): Promise<WikiSearch> {
    const manifest = await readWikiManifest(root);
    const entries = await listEntries(root, domain);
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
      store = await CardEmbeddings.open(client, this.root);
      this.embeddings.set(client, store);
    }
    return store;
  }

  /** The shortlist settings a search uses: options > the wiki's recorded defaults. */
  shortlistConfig(options: ShortlistOptions = {}): ShortlistConfig {
    const size = options.size ?? this.thresholds.shortlist_size;
    const n = options.selectMax ?? this.thresholds.select_max;
    const fields = shortlistFields.filter((field) =>
      (options.fields ?? this.thresholds.shortlist_fields).includes(field),
    );
    return {
      k: size === "max(5n,25)" ? Math.max(5 * n, 25) : (options.k ?? this.thresholds.shortlist_k),
      size,
      fields,
      visual_boost: options.visualBoost ?? this.thresholds.shortlist_visual_boost,
    };
  }

  private indexFor(fields: readonly ShortlistField[]): Bm25Index {
    if (fields.length === shortlistFields.length) return this.index;
    const key = fields.join(",");
    let index = this.fieldIndexes.get(key);
    if (index === undefined) {
      index = Bm25Index.build(
        this.entries.map((entry) => indexedText(entry.meta, fields)),
        { k1: this.thresholds.bm25_k1, b: this.thresholds.bm25_b },
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
    const index = this.indexFor(config.fields);
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
      hits = [
        ...index
          .search(query, config.k, group(1))
          .map((hit) => ({ doc: hit.doc, score: hit.score * config.visual_boost })),
        ...index.search(query, config.k, group(0)),
      ]
        .sort((left, right) => right.score - left.score || left.doc - right.doc)
        .slice(0, config.k);
    }
    return hits.map((hit) => {
      const entry = this.entries[hit.doc];
      if (entry === undefined) throw new RangeError(`no entry ${hit.doc}`);
      return { card: cardOf(entry.meta), score: hit.score };
    });
  }

  eligible(includeUnverified: boolean): WikiEntry[] {
    return this.entries.filter(
      (entry) => includeUnverified || entry.meta.validation_status === "verified",
    );
  }
}

export const selectionSchema = z.object({
  selections: z.array(z.object({ skill_id: z.string(), reason: z.string() })),
});

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

async function selectorPrompt(max: number): Promise<string> {
  const text = await readFile(join(packageRoot(), "prompts", "wiki", "selector.md"), "utf8");
  return text.replaceAll("{{max}}", String(max));
}

export function renderCards(hits: readonly ShortlistHit[]): string {
  return hits
    .map(
      ({ card }) =>
        `skill_id: ${card.skill_id}\nname: ${card.skill_name}\ncategory: ${card.category_path.join(" / ")}\ntags: ${card.tags.join(", ")}\nwhen to use: ${card.applicability}\nmodalities: ${card.modalities.join(", ")}; exec_ok: ${String(card.exec_ok)}`,
    )
    .join("\n---\n");
}

/** Stage 2: the model picks at most `max` cards; its answer is checked against the shortlist. */
export async function selectFromShortlist(
  model: ModelClient,
  query: string,
  shortlist: readonly ShortlistHit[],
  max: number,
): Promise<{ selected: Selection[]; rejected_ids: string[] }> {
  if (shortlist.length === 0) return { selected: [], rejected_ids: [] };
  const result = await model.generateObject(selectionSchema, {
    role: "wiki-selector",
    system: await selectorPrompt(max),
    prompt: `Task: ${query}\n\nShortlist (${shortlist.length} skill cards):\n${renderCards(shortlist)}`,
    temperature: 0,
  });
  const byId = new Map(shortlist.map((hit) => [hit.card.skill_id, hit.card]));
  const selected: Selection[] = [];
  const rejected: string[] = [];
  for (const pick of result.object.selections) {
    const card = byId.get(pick.skill_id.trim());
    if (card === undefined) {
      rejected.push(pick.skill_id);
      continue;
    }
    if (selected.some((each) => each.card.skill_id === card.skill_id)) continue;
    if (selected.length >= max) break;
    selected.push({ card, reason: (pick.reason.split("\n")[0] ?? "").trim().slice(0, 240) });
  }
  return { selected, rejected_ids: rejected };
}

/** Seeded Fisher–Yates prefix: the random strategy's picks are reproducible. */
function seededSample<T>(items: readonly T[], count: number, seed: number): T[] {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const copy = [...items];
  const picked: T[] = [];
  for (let index = 0; index < Math.min(count, copy.length); index += 1) {
    const chosen = index + Math.floor(random() * (copy.length - index));
    [copy[index], copy[chosen]] = [copy[chosen] as T, copy[index] as T];
    picked.push(copy[index] as T);
  }
  return picked;
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
}

export async function searchSkills(
  search: WikiSearch,
  query: string,
  options: SearchOptions = {},
): Promise<SearchResult> {
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
  };
  const shortlist = search.shortlist(query, shortlistOptions);
  const base = {
    query,
    strategy,
    shortlist,
    rejected_ids: [] as string[],
    shortlist_config: search.shortlistConfig(shortlistOptions),
  };
  switch (strategy) {
    case "none":
      return { ...base, selected: [] };
    case "bm25-only":
      return {
        ...base,
        selected: shortlist
          .slice(0, max)
          .map((hit) => ({ card: hit.card, reason: `BM25 score ${hit.score.toFixed(3)}` })),
      };
    case "random": {
      const picks = seededSample(
        search.eligible(options.includeUnverified === true),
        max,
        options.seed ?? 0,
      );
      return {
        ...base,
        selected: picks.map((entry) => ({ card: cardOf(entry.meta), reason: "random pick" })),
      };
    }
    case "select": {
      if (options.model === undefined)
        throw new UnsupportedError(
          "wiki.select.no-model",
          "selection needs a model (--model <spec>)",
        );
      const selected = await selectFromShortlist(options.model, query, shortlist, max);
      return { ...base, ...selected };
    }
    case "embedding":
    case "bm25+embedding": {
      if (options.embedding === undefined)
        throw new UnsupportedError(
          "wiki.select.no-embedding",
          `the ${strategy} strategy needs an embedding model: pass --embedding-model <provider:model> or set ${EMBEDDING_MODEL_VARIABLE} (e.g. openai:text-embedding-3-small)`,
        );
      const cards =
        strategy === "embedding"
          ? search.eligible(options.includeUnverified === true).map((entry) => cardOf(entry.meta))
          : shortlist.map((hit) => hit.card);
      const embedded = { ...base, embedding_model: options.embedding.spec };
      if (cards.length === 0) return { ...embedded, selected: [] };
      const store = await search.cardEmbeddings(options.embedding);
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
