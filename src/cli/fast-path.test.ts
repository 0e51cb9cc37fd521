import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatedQueries, writeGeneratedWiki } from "../../test/support/wiki-cards.js";
import { plainWikiSearch, runPlainWikiSearch } from "./fast-path.js";
import { runCli } from "./program.js";

const options = { domains: ["excel", "web"], vocabularySize: 300, seed: 11 };
const secret = "sk-fastpath-0123456789abcdef0123";
let root: string;
let wiki: string;
let query: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-fast-path-"));
  // The folder's name holds a secret: the path is printed, so redaction shows in the output.
  wiki = join(root, `wiki-${secret}`);
  await writeGeneratedWiki(wiki, 60, options);
  query = generatedQueries(3, options)[0] as string;
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Run a command line through `run` with captured streams. */
async function captured(
  run: (argv: string[], io: object) => Promise<number | undefined>,
  argv: string[],
) {
  let stdout = "";
  let stderr = "";
  const code = await run(argv, {
    stdout: (text: string) => {
      stdout += text;
    },
    stderr: (text: string) => {
      stderr += text;
    },
    cwd: root,
    env: { SKILLSMITH_TEST_API_KEY: secret },
  });
  return { code, stdout, stderr };
}

describe("the plain wiki search path", () => {
  it.each([
    [["--json"]],
    [["--json", "--selection", "public-code", "--include-unverified"]],
    [["--fields", "name,tags", "--visual-boost", "1.25", "--shortlist-size", "7"]],
    [["--domain", "web", "--json", "--selection", "paper"]],
    [["--include-unverified"]],
  ])("prints what the full CLI prints for %j", async (extra) => {
    const argv = ["wiki", "search", query, "--wiki", wiki, ...extra];
    const full = await captured(runCli, argv);
    const plain = await captured(runPlainWikiSearch, argv);
    expect(full.code).toBe(0);
    expect(full.stdout.length).toBeGreaterThan(100);
    expect(plain).toEqual(full);
    expect(plain.stdout).not.toContain(secret);
    expect(plain.stdout).toContain("[REDACTED");
  });

  it("leaves every failure to the full CLI, which reports it as always", async () => {
    for (const argv of [
      ["wiki", "search", query, "--wiki", wiki, "--fields", "colour"],
      ["wiki", "search", query, "--wiki", join(root, "not-a-wiki"), "--json"],
      ["wiki", "search", query, "--wiki", wiki, "--shortlist-size", "0"],
    ]) {
      const plain = await captured(runPlainWikiSearch, argv);
      expect(plain).toEqual({ code: undefined, stdout: "", stderr: "" });
      const full = await captured(runCli, argv);
      expect(full.code).toBe(2);
      expect(full.stderr).toMatch(/^error: /);
    }
  });

  it("takes only command lines it understands whole", () => {
    const refused = [
      ["wiki", "search"],
      ["wiki", "search", "--help"],
      ["wiki", "search", "q", "-h"],
      ["wiki", "search", "q", "extra"],
      ["wiki", "search", "q", "--wiki=folder"],
      ["wiki", "search", "q", "--json", "--json"],
      ["wiki", "search", "q", "--wiki", "-x"],
      ["wiki", "search", "q", "--wiki"],
      ["wiki", "search", "q", "--selection", "other"],
      ["wiki", "search", "q", "--online"],
      ["wiki", "search", "q", "--strategy", "random"],
      ["wiki", "search", "q", "--"],
      ["wiki", "build", "q"],
      ["search", "wiki", "q"],
    ];
    for (const argv of refused) expect(plainWikiSearch(argv), argv.join(" ")).toBeUndefined();
    expect(
      plainWikiSearch(["wiki", "search", "--json", "css grid", "--domain", "web"]),
    ).toMatchObject({ query: "css grid", flags: { json: true, domain: "web", seed: "0" } });
  });
});
