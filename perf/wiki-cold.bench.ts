/**
 * The first `wiki search` on a small wiki, from the CLI, beside a minimal Python driver of the
 * public Resource2Skill code (`perf/reference-bm25.py`) on the same 541 entries (the size of the
 * reference's released excel wiki), timed alternately in the same run (ratio = Python / CLI wall
 * time; ≥ 1 means the CLI is at least as fast). The verdict is CPU time (user + system of the
 * child, GNU time): a CLI row whose median CPU exceeds the driver's, run by the interpreter
 * directly, is FAILED and `npm run bench` exits 1 (wall time decides only without GNU time).
 *
 * The wiki: 541 generated entries of one domain (`test/support/wiki-cards.ts`, seeded; accents
 * folded to ASCII so both tokenisers see the same words), one `meta.json` per entry as skillsmith
 * stores them, and the same entries in one `index.json` as the reference's registry keeps them.
 *
 * Cases, each a fresh process per sample:
 * - cold: `wiki search <q> --wiki <w> --json` with no `.index/` (deleted before every sample):
 *   reads the 541 entries, writes `.index/search.idx`, answers;
 * - public-code: `--selection public-code --include-unverified`, the reference's settings
 *   (its fields, k1, boost, pool, statistics over the entries it scores), which always reads the
 *   entries; its answer is checked against the Python driver's (same ids, same order);
 * - after build: the default search in a fresh process once the index exists, as `wiki build`
 *   leaves it (the reference's registry is also written at build time): the header, the query's
 *   postings and the answered cards, each checked against its entry's meta.json; no zod loaded;
 * - the Python driver: `perf/reference-bm25.py <index.json> <q> 25` run by the interpreter itself
 *   (`sys.executable`, the baseline of every row), and as `python3` the PATH finds (in the note):
 *   on a machine where `python3` is a version-manager shim (pyenv), the shim costs more than the
 *   driver. The public-code answers must equal the driver's, else the benchmark fails.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SkillMeta } from "../src/wiki/meta.js";
import { jsonText } from "../src/wiki/store.js";
import { generatedQueries, writeGeneratedWiki } from "../test/support/wiki-cards.js";
import { type Benchmark, type BenchmarkRow, summarise } from "./harness.js";
import { builtCli, type ProcessRun, projectRoot, timeNode, timeProcess } from "./processes.js";

const ENTRIES = 541;
const SAMPLES = 7;
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
      const search = (query: string, extra: string[] = []) =>
        timeNode([cli, "wiki", "search", query, "--wiki", wiki, "--json", ...extra]);
      const python = (query: string) =>
        timeProcess("python3", [
          join(projectRoot, "perf", "reference-bm25.py"),
          registry,
          query,
          "25",
        ]);
      const interpreter = execFileSync("python3", ["-c", "import sys; print(sys.executable)"], {
        encoding: "utf8",
      }).trim();
      const direct = (query: string) =>
        timeProcess(interpreter, [
          join(projectRoot, "perf", "reference-bm25.py"),
          registry,
          query,
          "25",
        ]);
      const runs = {
        direct: [] as ProcessRun[],
        cold: [] as ProcessRun[],
        publicCode: [] as ProcessRun[],
        warm: [] as ProcessRun[],
        python: [] as ProcessRun[],
      };
      let agree = 0;
      for (const query of queries) {
        await rm(join(wiki, ".index"), { recursive: true, force: true });
        const reference = await python(query);
        runs.direct.push(await direct(query));
        const cold = await search(query);
        const publicCode = await search(query, [
          "--selection",
          "public-code",
          "--include-unverified",
        ]);
        const warm = await search(query);
        for (const run of [reference, cold, publicCode, warm])
          if (run.code !== 0) throw new Error(`exited ${run.code}: ${run.stderr.slice(0, 400)}`);
        runs.python.push(reference);
        runs.cold.push(cold);
        runs.publicCode.push(publicCode);
        runs.warm.push(warm);
        const ids = (
          JSON.parse(publicCode.stdout) as { shortlist: { card: { skill_id: string } }[] }
        ).shortlist.map((hit) => hit.card.skill_id);
        const expected = (JSON.parse(reference.stdout) as [string, number][]).map(([id]) => id);
        if (JSON.stringify(ids) === JSON.stringify(expected)) agree += 1;
      }
      // The baseline is the driver run by the interpreter itself: a version-manager shim in
      // front of python3 is not the reference's cost. CPU (user + system of the child) is the
      // verdict: on a loaded machine wall time grows with the load, CPU time much less.
      const baseline = summarise(runs.direct.map((run) => run.ms));
      const baselineCpu = medianCpu(runs.direct);
      const shim = `python3 as the PATH finds it ${summarise(runs.python.map((run) => run.ms)).medianMs.toFixed(0)} ms${cpuNote(runs.python)}`;
      const agreement = `public-code shortlist equals the Python driver's on ${agree} of ${queries.length} queries`;
      const rows: BenchmarkRow[] = [];
      const add = (name: string, measured: ProcessRun[], note: string) => {
        const measurement = summarise(measured.map((run) => run.ms));
        const cpu = medianCpu(measured);
        // Without GNU time there is no CPU figure: wall time decides.
        const slower =
          cpu !== undefined && baselineCpu !== undefined
            ? cpu > baselineCpu
            : measurement.medianMs > baseline.medianMs;
        const cpuRatio =
          cpu !== undefined && baselineCpu !== undefined
            ? `CPU ${cpu.toFixed(0)} ms vs ${baselineCpu.toFixed(0)} ms (${(baselineCpu / cpu).toFixed(2)}×)`
            : "CPU not measured (no /usr/bin/time)";
        rows.push({
          case: name,
          medianMs: measurement.medianMs,
          baselineMs: baseline.medianMs,
          ratio: baseline.medianMs / measurement.medianMs,
          target: "CPU ≤ the Python driver run directly",
          met: !slower,
          note: `${note}; ${cpuRatio}; Python driver run by ${interpreter} directly ${baseline.medianMs.toFixed(0)} ms wall; ${shim}; ${agreement}`,
          ...(slower ? { failed: "slower than the Python driver run directly" } : {}),
        });
      };
      if (agree !== queries.length)
        throw new Error(`public-code answered unlike the Python driver: ${agreement}`);
      add(
        `wiki search CLI, ${ENTRIES} entries, cold (no index)`,
        runs.cold,
        "reads every meta.json, writes .index/search.idx",
      );
      add(
        `wiki search CLI, ${ENTRIES} entries, --selection public-code`,
        runs.publicCode,
        "reads every meta.json, no index",
      );
      add(
        `wiki search CLI, ${ENTRIES} entries, first query after build (index present)`,
        runs.warm,
        "opens the index file, checks each answered card against its meta.json",
      );
      return rows;
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  },
};
export default benchmark;
