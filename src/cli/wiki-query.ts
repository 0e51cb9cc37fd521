/**
 * The first `wiki search` of a session, answered from a fresh index with as little start-up as
 * Node allows: on a small wiki the query itself takes a few milliseconds and everything else is
 * loading code. This module and the launcher (`launcher.ts`) are bundled by `npm run build` into
 * one CommonJS file, `dist/cli/skillsmith.cjs` (the package's `bin`), which loads no ES module
 * loader, no `fs/promises`, no `node:crypto` (`core/sha256.ts`), no streams and no commander.
 *
 * It answers only what it can answer exactly as the full CLI: a plain command line
 * (`plainWikiSearch`), the `bm25-only` strategy over a field set the index file holds postings
 * for (the four fields, or `--selection public-code`'s three with its statistics over the
 * searched entries), and an index that `IndexedWikiSearch.openNow` finds fresh (stamp,
 * format, thresholds) whose every answered card matches its entry's `meta.json` (SHA-256 and
 * card). Anything else — no index, a stale, damaged or edited one, an entry edited in place, the
 * example wiki, a flag the scan does not take, any error — returns undefined before anything is
 * printed, and the launcher runs the full CLI, which rebuilds the index or reports the error as
 * always. `test/wiki-query-entry.test.ts` compares both on the built package.
 */
import { statSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { redactKnownSecrets, registerEnvironmentSecrets } from "../model/redact.js";
import { bm25OnlySelected, stageOne } from "../wiki/search.js";
import { IndexedWikiSearch } from "../wiki/search-index.js";
import { selectionOptions } from "./commands/wiki-search-run.js";
import { DEFAULT_WIKI_FOLDER, renderSearch } from "./commands/wiki-shared.js";
import { plainWikiSearch } from "./fast-path.js";

/** Where the answer goes: stdout's text, and the environment whose secrets are redacted from it. */
export interface QueryIo {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: (text: string) => void;
}

/**
 * Answer `wiki search …` (argv after the program name) from the index and return 0; undefined,
 * with nothing printed, when the full CLI must answer (see the module comment).
 */
export function answerFromIndex(argv: readonly string[], io: QueryIo): number | undefined {
  const plain = plainWikiSearch(argv);
  if (plain === undefined) return undefined;
  const { query, flags } = plain;
  let text: string;
  try {
    const selection = selectionOptions(flags);
    const wiki = wikiFolder(io.cwd, flags.wiki);
    if (wiki === undefined) return undefined;
    const search = IndexedWikiSearch.openNow(wiki, undefined, flags.domain);
    if (search === undefined) return undefined;
    try {
      if (!IndexedWikiSearch.indexes(selection.fields ?? search.thresholds.shortlist_fields))
        return undefined;
      // As runWikiSearch: strategy bm25-only, seed 0 (the plain scan's default), the selection.
      const { base, max } = stageOne(search, query, {
        strategy: "bm25-only",
        includeUnverified: flags.includeUnverified === true,
        seed: 0,
        ...selection,
      });
      const result = { ...base, selected: bm25OnlySelected(base.shortlist, max) };
      const searched = { wiki, ...(flags.domain === undefined ? {} : { domain: flags.domain }) };
      text =
        flags.json === true
          ? `${JSON.stringify({ ...result, ...searched }, null, 2)}\n`
          : `${renderSearch(result, searched).join("\n")}\n`;
    } finally {
      search.close();
    }
  } catch {
    // A mismatch between the index and an entry, a usage error, an unreadable file: the full
    // CLI answers (it rebuilds the index) or reports it, with the messages it always gives.
    return undefined;
  }
  registerEnvironmentSecrets(io.env);
  io.stdout(redactKnownSecrets(text, io.env));
  return 0;
}

/**
 * `--wiki`, else ./skills_wiki when it is there; undefined (the full CLI decides) for the example
 * wiki shipped with skillsmith and for a ./skills_wiki that cannot be looked at.
 */
function wikiFolder(cwd: string, flag: string | undefined): string | undefined {
  if (flag !== undefined) return resolve(cwd, flag);
  const local = resolve(cwd, DEFAULT_WIKI_FOLDER);
  try {
    statSync(local);
    return local;
  } catch {
    return undefined;
  }
}

/**
 * Write all of `text` to stdout with synchronous writes: `process.stdout` loads the stream and
 * socket modules, which cost this entry more start-up than the query. A non-blocking stdout that
 * is full (EAGAIN) gets the rest through `process.stdout`.
 */
export function writeStdout(text: string): void {
  const bytes = Buffer.from(text, "utf8");
  let written = 0;
  while (written < bytes.length) {
    try {
      written += writeSync(1, bytes, written, bytes.length - written);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      process.stdout.write(bytes.subarray(written));
      return;
    }
  }
}
