import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inspectSkillFolder } from "./inspect.js";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-inspect-"));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("inspectSkillFolder", () => {
  it("reports properties, files, body size and modalities", async () => {
    const dir = join(root, "tool");
    await mkdir(join(dir, "scripts"), { recursive: true });
    await mkdir(join(dir, "assets"));
    await mkdir(join(dir, "references"));
    // Body: "abcdefghi\n" is 10 characters: 3 tokens at 4 characters each, rounded up.
    const skillText =
      "---\nname: tool\ndescription: d\nallowed-tools: Read  Bash(git:*)\n---\nabcdefghi\n";
    await writeFile(join(dir, "SKILL.md"), skillText);
    await writeFile(join(dir, "scripts", "a.py"), "print(1)\n");
    await writeFile(join(dir, "assets", "t.txt"), "12345");
    const inspection = await inspectSkillFolder(dir);
    expect(inspection.valid).toBe(true);
    expect(inspection.properties).toEqual({
      name: "tool",
      description: "d",
      "allowed-tools": "Read  Bash(git:*)",
    });
    expect(inspection.allowedTools).toEqual(["Read", "Bash(git:*)"]);
    expect(inspection.body).toEqual({ lines: 1, characters: 10, tokenEstimate: 3 });
    // references/ is empty, so it is not a modality.
    expect(inspection.modalities).toEqual(["text", "scripts", "assets"]);
    expect(inspection.files.map((entry) => [entry.path, entry.kind, entry.size])).toEqual([
      ["SKILL.md", "file", Buffer.byteLength(skillText)],
      ["assets", "directory", 0],
      ["assets/t.txt", "file", 5],
      ["references", "directory", 0],
      ["scripts", "directory", 0],
      ["scripts/a.py", "file", 9],
    ]);
  });

  it("still shows what it can of an invalid skill", async () => {
    const dir = join(root, "mismatch");
    await mkdir(dir);
    await writeFile(join(dir, "SKILL.md"), "---\nname: other\ndescription: d\n---\n");
    const inspection = await inspectSkillFolder(dir);
    expect(inspection.valid).toBe(false);
    expect(inspection.properties).toEqual({ name: "other", description: "d" });
    expect(inspection.modalities).toEqual([]);
  });
});
