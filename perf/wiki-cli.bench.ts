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
 *   folders would take longer to write than the benchmark may), stamped with the wiki's empty
 *   domain folders, so the CLI finds it fresh; warm searches only.
 *
 * Under GNU time (`/usr/bin/time`, when installed) each search's CPU time and peak resident
 * memory are recorded too: on a loaded machine wall times grow with the load, CPU times much
 * less. Targets (issue 15, wall time): 10k < 0.5 s, 100k < 1 s, 1M < 3 s and < 1 GiB.
 *
 * SKILLSMITH_BENCH_WIKI_CLI_SIZES=10000,100000 limits the sizes (default 10000,100000,1000000).
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type IndexedEntry, wikiStamp, writeIndexFile } from "../src/wiki/search-index.js";
import { loadOrCreateWikiManifest } from "../src/wiki/store.js";
import {
  type GeneratedWikiOptions,
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

function* entriesInIdOrder(count: number): Iterable<IndexedEntry> {
  for (const index of indexesInIdOrder(count, options)) {
    const meta = generatedMeta(index, options);
    yield { domain: meta.domain, meta };
  }
}

/** The shortlist a `wiki search --json` answered (ids and reasons, in order). */
function answered(stdout: string): string {
  const document = JSON.parse(stdout) as {
    shortlist?: { card?: { skill_id?: string }; reason?: string }[];
  };
  return JSON.stringify(
    (document.shortlist ?? []).map((entry) => [entry.card?.skill_id, entry.reason]),
  );
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
        let cold: { ms: number; cpuMs?: number; answer: string } | undefined;
        if (real) {
          await writeGeneratedWiki(wiki, size, options);
          const first = await run(queries[0] as string);
          cold = {
            ms: first.ms,
            ...(first.cpuMs === undefined ? {} : { cpuMs: first.cpuMs }),
            answer: answered(first.stdout),
          };
        } else {
          await loadOrCreateWikiManifest(wiki);
          for (const domain of options.domains)
            await mkdir(join(wiki, domain), { recursive: true });
          const stamp = await wikiStamp(wiki);
          await writeIndexFile(
            wiki,
            stamp,
            stamp.domains.map((domain) => domain.name),
            size,
            entriesInIdOrder(size),
          );
        }
        const warm: number[] = [];
        const bare: number[] = [];
        const warmCpu: number[] = [];
        const bareCpu: number[] = [];
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
          const ids = answered(result.stdout);
          if (ids !== "[]") found += 1;
          if (index === 0 && cold !== undefined) same = ids === cold.answer;
        }
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
          note: `${queries.length} queries, ${found} with results; ${timesBare(measured.medianMs, bareMs, cpu)}; ${memoryNote}; ${real ? "entry folders" : "index written from generated metas"}`,
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
