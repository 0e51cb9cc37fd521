/** The shipped example wiki: consistent with its resources, searchable, exportable. */
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { packageRoot } from "../src/core/paths.js";
import { validateSkillFolder } from "../src/skill/index.js";
import { loadCapabilities } from "../src/wiki/capabilities.js";
import { exportEntry } from "../src/wiki/export.js";
import { skillId, skillMetaSchema } from "../src/wiki/meta.js";
import { searchSkills, WikiSearch } from "../src/wiki/search.js";
import { listEntries, readResourceManifest, readTaxonomy } from "../src/wiki/store.js";

const wiki = join(packageRoot(), "examples", "wiki");
const resources = join(packageRoot(), "examples", "resources");
const scratch = await mkdtemp(join(tmpdir(), "skillsmith-wiki-example-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe("examples/wiki", () => {
  it("records the resources it was built from with their current hashes and licences", async () => {
    const manifest = await readResourceManifest(wiki, "web-frontend");
    const byPath = new Map(manifest?.resources.map((record) => [record.path, record]));
    for (const file of ["flexbox-navigation.html", "focus-ring.mp4", "palette.png"]) {
      const digest = createHash("sha256")
        .update(await readFile(join(resources, file)))
        .digest("hex");
      expect(byPath.get(file)?.sha256).toBe(digest);
    }
    expect(
      [...byPath.values()].map((record) => [record.path, record.type, record.licence]),
    ).toEqual([
      ["a11y-colour-tools", "repository", "MIT"],
      ["flexbox-navigation.html", "article", "CC-BY-4.0"],
      ["focus-ring.mp4", "video", "CC-BY-4.0"],
      ["palette.png", "image", "CC0-1.0"],
    ]);
  });

  it("holds seven valid, verified entries in a taxonomy, each exporting to a valid skill", async () => {
    const entries = await listEntries(wiki, "web-frontend");
    expect(entries).toHaveLength(7);
    for (const entry of entries) {
      expect(
        skillMetaSchema.safeParse(JSON.parse(await readFile(join(entry.dir, "meta.json"), "utf8")))
          .success,
      ).toBe(true);
      expect(entry.meta.validation_status).toBe("verified");
      const provenance = entry.meta.provenance[0];
      expect(entry.meta.skill_id).toBe(
        skillId("web-frontend", provenance?.source_path ?? "", provenance?.node_index ?? -1),
      );
      const exported = await exportEntry(entry, scratch);
      expect((await validateSkillFolder(exported.dir)).valid).toBe(true);
    }
    const taxonomy = await readTaxonomy(wiki, "web-frontend");
    expect(taxonomy.categories.map((node) => node.name)).toEqual([
      "accessibility",
      "layout",
      "styling",
      "tooling",
    ]);
    expect(
      (await loadCapabilities(wiki)).get("web-frontend")?.capabilities.map((each) => each.name),
    ).toEqual(["instructions", "run-code"]);
  });

  it("finds the flexbox navigation skill for a wrapping-menu task", async () => {
    const search = await WikiSearch.open(wiki);
    const result = await searchSkills(search, "navigation menu that wraps flexbox");
    expect(result.shortlist[0]?.card.skill_name).toBe("Wrapping navigation bar with flexbox");
  });
});
