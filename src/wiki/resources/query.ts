/**
 * Targeted queries for online acquisition, built from the task deterministically (no model):
 *
 * 1. the task's words, tokenised like the wiki's BM25 index (NFKC, lowercase, runs of letters
 *    and digits);
 * 2. without English function words and request filler ("please", "make", "want", …), without
 *    one-character tokens, each word once, in the task's order;
 * 3. words that no card of the offline shortlist contains come first: they name what the wiki
 *    lacks (the reason acquisition was triggered); the words the shortlist already covers follow;
 * 4. at most `maxTerms` words (protocol default 6; search engines AND their terms, so a longer
 *    query finds less).
 * Each backend turns the terms into its own request (GitHub adds the configured qualifiers).
 */
import { tokenize } from "../../core/bm25.js";

/** Function words and request filler that never make a query more specific. */
const STOPWORDS = new Set(
  (
    "a about above after again against all also am an and any are as at be because been before " +
    "being below between both but by can could did do does doing down during each few for from " +
    "further get got had has have having he her here hers him his how i if in into is it its itself " +
    "just let me more most my no nor not now of off on once only or other our ours out over own " +
    "please same she should so some such than that the their theirs them then there these they " +
    "this those through to too under until up very via was we were what when where which while " +
    "who whom why will with within without would you your yours " +
    "need needs want wants like make makes making create build add using use used way ways " +
    "something thing things help show shows give gives new one two"
  ).split(" "),
);

export interface TargetedQuery {
  /** The task the acquisition serves, as given. */
  readonly task: string;
  /** The query's words, in order: those the offline shortlist lacks, then the others. */
  readonly terms: readonly string[];
  /** `terms` joined by spaces. */
  readonly text: string;
  /** Of `terms`, those no shortlisted card contains. */
  readonly uncovered: readonly string[];
  readonly domain: string;
}

/**
 * The targeted query for a task. `covered` are the texts of the offline shortlist's cards (name,
 * tags, applicability, category path); pass none when there was no shortlist.
 */
export function targetedQuery(
  task: string,
  options: { domain: string; maxTerms: number; covered?: readonly string[] },
): TargetedQuery {
  const words: string[] = [];
  for (const token of tokenize(task)) {
    if (token.length < 2 || STOPWORDS.has(token) || words.includes(token)) continue;
    words.push(token);
  }
  const covered = new Set((options.covered ?? []).flatMap((text) => tokenize(text)));
  const uncovered = words.filter((word) => !covered.has(word));
  const ordered = [...uncovered, ...words.filter((word) => covered.has(word))];
  const terms = ordered.slice(0, Math.max(1, options.maxTerms));
  return {
    task,
    terms,
    text: terms.join(" "),
    uncovered: uncovered.filter((word) => terms.includes(word)),
    domain: options.domain,
  };
}
