import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isSkillsmithError } from "../core/errors.js";
import { parseSkillMarkdown } from "./parse.js";
import { renderSkillMarkdown, writeSkillFolder } from "./write.js";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-write-"));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("renderSkillMarkdown", () => {
  it("writes fields in the specification's order and keeps strings that look like numbers", () => {
    const text = renderSkillMarkdown(
      { metadata: { version: "1.0" }, description: "d: with colon", name: "n" },
      "Body\n",
    );
    expect(text).toBe(
      '---\nname: n\ndescription: "d: with colon"\nmetadata:\n  version: "1.0"\n---\n\nBody\n',
    );
    expect(parseSkillMarkdown(text, "SKILL.md").frontmatter).toEqual({
      name: "n",
      description: "d: with colon",
      metadata: { version: "1.0" },
    });
  });
});

describe("writeSkillFolder", () => {
  it("writes a valid skill with its extra files", async () => {
    const dir = join(root, "skills", "new-skill");
    const result = await writeSkillFolder(dir, {
      frontmatter: { name: "new-skill", description: "Does things." },
      body: "# Steps\n\nSee [notes](references/notes.md).\n",
      files: { "references/notes.md": "notes\n", "assets/data.bin": new Uint8Array([0, 1]) },
    });
    expect(result).toEqual({ path: dir, valid: true, errors: [], warnings: [] });
    expect(await readFile(join(dir, "references", "notes.md"), "utf8")).toBe("notes\n");
    expect(await readdir(join(root, "skills"))).toEqual(["new-skill"]);
  });

  it("refuses an invalid skill and leaves nothing behind", async () => {
    const dir = join(root, "bad-skill");
    const error = await writeSkillFolder(dir, {
      frontmatter: { name: "Bad Skill", description: "x" },
      body: "text",
    }).catch((caught: unknown) => caught);
    expect(isSkillsmithError(error) && error.code === "skill.skill-invalid").toBe(true);
    expect((error as Error).message).toContain("name-invalid-chars");
    expect(await readdir(root)).toEqual([]);
  });

  it.each(["../escape.md", "/abs.md", "a/../../b.md", "SKILL.md", ""])(
    "refuses the extra file path %j",
    async (path) => {
      const error = await writeSkillFolder(join(root, "s"), {
        frontmatter: { name: "s", description: "d" },
        body: "b",
        files: { [path]: "x" },
      }).catch((caught: unknown) => caught);
      expect(isSkillsmithError(error) && error.code === "skill.skill-file-path-invalid").toBe(true);
      expect(await readdir(root)).toEqual([]);
    },
  );

  it("replaces an existing folder as a whole", async () => {
    const dir = join(root, "s");
    await mkdir(dir);
    await writeFile(join(dir, "stale.txt"), "old");
    await writeSkillFolder(dir, { frontmatter: { name: "s", description: "d" }, body: "new" });
    expect((await readdir(dir)).sort()).toEqual(["SKILL.md"]);
    expect(await readdir(root)).toEqual(["s"]);
  });
});
