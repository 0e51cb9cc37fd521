/**
 * CLI start-up as users meet it: the built CLI (`dist/cli/main.js`) run as a fresh process,
 * beside bare `node -e 0` sampled alternately in the same run (9 samples each, median). The
 * ratio column is bare / command (< 1: slower than bare Node); the target is a multiple of bare
 * Node, so it holds on a slower or faster machine alike.
 *
 * Rows: `--version`; `skill validate` of one example skill; `stats test` with m = 1000 seeded
 * deltas (the exact sign-flip test takes ~1 ms of it, so it should cost what start-up costs).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Benchmark, BenchmarkRow } from "./harness.js";
import { againstBareNode, builtCli, type StartupMeasurement, timesBare } from "./processes.js";

function startupRow(
  name: string,
  measured: StartupMeasurement,
  times: number,
  note: string,
): BenchmarkRow {
  return {
    case: name,
    medianMs: measured.medianMs,
    baselineMs: measured.bareMs,
    ratio: measured.bareMs / measured.medianMs,
    target: `≤ ${times}× bare node`,
    met: measured.medianMs <= times * measured.bareMs,
    note: `${timesBare(measured.medianMs, measured.bareMs, measured)}; ${note}`,
  };
}

/** m seeded whole-point deltas in [-100, 100] (mulberry32), one per line. */
function deltas(m: number): string {
  let state = 1000;
  const lines: string[] = [];
  for (let index = 0; index < m; index += 1) {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    const unit = ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
    lines.push(String(Math.round(unit * 200 - 100)));
  }
  return `${lines.join("\n")}\n`;
}

const benchmark: Benchmark = {
  name: "cli",
  async run() {
    const cli = builtCli();
    const folder = await mkdtemp(join(tmpdir(), "skillsmith-cli-bench-"));
    try {
      const deltasFile = join(folder, "deltas.txt");
      await writeFile(deltasFile, deltas(1000));
      const version = await againstBareNode([cli, "--version"]);
      const validate = await againstBareNode([
        cli,
        "skill",
        "validate",
        "examples/skills/python-test-fixtures",
      ]);
      const stats = await againstBareNode([cli, "stats", "test", "--deltas-file", deltasFile], {
        // Exit 0 or 1 would both be a verdict; these deltas are seeded, so the code is fixed.
        expectedCode: 0,
      });
      return [
        startupRow(
          "skillsmith --version",
          version,
          2.5,
          `printed ${JSON.stringify(version.last.stdout.trim())}`,
        ),
        startupRow(
          "skillsmith skill validate <one skill>",
          validate,
          4,
          "examples/skills/python-test-fixtures",
        ),
        startupRow(
          "skillsmith stats test, m = 1000",
          stats,
          4,
          `${(stats.medianMs - version.medianMs).toFixed(0)} ms more than --version; ${stats.last.stdout.split("\n").find((line) => line.includes("p =")) ?? stats.last.stdout.split("\n")[0]}`,
        ),
      ];
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  },
};

export default benchmark;
