/**
 * The metadata card of a wiki entry (what a selector, an MCP client and the index file hold),
 * the text stage 1 indexes for it, and the seeded sample of the random strategy: shared by the
 * in-memory search and the search over the index file, which must answer alike.
 */
import type { SkillMeta, Thresholds } from "./meta.js";
import type { ShortlistConfig, ShortlistOptions } from "./search.js";
import {
  type ExecOk,
  type ShortlistField,
  shortlistFields,
  TEXT_ONLY_EXEC,
} from "./search-constants.js";

/** The metadata card a selector (or an MCP client) reads: a few hundred tokens at most. */
export interface SkillCard {
  readonly skill_id: string;
  readonly skill_name: string;
  readonly domain: string;
  readonly category_path: string[];
  readonly tags: string[];
  readonly applicability: string;
  readonly modalities: string[];
  /** "not-applicable": text only, nothing executed (older entries' "unknown" on a verified text-only entry reads so too). */
  readonly exec_ok: ExecOk;
  readonly validation_status: string;
}

const CARD_APPLICABILITY_CHARS = 600;

/**
 * exec_ok as a card shows it: a verified entry without code was never executed, whatever an
 * older build wrote ("unknown" before text-only entries had a value of their own).
 */
export function execOkOf(meta: Pick<SkillMeta, "exec_ok" | "files" | "validation_status">): ExecOk {
  if (meta.validation_status === "verified" && meta.files.code.length === 0) return TEXT_ONLY_EXEC;
  return meta.exec_ok;
}

/** How a card's execution reads to a person or a selector: never "passed" unless code ran. */
export function execLabel(execOk: ExecOk): string {
  if (execOk === true) return "code executed and passed";
  if (execOk === false) return "code failed when executed";
  if (execOk === TEXT_ONLY_EXEC) return "text only, not executed";
  return "code not executed (no sandbox or runner)";
}

/** The fields of an entry's meta a card is made of. */
export type CardSource = Pick<
  SkillMeta,
  | "skill_id"
  | "skill_name"
  | "domain"
  | "category_path"
  | "tags"
  | "applicability"
  | "modalities_present"
  | "exec_ok"
  | "files"
  | "validation_status"
>;

export function cardOf(meta: CardSource): SkillCard {
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
    exec_ok: execOkOf(meta),
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

/**
 * mulberry32: numbers in [0, 1), the same sequence for the same seed on every machine. The
 * random strategy's picks (and so recorded selections) depend on this exact sequence; the
 * `stats` generator is another one, so it cannot stand in without changing them.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Seeded Fisher–Yates prefix: the random strategy's picks are reproducible. */
export function seededSample<T>(items: readonly T[], count: number, seed: number): T[] {
  const random = mulberry32(seed);
  const copy = [...items];
  const picked: T[] = [];
  for (let index = 0; index < Math.min(count, copy.length); index += 1) {
    const chosen = index + Math.floor(random() * (copy.length - index));
    [copy[index], copy[chosen]] = [copy[chosen] as T, copy[index] as T];
    picked.push(copy[index] as T);
  }
  return picked;
}

/** The shortlist settings a search uses: options > the wiki's recorded defaults. */
export function shortlistConfigOf(
  thresholds: Thresholds,
  options: ShortlistOptions = {},
): ShortlistConfig {
  const size = options.size ?? thresholds.shortlist_size;
  const n = options.selectMax ?? thresholds.select_max;
  const fields = shortlistFields.filter((field) =>
    (options.fields ?? thresholds.shortlist_fields).includes(field),
  );
  return {
    k: size === "max(5n,25)" ? Math.max(5 * n, 25) : (options.k ?? thresholds.shortlist_k),
    size,
    fields,
    visual_boost: options.visualBoost ?? thresholds.shortlist_visual_boost,
    bm25_k1: options.k1 ?? thresholds.bm25_k1,
    idf_over: options.idfOver ?? "all",
  };
}

/**
 * The visual boost over two group searches (entries with a visual, the others), as both
 * searches apply it: the boost is uniform within each group, so the merge of each group's best
 * K on boosted scores is exactly the top K of every entry's boosted score.
 */
export function mergeBoosted(
  visual: readonly { doc: number; score: number }[],
  others: readonly { doc: number; score: number }[],
  boost: number,
  k: number,
): { doc: number; score: number }[] {
  return [...visual.map((hit) => ({ doc: hit.doc, score: hit.score * boost })), ...others]
    .sort((left, right) => right.score - left.score || left.doc - right.doc)
    .slice(0, k);
}
