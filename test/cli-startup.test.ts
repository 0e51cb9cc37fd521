/**
 * Start-up cost is paid by every command: these tests pin which npm packages a command loads,
 * so a heavy import reaching a light command fails here (timing belongs to `npm run bench`).
 * The allowed sets come from what each command needs, not from observing it: argument parsing
 * (commander; a plain `wiki search` is scanned without it, `src/cli/fast-path.ts`), SKILL.md front
 * matter (yaml).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cp, rm } from "node:fs/promises";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { loadedFiles, loadedPackages } from "./support/loaded-modules.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const root = resolve(import.meta.dirname, "..");
const binary = resolve(root, "dist", "cli", "main.js");
/** The installed command: the start-up bundle of `npm run build` (src/cli/wiki-query.ts). */
const bin = resolve(root, "dist", "cli", "skillsmith.cjs");
const cleanups = cleanupsAfterEach();

/** Packages only some commands need: each must stay out of every other command's start-up. */
const heavy = [
  "bullmq",
  "ioredis",
  "dockerode",
  "ai",
  "@ai-sdk/anthropic",
  "@ai-sdk/openai",
  "@ai-sdk/openai-compatible",
  "linkedom",
  "@mozilla/readability",
  "web-tree-sitter",
  "@modelcontextprotocol/sdk",
  "vega",
  "vega-lite",
];

const cli = (argv: readonly string[]) => loadedPackages(cleanups, [binary, ...argv], { cwd: root });

describe("the module tracer", () => {
  it("sees ES modules and CommonJS packages alike", async () => {
    const traced = await loadedPackages(
      cleanups,
      ["--input-type=module", "-e", 'await import("linkedom"); await import("dockerode");'],
      { cwd: root },
    );
    expect(traced.code).toBe(0);
    expect(traced.packages).toEqual(expect.arrayContaining(["linkedom", "dockerode"]));
  });
});

describe.skipIf(!existsSync(binary))("CLI start-up (dist/, built by `npm test`'s pretest)", () => {
  it("--version loads commander and nothing else", async () => {
    const traced = await cli(["--version"]);
    expect(traced).toEqual({ code: 0, packages: ["commander"] });
  });

  it("skill validate loads commander and the YAML parser only", async () => {
    const traced = await cli(["skill", "validate", "examples/skills/python-test-fixtures"]);
    expect(traced).toEqual({ code: 0, packages: ["commander", "yaml"] });
  });

  it("stats test loads commander only", async () => {
    const traced = await cli(["stats", "test", "--deltas", "10,-5,20,15,5,0,25"]);
    expect(traced).toEqual({ code: 0, packages: ["commander"] });
  });

  it("a plain wiki search loads no package, with a fresh index (as a build leaves it) or none", async () => {
    const wiki = await temporaryDirectoryIn(cleanups, "skillsmith-startup-wiki-");
    await cp(resolve(root, "examples", "wiki"), wiki, { recursive: true });
    const search = [
      binary,
      "wiki",
      "search",
      "navigation menu that wraps",
      "--wiki",
      wiki,
      "--json",
    ];
    // The first search finds no index: it checks the entries (without zod: they pass
    // meta-check.ts) and writes one. Arguments are scanned without commander.
    const first = await loadedFiles(cleanups, search, { cwd: root });
    expect({ code: first.code, packages: first.packages }).toEqual({ code: 0, packages: [] });
    expect(first.own).toContain("dist/wiki/meta-check.js");
    const second = await loadedFiles(cleanups, search, { cwd: root });
    expect({ code: second.code, packages: second.packages }).toEqual({ code: 0, packages: [] });
    expect(second.own).toContain("dist/wiki/search-index.js");
  });

  it.skipIf(!existsSync(bin))(
    "the skillsmith bin answers a plain wiki search on a fresh index from its one file",
    async () => {
      const manifest = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as {
        bin: Record<string, string>;
      };
      // The bin is the shell launcher (test/cli-launcher.test.ts) that starts this bundle.
      expect(manifest.bin.skillsmith).toBe("dist/cli/skillsmith");
      const wiki = await temporaryDirectoryIn(cleanups, "skillsmith-startup-bin-");
      await cp(resolve(root, "examples", "wiki"), wiki, { recursive: true });
      const argv = ["wiki", "search", "navigation menu that wraps", "--wiki", wiki, "--json"];
      // The full CLI's answer, which also writes the index (as `wiki build` leaves one).
      const expected = execFileSync(process.execPath, [binary, ...argv], { encoding: "utf8" });
      expect(expected).toContain('"shortlist"');
      const answered = await loadedFiles(cleanups, [bin, ...argv], { cwd: root });
      expect(answered).toEqual({ code: 0, packages: [], own: ["dist/cli/skillsmith.cjs"] });
      expect(execFileSync(process.execPath, [bin, ...argv], { encoding: "utf8" })).toBe(expected);
      // Without an index the bin hands the search to the full CLI, which rebuilds it.
      await rm(resolve(wiki, ".index"), { recursive: true, force: true });
      const handedOver = await loadedFiles(cleanups, [bin, ...argv], { cwd: root });
      expect(handedOver.code).toBe(0);
      expect(handedOver.own).toContain("dist/cli/main.js");
      expect(existsSync(resolve(wiki, ".index", "search.idx"))).toBe(true);
    },
  );

  it("wiki search loads no package and none of the online acquisition pipeline", async () => {
    const traced = await loadedFiles(
      cleanups,
      [binary, "wiki", "search", "navigation menu that wraps", "--json"],
      { cwd: root },
    );
    // Whether this wiki's index is already fresh depends on the tests run before (the test above
    // measures both cases on a wiki of its own): either way, the example's entries pass the check
    // without zod, and the plain command line is scanned without commander.
    expect(traced.code).toBe(0);
    expect(traced.packages).toEqual([]);
    // The modules `--online` needs (by what they do: the builder, the fetchers, the sandboxes
    // the gates run code in, the browser that renders pages), not a list observed from a run.
    const online = [
      "dist/wiki/online.js",
      "dist/wiki/build.js",
      "dist/wiki/resources/search.js",
      "dist/wiki/resources/collect.js",
      "dist/wiki/gates.js",
      "dist/wiki/render.js",
      "dist/env/browser.js",
      "dist/env/sandbox/index.js",
    ];
    // The trace saw our modules at all (else the exclusion below would prove nothing).
    expect(traced.own).toContain("dist/wiki/search-index.js");
    expect(traced.own.filter((file) => online.includes(file))).toEqual([]);
  });

  it("wiki search with a flag the plain scan does not take goes through commander", async () => {
    const traced = await cli(["wiki", "search", "navigation menu", "--strategy", "none", "--json"]);
    expect(traced).toEqual({ code: 0, packages: ["commander"] });
  });

  it("commands that need no model, queue, container, article or MCP server load none of them", async () => {
    for (const argv of [
      ["bench", "validate-suite", "examples/quickstart/suite"],
      ["wiki", "search", "navigation menu that wraps"],
      ["worker", "--help"],
    ]) {
      const traced = await cli(argv);
      expect({ argv, code: traced.code }).toEqual({ argv, code: 0 });
      expect({ argv, heavy: traced.packages.filter((name) => heavy.includes(name)) }).toEqual({
        argv,
        heavy: [],
      });
    }
  });
});
