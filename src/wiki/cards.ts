/**
 * The metadata card of a wiki entry (what a selector, an MCP client and the index file hold),
 * the text stage 1 indexes for it, and the seeded sample of the random strategy: shared by the
 * in-memory search and the search over the index file, which must answer alike.
 */
import type { SkillMeta } from "./meta.js";

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

/** The text stage 1 indexes for a card: name ⊕ tags ⊕ applicability ⊕ category path. */
export function indexedText(
  card: Pick<SkillCard, "skill_name" | "tags" | "applicability" | "category_path">,
): string {
  return [
    card.skill_name,
    card.tags.join(" "),
    card.applicability,
    card.category_path.join(" "),
  ].join("\n");
}

/** Seeded Fisher–Yates prefix: the random strategy's picks are reproducible. */
export function seededSample<T>(items: readonly T[], count: number, seed: number): T[] {
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
