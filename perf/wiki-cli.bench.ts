/**
 * `wiki search` from the CLI as users run it: a fresh `node dist/cli/main.js wiki search <query>
 * --wiki <dir> --json` per query, beside bare `node -e 0` sampled alternately in the same run
 * (ratio = bare / search). Generated cards (`test/support/wiki-cards.ts`: seeded, Zipf-skewed
 * vocabulary of 40,000 pseudo-words, four domains, mostly verified).
 *
 * - 10k cards as real entry folders (`meta.json` each): cold = the first search, which finds no
 *   index and builds `<wiki>/.index/search.idx` from the entries before answering; warm = later
 *   searches, which open the index. Cold and warm must answer the same shortlist (checked).
 * - 100k and 1M cards: the index file written directly from the generated metas (a million entry
 *   folders would take longer to write than the benchmark may), stamped with the wiki's domain
 *   folders, so the CLI finds it fresh; warm searches only. Since index format 4 every answered
 *   card is checked against its entry's `meta.json` (SHA-256) and a missing entry makes the
 *   search delete and rebuild the index, so the entries a query can answer must be there: the
 *   benchmark writes the folders of every card its own BM25 over the generated text (below, not
 *   the code under test) ranks within 1% of the K-th best eligible score of some query, ties
 *   included, and indexes their digests. Every other card keeps a zero digest.
 *
 * The case FAILS (row marked failed, `npm run bench` exits 1) when a query that must answer
 * (its own BM25 finds eligible cards) answers nothing, when an answered card is not among the
 * cards that BM25 allows, or when the index file changed during the warm searches (it was
 * rebuilt: the search measured an index rebuild, not the index it was given).
 *
 * Under GNU time (`/usr/bin/time`, when installed) each search's CPU time and peak resident
 * memory are recorded too: on a loaded machine wall times grow with the load, CPU times much
 * less. Targets (issue 15, wall time): 10k < 0.5 s, 100k < 1 s, 1M < 3 s and < 1 GiB.
 *
 * SKILLSMITH_BENCH_WIKI_CLI_SIZES=10000,100000 limits the sizes (default 10000,100000,1000000).
 */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SkillMeta } from "../src/wiki/meta.js";
import {
  type IndexedEntry,
  searchIndexPath,
  wikiStamp,
  writeIndexFile,
} from "../src/wiki/search-index.js";
import { jsonText, loadOrCreateWikiManifest, readWikiManifest } from "../src/wiki/store.js";
import {
  type GeneratedWikiOptions,
  generatedId,
  generatedMeta,
  generatedQueries,
  indexesInIdOrder,
  writeGeneratedWiki,
} from "../test/support/wiki-cards.js";
import { type Benchmark, type BenchmarkRow, summarise } from "./harness.js";
import { builtCli, timeNode, timesBare } from "./processes.js";

const options: GeneratedWikiOptions = {
  domains: ["web-frontend", "data-science", "devops", "backend"],
  vocabularySize: 40_000,
  seed: 15,
};
const targets: Record<number, number> = { 10000: 500, 100000: 1000, 1000000: 3000 };
const SAMPLES = 5;

function* entriesInIdOrder(
  count: number,
  digests: ReadonlyMap<number, Uint8Array>,
): Iterable<IndexedEntry> {
  for (const index of indexesInIdOrder(count, options)) {
    const meta = generatedMeta(index, options);
    const sha256 = digests.get(index);
    yield { domain: meta.domain, meta, ...(sha256 === undefined ? {} : { sha256 }) };
  }
}

/**
 * The benchmark's own reading of a generated card's text: NFKC, lower case, runs of letters and
 * digits (the generated words are Latin only, so no script boundaries arise).
 */
function words(text: string): string[] {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "");
}

const cardText = (meta: SkillMeta) =>
  [meta.skill_name, meta.tags.join(" "), meta.applicability, meta.category_path.join(" ")].join(
    "\n",
  );

/**
 * Per query, the generated cards (by index) a stage-1 search may answer: an independent BM25
 * (IDF and average length over every card, scores over verified cards) keeping every eligible
 * card within 1% of the K-th best score, so ties and float differences stay inside the set.
 */
function answerable(
  size: number,
  queries: readonly string[],
  parameters: { readonly k: number; readonly k1: number; readonly b: number },
): Set<number>[] {
  const terms = new Map<string, { frequency: number; hits: [number, number][] }>();
  for (const query of queries)
    for (const word of words(query)) terms.set(word, { frequency: 0, hits: [] });
  const lengths = new Uint32Array(size);
  const verified = new Uint8Array(size);
  let total = 0;
  for (let index = 0; index < size; index += 1) {
    const meta = generatedMeta(index, options);
    const tokens = words(cardText(meta));
    lengths[index] = tokens.length;
    total += tokens.length;
    verified[index] = meta.validation_status === "verified" ? 1 : 0;
    const counts = new Map<string, number>();
    for (const token of tokens)
      if (terms.has(token)) counts.set(token, (counts.get(token) ?? 0) + 1);
    for (const [token, count] of counts) {
      const term = terms.get(token) as { frequency: number; hits: [number, number][] };
      term.frequency += 1;
      term.hits.push([index, count]);
    }
  }
  const average = total / size;
  return queries.map((query) => {
    const scores = new Map<number, number>();
    for (const word of new Set(words(query))) {
      const term = terms.get(word) as { frequency: number; hits: [number, number][] };
      const idf = Math.log(1 + (size - term.frequency + 0.5) / (term.frequency + 0.5));
      for (const [index, count] of term.hits) {
        if (verified[index] !== 1) continue;
        const norm =
          parameters.k1 * (1 - parameters.b + (parameters.b * (lengths[index] ?? 0)) / average);
        const score = (idf * count * (parameters.k1 + 1)) / (count + norm);
        scores.set(index, (scores.get(index) ?? 0) + score);
      }
    }
    const ranked = [...scores.values()].sort((left, right) => right - left);
    const boundary = ranked[Math.min(parameters.k, ranked.length) - 1] ?? Infinity;
    return new Set(
      [...scores].filter(([, score]) => score >= boundary * 0.99).map(([index]) => index),
    );
  });
}

/** The index file's identity: a rebuild publishes a new file (another inode and mtime). */
async function indexIdentity(wiki: string): Promise<string> {
  const info = await stat(searchIndexPath(wiki), { bigint: true }).catch(() => undefined);
  return info === undefined ? "none" : `${info.ino}:${info.mtimeNs}:${info.size}`;
}

interface Answer {
  readonly text: string;
  readonly ids: readonly string[];
}

/** What a `wiki search --json` answered: the selection (ids and reasons, in order) and the shortlist's ids. */
function answered(stdout: string): Answer {
  const document = JSON.parse(stdout) as {
    selected?: { card?: { skill_id?: string }; reason?: string }[];
    shortlist?: { card?: { skill_id?: string } }[];
  };
  const selected = document.selected ?? [];
  return {
    text: JSON.stringify(selected.map((entry) => [entry.card?.skill_id, entry.reason])),
    ids: [...selected, ...(document.shortlist ?? [])].map((entry) => String(entry.card?.skill_id)),
  };
}

const benchmark: Benchmark = {
  name: "wiki-cli",
  async run() {
    const cli = builtCli();
    const sizes = (process.env.SKILLSMITH_BENCH_WIKI_CLI_SIZES ?? "10000,100000,1000000")
      .split(",")
      .map(Number)
      .filter((size) => Number.isInteger(size) && size > 0);
    const queries = generatedQueries(SAMPLES + 1, options).filter(
      (query) => query !== "nothing matches this",
    );
    const root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-cli-bench-"));
    const rows: BenchmarkRow[] = [];
    try {
      for (const size of sizes) {
        const wiki = join(root, `wiki-${size}`);
        const search = (query: string) => [cli, "wiki", "search", query, "--wiki", wiki, "--json"];
        const run = async (query: string) => {
          const result = await timeNode(search(query));
          if (result.code !== 0) {
            throw new Error(`wiki search at ${size} cards exited ${result.code}: ${result.stderr}`);
          }
          return result;
        };
        const real = size <= 10_000;
        await loadOrCreateWikiManifest(wiki);
        const { thresholds } = await readWikiManifest(wiki);
        const expected = answerable(size, queries, {
          k: thresholds.shortlist_k,
          k1: thresholds.bm25_k1,
          b: thresholds.bm25_b,
        });
        const allowedIds = expected.map(
          (indexes) => new Set([...indexes].map((index) => generatedId(index, options))),
        );
        let cold: { ms: number; cpuMs?: number; answer: Answer } | undefined;
        let written = size;
        if (real) {
          await writeGeneratedWiki(wiki, size, options);
          const first = await run(queries[0] as string);
          cold = {
            ms: first.ms,
            ...(first.cpuMs === undefined ? {} : { cpuMs: first.cpuMs }),
            answer: answered(first.stdout),
          };
        } else {
          // The folders of every card a query may answer, written before the stamp is taken.
          const digests = new Map<number, Uint8Array>();
          for (const index of new Set(expected.flatMap((indexes) => [...indexes]))) {
            const meta = generatedMeta(index, options);
            const text = jsonText(meta);
            await mkdir(join(wiki, meta.domain, meta.skill_id), { recursive: true });
            await writeFile(join(wiki, meta.domain, meta.skill_id, "meta.json"), text);
            digests.set(index, createHash("sha256").update(text).digest());
          }
          written = digests.size;
          for (const domain of options.domains)
            await mkdir(join(wiki, domain), { recursive: true });
          const stamp = await wikiStamp(wiki);
          await writeIndexFile(
            wiki,
            stamp,
            stamp.domains.map((domain) => domain.name),
            size,
            entriesInIdOrder(size, digests),
          );
        }
        const indexBefore = await indexIdentity(wiki);
        const warm: number[] = [];
        const bare: number[] = [];
        const warmCpu: number[] = [];
        const bareCpu: number[] = [];
        const failures: string[] = [];
        let memory: number | undefined;
        let found = 0;
        let same = true;
        for (const [index, query] of queries.entries()) {
          const baseline = await timeNode(["-e", "0"]);
          bare.push(baseline.ms);
          if (baseline.cpuMs !== undefined) bareCpu.push(baseline.cpuMs);
          const result = await run(query);
          warm.push(result.ms);
          if (result.cpuMs !== undefined) warmCpu.push(result.cpuMs);
          if (result.maxRssMiB !== undefined) memory = Math.max(memory ?? 0, result.maxRssMiB);
          const answer = answered(result.stdout);
          if (answer.ids.length > 0) found += 1;
          const allowed = allowedIds[index] as Set<string>;
          if (allowed.size > 0 && answer.ids.length === 0)
            failures.push(`"${query}" answered nothing, ${allowed.size} cards expected`);
          const stray = answer.ids.filter((id) => !allowed.has(id));
          if (stray.length > 0)
            failures.push(`"${query}" answered ${stray.length} cards outside the expected set`);
          if (index === 0 && cold !== undefined) same = answer.text === cold.answer.text;
        }
        if ((await indexIdentity(wiki)) !== indexBefore)
          failures.push("the index file was rebuilt during the warm searches");
        const mustAnswer = expected.filter((indexes) => indexes.size > 0).length;
        const measured = summarise(warm);
        const bareMs = summarise(bare).medianMs;
        const cpu =
          warmCpu.length === warm.length && bareCpu.length === bare.length
            ? { cpuMs: summarise(warmCpu).medianMs, bareCpuMs: summarise(bareCpu).medianMs }
            : {};
        const target = targets[size];
        const memoryNote =
          memory === undefined
            ? "max RSS not measured (no GNU time)"
            : `max RSS ${memory.toFixed(0)} MiB`;
        const memoryMet = size < 1_000_000 || memory === undefined || memory < 1024;
        if (cold !== undefined) {
          rows.push({
            case: `wiki search CLI, ${size} cards, cold (builds the index)`,
            medianMs: cold.ms,
            baselineMs: bareMs,
            ratio: bareMs / cold.ms,
            ...(failures.length === 0 ? {} : { failed: failures.join("; ") }),
            note: `one search; ${timesBare(cold.ms, bareMs, { ...cpu, ...(cold.cpuMs === undefined ? {} : { cpuMs: cold.cpuMs }) })}; ${same ? "same answer as warm" : "ANSWER DIFFERS FROM WARM"}`,
          });
        }
        rows.push({
          case: `wiki search CLI, ${size} cards, warm`,
          medianMs: measured.medianMs,
          baselineMs: bareMs,
          ratio: bareMs / measured.medianMs,
          ...(target === undefined
            ? {}
            : {
                target: `< ${target} ms${size >= 1_000_000 ? ", < 1 GiB" : ""}`,
                met: measured.medianMs < target && memoryMet && same,
              }),
          ...(failures.length === 0 ? {} : { failed: failures.join("; ") }),
          note: `${queries.length} queries, ${found} with results (${mustAnswer} must); ${timesBare(measured.medianMs, bareMs, cpu)}; ${memoryNote}; ${real ? "entry folders" : `index written from generated metas, ${written} entry folders (the answerable cards)`}`,
        });
        await rm(wiki, { recursive: true, force: true });
      }
      return rows;
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  },
};

export default benchmark;
