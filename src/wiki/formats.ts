/**
 * The format tags of the wiki's files (`core/format-tag.ts`: `skillsmith-<kind>/<version>`),
 * zod-free so the search's cold path (`meta-check.ts`) reads them without loading zod.
 *
 * Wikis built before the one convention tagged every file `format: 1`; readers take that as
 * version 1 of the file's kind (`WIKI_OLDER_TAGS`), so a wiki built then still loads, and its
 * search index still matches, since reading rewrites nothing. The search index file has its own
 * tag (`search-index.ts`).
 */
import { formatTag, type OlderTag } from "../core/format-tag.js";

/** `wiki.json`. */
export const WIKI_MANIFEST_FORMAT = formatTag("wiki", 1);
/** An entry's `meta.json`. */
export const WIKI_ENTRY_FORMAT = formatTag("wiki-entry", 1);
/** A domain's `taxonomy.json`. */
export const WIKI_TAXONOMY_FORMAT = formatTag("wiki-taxonomy", 1);
/** A domain's `resources.json`. */
export const WIKI_RESOURCES_FORMAT = formatTag("wiki-resources", 1);
/** A domain's `capabilities.json`. */
export const WIKI_CAPABILITIES_FORMAT = formatTag("wiki-capabilities", 1);
/** The embedding cache (`.cache/embeddings/<model>.json`). */
export const WIKI_EMBEDDINGS_FORMAT = formatTag("wiki-embeddings", 1);
/** An online pool's `pool.json`. */
export const WIKI_ONLINE_POOL_FORMAT = formatTag("wiki-online-pool", 1);

/** The bare number every wiki file carried before the tags. */
export const OLDER_WIKI_FORMAT = 1;
export const WIKI_OLDER_TAGS: readonly OlderTag[] = [
  { style: "number", format: OLDER_WIKI_FORMAT },
];

/** Whether `format` is `tag` or the older bare number that reads as it. */
export function isWikiFormat(format: unknown, tag: string): boolean {
  return format === tag || format === OLDER_WIKI_FORMAT;
}
