import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatedQueries, writeGeneratedWiki } from "../../test/support/wiki-cards.js";
import type { SkillMeta } from "../wiki/meta.js";
import { type SearchResult, searchSkills, WikiSearch } from "../wiki/search.js";
import { searchIndexPath, writeSearchIndex } from "../wiki/search-index.js";
import { selectionOptions } from "./commands/wiki-search-run.js";
import { runCli } from "./program.js";
import { answerFromIndex } from "./wiki-query.js";

const options = { domains: ["excel", "web"], vocabularySize: 300, seed: 23 };
const secret = "sk-wikiquery-0123456789abcdef0123";
const env = { SKILLSMITH_TEST_API_KEY: secret };
let root: string;
let wiki: string;
let metas: SkillMeta[];
let query: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-query-"));
  // The folder's name holds a secret: the path is printed, so redaction shows in the output.
  wiki = join(root, `wiki-${secret}`);
  metas = await writeGeneratedWiki(wiki, 60, options);
  query = generatedQueries(3, options)[0] as string;
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The start-up entry's answer to `argv` (undefined: it handed over), with what it printed. */
function quick(argv: string[], cwd = root) {
  let stdout = "";
  const code = answerFromIndex(argv, {
    cwd,
    env,
    stdout: (text) => {
      stdout += text;
    },
  });
  return { code, stdout };
}

async function full(argv: string[], cwd = root) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, {
    stdout: (text: string) => {
      stdout += text;
    },
    stderr: (text: string) => {
      stderr += text;
    },
    cwd,
    env,
  });
  return { code, stdout, stderr };
}

describe("the start-up entry of wiki search", () => {
  it.each([
    [["--json"]],
    [[]],
    [["--domain", "web", "--json", "--selection", "paper"]],
    [["--include-unverified", "--visual-boost", "1.25", "--shortlist-size", "max(5n,25)"]],
    [["--json", "--shortlist-size", "3"]],
    // The public code's settings: its three fields, k1, boost, pool, statistics over the
    // entries it scores (the index's second posting set).
    [["--selection", "public-code", "--include-unverified", "--json"]],
    [["--selection", "public-code"]],
    [["--selection", "public-code", "--domain", "web", "--json"]],
    [["--fields", "name,applicability,tags", "--json"]],
  ])("answers %j from a fresh index exactly as the full CLI", async (extra) => {
    await writeSearchIndex(wiki);
    const argv = ["wiki", "search", query, "--wiki", wiki, ...extra];
    const answered = quick(argv);
    const expected = await full(argv);
    expect(expected.code).toBe(0);
    expect(answered.code).toBe(0);
    expect(expected.stdout.length).toBeGreaterThan(100);
    expect(answered.stdout).toBe(expected.stdout);
    // The printed wiki path holds the secret: redacted like the full CLI's output.
    expect(answered.stdout).not.toContain(secret);
  });

  it.each([
    ["fields the index holds no posting set for", ["--fields", "name,tags"]],
    ["a flag the scan does not take", ["--strategy", "random"]],
    ["a bad value (the full CLI reports it)", ["--shortlist-size", "zero"]],
  ])("hands %s to the full CLI without printing", async (_name, extra) => {
    await writeSearchIndex(wiki);
    expect(quick(["wiki", "search", query, "--wiki", wiki, ...extra])).toEqual({
      code: undefined,
      stdout: "",
    });
  });

  it("hands over without an index, and for the example wiki (no --wiki, no ./skills_wiki)", async () => {
    await rm(searchIndexPath(wiki), { force: true });
    expect(quick(["wiki", "search", query, "--wiki", wiki, "--json"])).toEqual({
      code: undefined,
      stdout: "",
    });
    const empty = join(root, "empty");
    await mkdir(empty, { recursive: true });
    expect(quick(["wiki", "search", query], empty).code).toBeUndefined();
  });

  it.each([[[] as string[]], [["--domain", "excel"]]])(
    "answers --selection public-code %j as the entries read into memory score it",
    async (extra) => {
      await writeSearchIndex(wiki);
      for (const includeUnverified of [false, true]) {
        const argv = [
          "wiki",
          "search",
          query,
          "--wiki",
          wiki,
          "--json",
          "--selection",
          "public-code",
        ];
        if (includeUnverified) argv.push("--include-unverified");
        const answered = quick([...argv, ...extra]);
        expect(answered.code).toBe(0);
        const domain = extra[1];
        // The oracle: the in-memory search over the entries (no index file) with the preset's
        // settings, scoped to the eligible entries as the reference counts them.
        const memory = await WikiSearch.open(wiki, domain);
        const truth = await searchSkills(memory, query, {
          includeUnverified,
          ...selectionOptions({ selection: "public-code" }),
        });
        const printed = JSON.parse(answered.stdout) as SearchResult;
        expect(truth.shortlist.length).toBeGreaterThan(0);
        expect(printed.shortlist).toEqual(truth.shortlist);
        expect(printed.shortlist_config).toEqual(truth.shortlist_config);
        expect(printed.shortlist_config?.idf_over).toBe("searched");
      }
    },
  );

  it("never answers from an edited index or over an entry edited in place", async () => {
    for (const selection of [[], ["--selection", "public-code"]])
      await attackedIndexHandsOver(selection);
  });
});

/** Each attack on the index or an entry, then the command line with `selection`: handed over. */
async function attackedIndexHandsOver(selection: string[]) {
  {
    const victim = metas[5] as SkillMeta;
    const path = searchIndexPath(wiki);
    const attacks: { name: string; attack: () => Promise<void> }[] = [
      {
        // The card's text changed in the index (same length, so the layout still holds).
        name: "forged text",
        attack: async () => {
          const bytes = await readFile(path);
          // The whole value, so the victim's card is the one edited (many start "Use when").
          const from = Buffer.from(
            JSON.stringify({ applicability: victim.applicability }).slice(1, -1),
          );
          const at = bytes.indexOf(from);
          expect(at).toBeGreaterThan(0);
          Buffer.from(`"applicability":"INJECTED`).copy(bytes, at);
          await writeFile(path, bytes);
        },
      },
      {
        // meta.json rewritten in place, not through a build: the folders' stamp stays the same.
        name: "edited in place",
        attack: () =>
          writeFile(
            join(wiki, victim.domain, victim.skill_id, "meta.json"),
            // A new name per selection: the same bytes again would be what the index holds.
            `${JSON.stringify({ ...victim, skill_name: `${victim.skill_name} renamed ${selection.length}` }, null, 2)}\n`,
          ),
      },
    ];
    for (const { name, attack } of attacks) {
      await writeSearchIndex(wiki);
      await attack();
      const argv = [
        "wiki",
        "search",
        victim.skill_name,
        "--wiki",
        wiki,
        "--include-unverified",
        ...selection,
      ];
      expect(quick(argv), name).toEqual({ code: undefined, stdout: "" });
      // The full CLI then rebuilds the index from the entries and answers the truth.
      const answered = await full(argv);
      expect(answered.stdout, name).not.toContain("INJECTED");
      expect(answered.stdout, name).toContain(victim.skill_id);
      // After that rebuild the start-up entry answers again, alike.
      expect(quick(argv), name).toEqual({ code: 0, stdout: answered.stdout });
    }
  }
}
