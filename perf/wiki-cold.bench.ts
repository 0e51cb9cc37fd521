/**
 * The first `wiki search` on a small wiki, from the `skillsmith` command as npm links it
 * (`dist/cli/skillsmith`, the shell launcher that starts `dist/cli/skillsmith.cjs`), beside a minimal Python driver of the public Resource2Skill code
 * (`perf/reference-bm25.py`) on the same 541 entries (the size of the reference's released excel
 * wiki), timed alternately in the same loop (ratio = Python / CLI wall time; ≥ 1 means the CLI is
 * at least as fast). The verdict is wall time, as issue 30 measured it: a row whose median wall
 * time exceeds the median of the driver run by the interpreter directly is FAILED and
 * `npm run bench` exits 1. CPU time (user + system of the child, GNU time) is reported beside it;
 * both medians are over the same interleaved loop, so a loaded machine slows both alike.
 *
 * The wiki: 541 generated entries of one domain (`test/support/wiki-cards.ts`, seeded; accents
 * folded to ASCII so both tokenisers see the same words), one `meta.json` per entry as skillsmith
 * stores them, and the same entries in one `index.json` as the reference's registry keeps them.
 *
 * Cases, each a fresh process per sample, in one loop:
 * - after build: the default search once the index exists, as `wiki build` (and every wiki
 *   write) leaves it — the reference's registry is also written at build time. The bin's start-up
 *   bundle answers it: the header, the query's postings and the answered cards, each checked
 *   against its entry's meta.json. Also timed through `dist/cli/main.js` (the ES module entry,
 *   the full CLI's fast path) for comparison;
 * - no index: `.index/` deleted before the sample (only after a user deleted it): the bundle
 *   hands over to the full CLI, which reads the 541 entries, writes `.index/search.idx`, answers;
 * - public-code: `--selection public-code --include-unverified`, the reference's settings
 *   (its fields, k1, boost, pool, statistics over the entries it scores), answered by the bin's
 *   start-up bundle from the index's second posting set (the no-index sample before it wrote the
 *   index); its answer is checked against the Python driver's (same ids, same order);
 * - `node -e 0`: Node's own start on this machine (a floor no entry can go below);
 * - the Python driver: `perf/reference-bm25.py <index.json> <q> 25` run by the interpreter itself
 *   (`sys.executable`, the baseline of every row), and as `python3` the PATH finds (in the note):
 *   on a machine where `python3` is a version-manager shim (pyenv), the shim costs more than the
 *   driver. The public-code answers must equal the driver's, else the benchmark fails.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { SkillMeta } from "../src/wiki/meta.js";
import { jsonText } from "../src/wiki/store.js";
import { generatedQueries, writeGeneratedWiki } from "../test/support/wiki-cards.js";
import { type Benchmark, type BenchmarkRow, summarise } from "./harness.js";
import {
  builtBin,
  builtCli,
  type ProcessRun,
  projectRoot,
  timeNode,
  timeProcess,
} from "./processes.js";

const ENTRIES = 541;
/** Queries; each is asked in every case once per round. */
const SAMPLES = 7;
const ROUNDS = 3;
const options = { domains: ["excel"], vocabularySize: 3_000, seed: 30 };
const ascii = (text: string) => text.normalize("NFKD").replace(/[^\x20-\x7e]/g, "");

/** The entries with accents folded, written back as the wiki's `meta.json` files. */
async function writeAsciiWiki(wiki: string): Promise<SkillMeta[]> {
  const metas = (await writeGeneratedWiki(wiki, ENTRIES, options)).map((meta) => ({
    ...meta,
    skill_name: ascii(meta.skill_name),
    applicability: ascii(meta.applicability),
    tags: [...new Set(meta.tags.map(ascii))],
  }));
  for (const meta of metas)
    await writeFile(join(wiki, meta.domain, meta.skill_id, "meta.json"), jsonText(meta));
  return metas;
}

/** The median CPU time (user + system) of the runs, when GNU time measured every one. */
function medianCpu(runs: readonly ProcessRun[]): number | undefined {
  const cpu = runs.map((run) => run.cpuMs).filter((ms): ms is number => ms !== undefined);
  return cpu.length === runs.length && cpu.length > 0 ? summarise(cpu).medianMs : undefined;
}

function cpuNote(runs: readonly ProcessRun[]): string {
  const cpu = medianCpu(runs);
  return cpu === undefined ? "" : `, CPU ${cpu.toFixed(0)} ms`;
}

const benchmark: Benchmark = {
  name: "wiki-cold",
  async run() {
    const cli = builtCli();
    const bin = builtBin();
    const root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-cold-"));
    try {
      const wiki = join(root, "wiki");
      const metas = await writeAsciiWiki(wiki);
      const registry = join(root, "index.json");
      const sorted = [...metas].sort((a, b) => (a.skill_id < b.skill_id ? -1 : 1));
      await writeFile(registry, JSON.stringify({ domain: "excel", entries: sorted }));
      const queries = generatedQueries(SAMPLES + 2, options)
        .filter((query) => query !== "nothing matches this")
        .map(ascii)
        .slice(0, SAMPLES);
      const argv = (query: string, extra: string[]) => [
        "wiki",
        "search",
        query,
        "--wiki",
        wiki,
        "--json",
        ...extra,
      ];
      // The bin as npm links it (the shell launcher), and the ES module entry run by node.
      const search = (query: string, extra: string[] = []) => timeProcess(bin, argv(query, extra));
      const searchModule = (query: string) => timeNode([cli, ...argv(query, [])]);
      const driver = [join(projectRoot, "perf", "reference-bm25.py"), registry];
      const interpreter = execFileSync("python3", ["-c", "import sys; print(sys.executable)"], {
        encoding: "utf8",
      }).trim();
      const runs = {
        direct: [] as ProcessRun[],
        python: [] as ProcessRun[],
        bare: [] as ProcessRun[],
        cold: [] as ProcessRun[],
        publicCode: [] as ProcessRun[],
        warm: [] as ProcessRun[],
        warmModule: [] as ProcessRun[],
      };
      let agree = 0;
      let asked = 0;
      const loadBefore = loadavg()[0] ?? 0;
      for (let round = 0; round < ROUNDS; round += 1)
        for (const query of queries) {
          await rm(join(wiki, ".index"), { recursive: true, force: true });
          const reference = await timeProcess("python3", [...driver, query, "25"]);
          runs.direct.push(await timeProcess(interpreter, [...driver, query, "25"]));
          runs.bare.push(await timeNode(["-e", "0"]));
          const cold = await search(query);
          const publicCode = await search(query, [
            "--selection",
            "public-code",
            "--include-unverified",
          ]);
          const warm = await search(query);
          const warmModule = await searchModule(query);
          for (const run of [reference, cold, publicCode, warm, warmModule])
            if (run.code !== 0) throw new Error(`exited ${run.code}: ${run.stderr.slice(0, 400)}`);
          if (warm.stdout !== cold.stdout || warmModule.stdout !== cold.stdout)
            throw new Error(`the bin answered "${query}" unlike the full CLI`);
          runs.python.push(reference);
          runs.cold.push(cold);
          runs.publicCode.push(publicCode);
          runs.warm.push(warm);
          runs.warmModule.push(warmModule);
          const ids = (
            JSON.parse(publicCode.stdout) as { shortlist: { card: { skill_id: string } }[] }
          ).shortlist.map((hit) => hit.card.skill_id);
          const expected = (JSON.parse(reference.stdout) as [string, number][]).map(([id]) => id);
          asked += 1;
          if (JSON.stringify(ids) === JSON.stringify(expected)) agree += 1;
        }
      // Node loads NODE_EXTRA_CA_CERTS at every start, before any of our code (~50 ms CPU for a
      // 200 KB bundle on the session-10 machine); the Python driver pays nothing alike.
      const certificates =
        process.env.NODE_EXTRA_CA_CERTS === undefined
          ? ""
          : "; NODE_EXTRA_CA_CERTS is set (Node reads it at every start)";
      const load = `load ${loadBefore.toFixed(1)} → ${(loadavg()[0] ?? 0).toFixed(1)} (1-min average, 2 = both cores busy)${certificates}`;
      // The baseline is the driver run by the interpreter itself: a version-manager shim in
      // front of python3 is not the reference's cost.
      const baseline = summarise(runs.direct.map((run) => run.ms));
      const baselineCpu = medianCpu(runs.direct);
      const shim = `python3 as the PATH finds it ${summarise(runs.python.map((run) => run.ms)).medianMs.toFixed(0)} ms${cpuNote(runs.python)}`;
      const bare = `node -e 0 ${summarise(runs.bare.map((run) => run.ms)).medianMs.toFixed(0)} ms${cpuNote(runs.bare)}`;
      const agreement = `public-code shortlist equals the Python driver's on ${agree} of ${asked} queries`;
      const rows: BenchmarkRow[] = [];
      const add = (name: string, measured: ProcessRun[], note: string, judged = true) => {
        const measurement = summarise(measured.map((run) => run.ms));
        const cpu = medianCpu(measured);
        const slower = judged && measurement.medianMs > baseline.medianMs;
        const cpuRatio =
          cpu !== undefined && baselineCpu !== undefined
            ? `CPU ${cpu.toFixed(0)} ms vs ${baselineCpu.toFixed(0)} ms (${(baselineCpu / cpu).toFixed(2)}×)`
            : "CPU not measured (no /usr/bin/time)";
        rows.push({
          case: name,
          medianMs: measurement.medianMs,
          baselineMs: baseline.medianMs,
          ratio: baseline.medianMs / measurement.medianMs,
          ...(judged
            ? {
                target: "median wall ≤ the Python driver run directly (same loop)",
                met: !slower,
              }
            : {}),
          note: `${note}; ${cpuRatio}; ${measured.length} samples; Python driver run by ${interpreter} directly ${baseline.medianMs.toFixed(0)} ms wall; ${shim}; ${bare}; ${load}; ${agreement}`,
          ...(slower ? { failed: "slower than the Python driver run directly" } : {}),
        });
      };
      if (agree !== asked)
        throw new Error(`public-code answered unlike the Python driver: ${agreement}`);
      add(
        `wiki search, ${ENTRIES} entries, first query after build (index present)`,
        runs.warm,
        "skillsmith bin (dist/cli/skillsmith, which starts dist/cli/skillsmith.cjs without NODE_EXTRA_CA_CERTS): opens the index file, checks each answered card against its meta.json",
      );
      add(
        `wiki search, ${ENTRIES} entries, first query after build, ES module entry`,
        runs.warmModule,
        "dist/cli/main.js: the same answer through the full CLI's modules (for comparison, not judged)",
        false,
      );
      add(
        `wiki search, ${ENTRIES} entries, no index (deleted by hand)`,
        runs.cold,
        "skillsmith bin: no index, so the full CLI reads every meta.json and writes .index/search.idx (wiki build leaves one)",
      );
      add(
        `wiki search, ${ENTRIES} entries, --selection public-code`,
        runs.publicCode,
        "skillsmith bin: the start-up bundle answers from the index's public-code posting set (statistics over the searched entries), checks each answered card against its meta.json",
      );
      return rows;
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  },
};
export default benchmark;
