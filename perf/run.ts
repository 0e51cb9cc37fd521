/**
 * `npm run bench [-- [--json] [--strict] [filter...]]`: discover every `perf/*.bench.ts`, run
 * the benchmarks whose name (or file name) contains one of the filters (all when none is given),
 * and print a table, or one JSON document with `--json`. `--strict` exits 1 when a target was
 * missed; by default missing a target is reported, not fatal, since shared machines are noisy.
 * A benchmark that throws, or a row marked `failed` (it measured the wrong thing), exits 1 always.
 */
import { readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Benchmark, BenchmarkRow } from "./harness.js";

interface Result {
  readonly name: string;
  readonly file: string;
  readonly rows: readonly BenchmarkRow[];
  readonly error?: string;
}

function isBenchmark(value: unknown): value is Benchmark {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as { name?: unknown; run?: unknown };
  return typeof candidate.name === "string" && typeof candidate.run === "function";
}

function formatMs(value: number | undefined): string {
  if (value === undefined) return "";
  if (value >= 100) return `${value.toFixed(0)} ms`;
  if (value >= 1) return `${value.toFixed(2)} ms`;
  return `${(value * 1000).toFixed(1)} µs`;
}

function table(results: readonly Result[]): string {
  const header = ["benchmark", "case", "median", "baseline", "ratio", "target", "met", "note"];
  const lines: string[][] = [header];
  for (const result of results) {
    if (result.error !== undefined) {
      lines.push([result.name, "(failed)", "", "", "", "", "", result.error]);
      continue;
    }
    for (const entry of result.rows) {
      lines.push([
        result.name,
        entry.case,
        formatMs(entry.medianMs),
        formatMs(entry.baselineMs),
        entry.ratio === undefined ? "" : `${entry.ratio.toFixed(1)}×`,
        entry.target ?? "",
        entry.failed !== undefined
          ? "FAILED"
          : entry.met === undefined
            ? ""
            : entry.met
              ? "yes"
              : "NO",
        entry.failed === undefined ? (entry.note ?? "") : `${entry.failed}; ${entry.note ?? ""}`,
      ]);
    }
  }
  const widths = header.map((_, column) =>
    Math.max(...lines.map((line) => (line[column] as string).length)),
  );
  const render = (line: string[]) =>
    line
      .map((cell, column) => cell.padEnd(widths[column] as number))
      .join("  ")
      .trimEnd();
  return [
    render(lines[0] as string[]),
    widths.map((width) => "-".repeat(width)).join("  "),
    ...lines.slice(1).map(render),
  ].join("\n");
}

async function main(argv: readonly string[]): Promise<number> {
  const json = argv.includes("--json");
  const strict = argv.includes("--strict");
  const filters = argv.filter((argument) => !argument.startsWith("--"));
  const directory = import.meta.dirname;
  const files = (await readdir(directory)).filter((file) => file.endsWith(".bench.ts")).sort();

  const results: Result[] = [];
  for (const file of files) {
    let benchmark: unknown;
    try {
      const module = (await import(pathToFileURL(join(directory, file)).href)) as {
        default?: unknown;
      };
      benchmark = module.default;
    } catch (error) {
      // One broken file must not hide the results of the others.
      const message = error instanceof Error ? error.message : String(error);
      results.push({
        name: basename(file, ".bench.ts"),
        file,
        rows: [],
        error: `load failed: ${message}`,
      });
      continue;
    }
    if (!isBenchmark(benchmark)) {
      results.push({
        name: basename(file, ".bench.ts"),
        file,
        rows: [],
        error: "does not default-export a Benchmark { name, run() }",
      });
      continue;
    }
    const selected =
      filters.length === 0 ||
      filters.some((filter) => benchmark.name.includes(filter) || file.includes(filter));
    if (!selected) continue;
    if (!json) process.stderr.write(`running ${benchmark.name} (${file}) ...\n`);
    try {
      results.push({ name: benchmark.name, file, rows: await benchmark.run() });
    } catch (error) {
      results.push({
        name: benchmark.name,
        file,
        rows: [],
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  if (json) {
    process.stdout.write(
      `${JSON.stringify({ node: process.version, benchmarks: results }, null, 2)}\n`,
    );
  } else {
    process.stdout.write(`${table(results)}\n`);
  }
  const failed = results.some(
    (result) =>
      result.error !== undefined || result.rows.some((entry) => entry.failed !== undefined),
  );
  const missed = results.some((result) => result.rows.some((entry) => entry.met === false));
  if (failed) return 1;
  return strict && missed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
