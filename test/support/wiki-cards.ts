/**
 * Generated wiki entries for the search tests and the wiki benchmarks: valid `meta.json`
 * contents drawn from a seeded, Zipf-skewed pseudo-word vocabulary (a few words common, most
 * rare, some with accents so UTF-8 order and NFKC matter), spread over domains, mostly verified.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { mulberry32 } from "../../src/wiki/cards.js";
import {
  type SkillMeta,
  skillId,
  validationStatuses,
  WIKI_ENTRY_FORMAT,
} from "../../src/wiki/meta.js";
import { jsonText, loadOrCreateWikiManifest } from "../../src/wiki/store.js";

/** mulberry32: the same sequence for the same seed on every machine (the wiki's own). */
export const seededRandom = mulberry32;

const syllables = [
  "ka",
  "lo",
  "mi",
  "ne",
  "ru",
  "sa",
  "ti",
  "vo",
  "xe",
  "zu",
  "bé",
  "de",
  "fi",
  "gö",
];

/** `size` distinct pseudo-words. */
export function vocabulary(size: number, seed = 1): string[] {
  const random = seededRandom(seed);
  const words = new Set<string>();
  while (words.size < size) {
    let word = "";
    const length = 2 + Math.floor(random() * 3);
    for (let index = 0; index < length; index += 1)
      word += syllables[Math.floor(random() * syllables.length)];
    words.add(word);
  }
  return [...words];
}

/** Draws words with a cubic skew towards the start of the vocabulary. */
export function wordDrawer(words: readonly string[], seed: number): (count: number) => string[] {
  const random = seededRandom(seed);
  return (count) =>
    Array.from({ length: count }, () => words[Math.floor(random() ** 3 * words.length)] as string);
}

export interface GeneratedWikiOptions {
  readonly domains: readonly string[];
  readonly vocabularySize?: number;
  readonly seed?: number;
}

/** The skill id of generated entry `index` (cheap: no meta is built). */
export function generatedId(index: number, options: GeneratedWikiOptions): string {
  const domain = options.domains[index % options.domains.length] as string;
  return skillId(domain, `generated/${index}.md`, 0);
}

const vocabularies = new Map<string, string[]>();

/**
 * Generated entry `index`: the same meta for the same index and options whatever order entries
 * are made in (each draws from its own seeded sequence), so a million can be streamed in id order.
 */
export function generatedMeta(index: number, options: GeneratedWikiOptions): SkillMeta {
  const key = `${options.vocabularySize ?? 2_000}:${options.seed ?? 1}`;
  let words = vocabularies.get(key);
  if (words === undefined) {
    words = vocabulary(options.vocabularySize ?? 2_000, options.seed ?? 1);
    vocabularies.set(key, words);
  }
  const seed = Math.imul((options.seed ?? 1) + 1, 0x9e3779b1) ^ index;
  const draw = wordDrawer(words, seed);
  const random = seededRandom(seed ^ 0x5bd1e995);
  const slug = (word: string) => word.normalize("NFKD").replace(/[^a-z]/g, "") || "x";
  const domain = options.domains[index % options.domains.length] as string;
  const sourcePath = `generated/${index}.md`;
  const status =
    random() < 0.85
      ? "verified"
      : (validationStatuses[1 + Math.floor(random() * 2)] ?? "unverified");
  return {
    format: WIKI_ENTRY_FORMAT,
    skill_id: skillId(domain, sourcePath, 0),
    skill_name: draw(2 + Math.floor(random() * 3)).join(" "),
    domain,
    category_path: [slug(draw(1)[0] ?? "x"), slug(draw(1)[0] ?? "y")],
    tags: [...new Set(draw(3 + Math.floor(random() * 4)))],
    applicability: `Use when ${draw(8 + Math.floor(random() * 14)).join(" ")}.`,
    source: { type: "article" },
    provenance: [
      {
        source_path: sourcePath,
        node_index: 0,
        sha256: "0".repeat(64),
        resource_type: "article",
        licence: null,
        licence_flag: "unknown",
        locator: "paragraph 1",
      },
    ],
    modalities_present: index % 4 === 1 ? ["text", "visual"] : ["text"],
    files: {
      text: ["text/overview.md"],
      visual: index % 4 === 1 ? ["visual/render.png"] : [],
      code: [],
    },
    code_language: null,
    exec_ok: status === "verified" ? true : "unknown",
    validation_status: status,
    validation_note: status === "verified" ? null : "generated",
    merged: [],
    merges: [],
    findings: [],
    created: "2026-01-01T00:00:00.000Z",
    updated: "2026-01-01T00:00:00.000Z",
  };
}

/** Metas of generated entries `from` … `from + count − 1`, in generation order. */
export function* generatedMetas(
  count: number,
  options: GeneratedWikiOptions,
  from = 0,
): Iterable<SkillMeta> {
  for (let index = from; index < from + count; index += 1) yield generatedMeta(index, options);
}

/** Indexes 0 … count − 1 ordered by skill id: the order a wiki lists (and indexes) its entries. */
export function indexesInIdOrder(count: number, options: GeneratedWikiOptions): Int32Array {
  const ids = Array.from({ length: count }, (_, index) => generatedId(index, options));
  const order = Int32Array.from({ length: count }, (_, index) => index);
  order.sort((left, right) => {
    const a = ids[left] as string;
    const b = ids[right] as string;
    return a < b ? -1 : a > b ? 1 : 0;
  });
  return order;
}

/**
 * A wiki of `count` generated entries at `root`: `wiki.json` and, per entry, its folder with
 * `meta.json` only (what search reads; the other files of an entry are never opened by it).
 */
export async function writeGeneratedWiki(
  root: string,
  count: number,
  options: GeneratedWikiOptions,
): Promise<SkillMeta[]> {
  await loadOrCreateWikiManifest(root);
  const metas = [...generatedMetas(count, options)];
  for (const meta of metas) {
    const folder = join(root, meta.domain, meta.skill_id);
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, "meta.json"), jsonText(meta));
  }
  return metas;
}

/** Queries drawn from the same vocabulary, plus words the wiki does not have. */
export function generatedQueries(count: number, options: GeneratedWikiOptions): string[] {
  const words = vocabulary(options.vocabularySize ?? 2_000, options.seed ?? 1);
  const draw = wordDrawer(words, (options.seed ?? 1) + 3);
  const random = seededRandom((options.seed ?? 1) + 4);
  return Array.from({ length: count }, (_, index) =>
    index % 10 === 9 ? "nothing matches this" : draw(1 + Math.floor(random() * 4)).join(" "),
  );
}
