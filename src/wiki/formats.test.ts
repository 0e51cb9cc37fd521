import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../test/support/temporary.js";
import { writeGeneratedWiki } from "../../test/support/wiki-cards.js";
import { packageRoot } from "../core/paths.js";
import { loadCapabilities } from "./capabilities.js";
import {
  WIKI_CAPABILITIES_FORMAT,
  WIKI_ENTRY_FORMAT,
  WIKI_MANIFEST_FORMAT,
  WIKI_ONLINE_POOL_FORMAT,
  WIKI_RESOURCES_FORMAT,
  WIKI_TAXONOMY_FORMAT,
} from "./formats.js";
import { skillMetaSchema, wikiManifestSchema } from "./meta.js";
import { checkSkillMeta, checkWikiManifest } from "./meta-check.js";
import { poolRecordSchema } from "./online.js";
import {
  listEntries,
  readJsonFile,
  readResourceManifest,
  readTaxonomy,
  readWikiManifest,
  writeTaxonomy,
} from "./store.js";

const cleanups = cleanupsAfterEach();
/** Built before the format tags: every file says `format: 1` (and is never rewritten by tests). */
const olderWiki = join(packageRoot(), "examples", "wiki");

describe("the wiki's format tags", () => {
  it("reads the example wiki's files, written as format 1, as the current tags", async () => {
    for (const file of ["wiki.json", "web-frontend/taxonomy.json", "web-frontend/resources.json"])
      expect(JSON.parse(await readFile(join(olderWiki, file), "utf8")).format).toBe(1);
    expect((await readWikiManifest(olderWiki)).format).toBe(WIKI_MANIFEST_FORMAT);
    expect((await readTaxonomy(olderWiki, "web-frontend")).format).toBe(WIKI_TAXONOMY_FORMAT);
    expect((await readResourceManifest(olderWiki, "web-frontend"))?.format).toBe(
      WIKI_RESOURCES_FORMAT,
    );
    expect((await loadCapabilities(olderWiki)).get("web-frontend")?.format).toBe(
      WIKI_CAPABILITIES_FORMAT,
    );
    const entries = await listEntries(olderWiki, "web-frontend");
    expect(entries).toHaveLength(7);
    for (const entry of entries) {
      const stored: unknown = JSON.parse(await readFile(join(entry.dir, "meta.json"), "utf8"));
      expect(stored).toMatchObject({ format: 1 });
      expect(entry.meta.format).toBe(WIKI_ENTRY_FORMAT);
      // The zod-free check and the schema read it alike.
      expect(checkSkillMeta(stored)).toEqual(skillMetaSchema.parse(stored));
    }
    const manifest: unknown = JSON.parse(await readFile(join(olderWiki, "wiki.json"), "utf8"));
    expect(checkWikiManifest(manifest)).toEqual(wikiManifestSchema.parse(manifest));
  });

  it("reads an online pool record written as format 1", async () => {
    const folder = await temporaryDirectoryIn(cleanups, "skillsmith-wiki-formats-");
    const path = join(folder, "pool.json");
    await writeFile(path, JSON.stringify({ format: 1, budget: 5, acquisitions: [] }));
    expect(await readJsonFile(path, poolRecordSchema)).toEqual({
      format: WIKI_ONLINE_POOL_FORMAT,
      budget: 5,
      acquisitions: [],
    });
  });

  it("writes the tags, and refuses a later tag or another kind's naming the format field", async () => {
    const root = await temporaryDirectoryIn(cleanups, "skillsmith-wiki-formats-");
    const [meta] = await writeGeneratedWiki(root, 1, { domains: ["web"], vocabularySize: 40 });
    await writeTaxonomy(root, "web");
    const taxonomyPath = join(root, "web", "taxonomy.json");
    expect(JSON.parse(await readFile(taxonomyPath, "utf8")).format).toBe(WIKI_TAXONOMY_FORMAT);
    expect(JSON.parse(await readFile(join(root, "wiki.json"), "utf8")).format).toBe(
      WIKI_MANIFEST_FORMAT,
    );
    const metaPath = join(root, "web", meta!.skill_id, "meta.json");
    expect(JSON.parse(await readFile(metaPath, "utf8")).format).toBe(WIKI_ENTRY_FORMAT);
    const cases = [
      ["skillsmith-wiki-taxonomy/2", /from a later skillsmith/],
      [WIKI_MANIFEST_FORMAT, /not this kind of skillsmith file/],
    ] as const;
    for (const [format, message] of cases) {
      await writeFile(taxonomyPath, JSON.stringify({ format, domain: "web", categories: [] }));
      await expect(readTaxonomy(root, "web")).rejects.toMatchObject({
        code: "wiki.file-invalid",
        location: { file: taxonomyPath, field: "format" },
        message: expect.stringMatching(message),
      });
    }
  });
});
