import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../test/support/temporary.js";
import { writeGeneratedWiki } from "../../test/support/wiki-cards.js";
import { cardOf } from "./cards.js";
import { skillMetaSchema } from "./meta.js";
import { checkCardSource, checkSkillCard, checkSkillMeta } from "./meta-check.js";
import { openCardSearch, searchSkills, WikiSearch } from "./search.js";
import { IndexedWikiSearch, searchIndexPath, writeSearchIndex } from "./search-index.js";

const cleanups = cleanupsAfterEach();
const options = { domains: ["web-frontend", "devops"], vocabularySize: 60, seed: 11 };

describe("the search index's cards, read through checks", () => {
  it("answers an entry the schema accepts and the quick meta check does not, without rebuilding", async () => {
    const root = await temporaryDirectoryIn(cleanups, "skillsmith-index-cards-");
    const metas = await writeGeneratedWiki(root, 12, options);
    const victim = metas[4]!;
    // Ten fraction digits: valid for the schema, beyond the nine the quick check judges.
    const unusual = { ...victim, created: "2026-11-29T00:00:00.1234567890Z" };
    expect(skillMetaSchema.safeParse(unusual).success).toBe(true);
    expect(checkSkillMeta(unusual)).toBeUndefined();
    await writeFile(
      join(root, victim.domain, victim.skill_id, "meta.json"),
      `${JSON.stringify(unusual, null, 2)}\n`,
    );
    await writeSearchIndex(root);
    const before = await stat(searchIndexPath(root));
    const query = victim.skill_name;
    for (let round = 0; round < 2; round += 1) {
      const search = await openCardSearch(root);
      expect(search).toBeInstanceOf(IndexedWikiSearch);
      const result = await searchSkills(search, query, { includeUnverified: true, k: 12 });
      const truth = await searchSkills(await WikiSearch.open(root), query, {
        includeUnverified: true,
        k: 12,
      });
      expect(JSON.stringify(result)).toBe(JSON.stringify(truth));
      expect(result.shortlist.map((hit) => hit.card.skill_id)).toContain(victim.skill_id);
      (search as IndexedWikiSearch).close();
    }
    // The same index file answered both times: no mismatch, so no rebuild.
    const after = await stat(searchIndexPath(root));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it("takes every generated entry's card fields and the card made of them", async () => {
    const root = await temporaryDirectoryIn(cleanups, "skillsmith-index-cards-");
    const metas = await writeGeneratedWiki(root, 6, options);
    for (const meta of metas) {
      const stored: unknown = JSON.parse(
        await readFile(join(root, meta.domain, meta.skill_id, "meta.json"), "utf8"),
      );
      const source = checkCardSource(stored);
      expect(source).toBeDefined();
      const card = cardOf(source!);
      expect(card).toEqual(cardOf(meta));
      expect(checkSkillCard(JSON.parse(JSON.stringify(card)))).toEqual(card);
    }
  });

  it("refuses card fields and cards of the wrong shape", async () => {
    const root = await temporaryDirectoryIn(cleanups, "skillsmith-index-cards-");
    const [meta] = await writeGeneratedWiki(root, 1, options);
    const card = cardOf(meta!);
    const wrongMetas: unknown[] = [
      null,
      [],
      { ...meta, tags: "one tag" },
      { ...meta, files: { ...meta!.files, code: [1] } },
      { ...meta, exec_ok: "yes" },
      { ...meta, validation_status: "trusted" },
      { ...meta, modalities_present: ["smell"] },
    ];
    for (const wrong of wrongMetas) expect(checkCardSource(wrong)).toBeUndefined();
    const wrongCards: unknown[] = [
      "card",
      { ...card, skill_id: 7 },
      { ...card, category_path: [null] },
      { ...card, exec_ok: "maybe" },
      { ...card, injected: "instructions" },
    ];
    for (const wrong of wrongCards) expect(checkSkillCard(wrong)).toBeUndefined();
  });
});
