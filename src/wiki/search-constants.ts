/**
 * The names and values stage 1 of `wiki search` needs, free of schemas: the card fields, the
 * shortlist size rules, the selection strategies and a text-only entry's `exec_ok`. `meta.ts`
 * (the zod schemas) and `search.ts` re-export them; the search over the index file and the
 * `wiki search` command import them from here, so a query on a fresh index never loads zod
 * (its ~95 modules cost more CPU than the query itself).
 */

/** The card fields stage 1 may index (the paper: all four; the public code: name, applicability, tags). */
export const shortlistFields = ["name", "tags", "applicability", "category_path"] as const;
export type ShortlistField = (typeof shortlistFields)[number];

/**
 * The shortlist's size: `"k"` is the paper's fixed K (`shortlist_k`); `"max(5n,25)"` is the
 * public Resource2Skill code's candidate pool, five times the selection size n, at least 25.
 */
export const shortlistSizeRules = ["k", "max(5n,25)"] as const;
export type ShortlistSizeRule = (typeof shortlistSizeRules)[number];

/** `exec_ok` of a text-only entry: there is no code, so nothing was executed. */
export const TEXT_ONLY_EXEC = "not-applicable";
export type ExecOk = boolean | "unknown" | typeof TEXT_ONLY_EXEC;

export const selectionStrategies = [
  "select",
  "bm25-only",
  "random",
  "none",
  "embedding",
  "bm25+embedding",
] as const;
export type SelectionStrategy = (typeof selectionStrategies)[number];
