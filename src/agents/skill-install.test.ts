import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { installSkillsFor } from "./skill-install.js";

let root: string;
let workspace: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-skill-install-"));
  workspace = join(root, "workspace");
  await mkdir(workspace);
  await writeFile(join(workspace, "app.py"), "print('hi')\n");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A valid skill folder `<parent>/<name>` (the spec wants the folder named as the skill). */
async function skillFolder(parent: string, name: string, body = "Do it well.\n"): Promise<string> {
  const path = join(root, "skills", parent, name);
  await mkdir(path, { recursive: true });
  await writeFile(
    join(path, "SKILL.md"),
    `---\nname: ${name}\ndescription: The ${name} skill, for tests of multi-folder installs.\n---\n${body}`,
  );
  return path;
}

/** Every entry below `folder`, relative, sorted: an independent view of what is on disk. */
async function tree(folder: string): Promise<string[]> {
  return (await readdir(folder, { recursive: true })).map(String).sort();
}

describe("installSkillsFor", () => {
  it("installs every folder, reads each back, and removes them all afterwards", async () => {
    const before = await tree(workspace);
    const first = await skillFolder("one", "alpha", "Alpha body.\n");
    const second = await skillFolder("two", "beta", "Beta body.\n");
    const installed = await installSkillsFor("claude-code", [first, second], workspace);
    expect(installed.skills.map((skill) => [skill.name, skill.relativePath, skill.body])).toEqual([
      ["alpha", ".claude/skills/alpha", "Alpha body.\n"],
      ["beta", ".claude/skills/beta", "Beta body.\n"],
    ]);
    expect(await tree(join(workspace, ".claude", "skills"))).toEqual([
      "alpha",
      "alpha/SKILL.md",
      "beta",
      "beta/SKILL.md",
    ]);
    await installed.uninstall();
    // `.claude` and `.claude/skills` were created by the install and go too.
    expect(await tree(workspace)).toEqual(before);
  });

  it("keeps what the agent added under the skills folder while removing the skills", async () => {
    const installed = await installSkillsFor(
      "agents",
      [await skillFolder("one", "alpha"), await skillFolder("two", "beta")],
      workspace,
    );
    await writeFile(join(workspace, ".agents", "skills", "notes.md"), "mine\n");
    await installed.uninstall();
    expect(await tree(join(workspace, ".agents"))).toEqual(["skills", "skills/notes.md"]);
  });

  it("lists a folder identical to an earlier one once", async () => {
    const first = await skillFolder("one", "alpha");
    const copy = await skillFolder("copy", "alpha");
    const installed = await installSkillsFor("codex", [first, copy], workspace);
    expect(installed.skills.map((skill) => skill.name)).toEqual(["alpha"]);
    await installed.uninstall();
    expect(await tree(workspace)).toEqual(["app.py"]);
  });

  it("removes the folders already installed when a later one is refused", async () => {
    const good = await skillFolder("one", "alpha");
    const clash = await skillFolder("two", "alpha", "A different alpha.\n");
    await expect(installSkillsFor("claude-code", [good, clash], workspace)).rejects.toThrow(
      /different skill named "alpha"/,
    );
    expect(await tree(workspace)).toEqual(["app.py"]);
    const invalid = join(root, "skills", "invalid");
    await mkdir(invalid, { recursive: true });
    await expect(installSkillsFor("claude-code", [good, invalid], workspace)).rejects.toThrow();
    expect(await tree(workspace)).toEqual(["app.py"]);
  });
});
