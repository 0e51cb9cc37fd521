import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SkillValidationResult } from "./types.js";
import { extractLinks, localLinkPath, validateSkillFolder } from "./validate.js";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-validate-"));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Write a skill folder `folder` under the temp root with the given SKILL.md text and files. */
async function skill(
  folder: string,
  text: string | Uint8Array,
  files: Record<string, string> = {},
): Promise<string> {
  const directory = join(root, folder);
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, "SKILL.md"), text);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(directory, path, ".."), { recursive: true });
    await writeFile(join(directory, path), content);
  }
  return directory;
}

function frontmatter(fields: string, body = "# Steps\n\nDo the thing.\n"): string {
  return `---\n${fields}\n---\n${body}`;
}

const ok = (name: string): string => `name: ${name}\ndescription: Does a thing. Use when needed.`;

function errorCodes(result: SkillValidationResult): string[] {
  return result.errors.map((finding) => finding.code);
}

function warningCodes(result: SkillValidationResult): string[] {
  return result.warnings.map((finding) => finding.code);
}

describe("validateSkillFolder: a valid skill", () => {
  it("accepts a minimal skill with no findings", async () => {
    const path = await skill("my-skill", frontmatter(ok("my-skill")));
    const result = await validateSkillFolder(path);
    expect(result).toEqual({ path, valid: true, errors: [], warnings: [] });
  });

  it("accepts every optional field in its allowed form", async () => {
    const path = await skill(
      "full-skill",
      frontmatter(
        `${ok("full-skill")}\nlicense: Apache-2.0\ncompatibility: Requires git and Python 3.11\nmetadata:\n  author: me\n  version: "1.0"\nallowed-tools: Bash(git:*) Read`,
      ),
    );
    const result = await validateSkillFolder(path);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });
});

describe("validateSkillFolder: name", () => {
  it.each([
    ["Upper-Case", "upper-case", "name-invalid-chars"],
    ["under_score", "under_score", "name-invalid-chars"],
    ["-leading", "-leading", "name-hyphen-edge"],
    ["trailing-", "trailing-", "name-hyphen-edge"],
    ["double--hyphen", "double--hyphen", "name-double-hyphen"],
    ["other-name", "folder-name", "name-mismatch"],
  ])("rejects name %j in folder %j with %s", async (name, folder, code) => {
    const path = await skill(folder, frontmatter(ok(name)));
    const result = await validateSkillFolder(path);
    expect(result.valid).toBe(false);
    expect(errorCodes(result)).toContain(code);
    const finding = result.errors.find((error) => error.code === code);
    expect(finding).toMatchObject({ field: "name", line: 2, file: join(path, "SKILL.md") });
  });

  it("accepts 64 characters and rejects 65", async () => {
    const long64 = "a".repeat(64);
    const long65 = "a".repeat(65);
    expect((await validateSkillFolder(await skill(long64, frontmatter(ok(long64))))).valid).toBe(
      true,
    );
    const result = await validateSkillFolder(await skill(long65, frontmatter(ok(long65))));
    expect(errorCodes(result)).toEqual(["name-too-long"]);
  });

  it.each([
    ["missing", "description: d", "name-missing"],
    ["empty", 'name: ""\ndescription: d', "name-empty"],
    ["without a value", "name:\ndescription: d", "name-empty"],
    ["a number", "name: 42\ndescription: d", "name-not-string"],
  ])("rejects a name that is %s", async (_label, fields, code) => {
    const result = await validateSkillFolder(await skill("some-skill", frontmatter(fields)));
    expect(errorCodes(result)).toContain(code);
  });

  it.each([
    ["../escape", "name-unsafe-path"],
    ["a/b", "name-unsafe-path"],
    ["a\\\\b", "name-unsafe-path"],
  ])("rejects the path-like name %j", async (name, code) => {
    const result = await validateSkillFolder(
      await skill("plain", frontmatter(`name: "${name}"\ndescription: d`)),
    );
    expect(errorCodes(result)).toEqual([code]);
  });

  it("compares with the folder name after NFKC normalisation", async () => {
    // U+FF44 FULLWIDTH LATIN SMALL LETTER D normalises to "d".
    const folder = "pdf-tools".replace("d", "\uFF44");
    const path = await skill(folder, frontmatter(ok("pdf-tools")));
    const result = await validateSkillFolder(path);
    expect(result.errors).toEqual([]);
  });

  it("warns when the name itself is not in NFKC form but accepts its normal form", async () => {
    const path = await skill("pdf-tools", frontmatter(ok("p\uFF44f-tools")));
    const result = await validateSkillFolder(path);
    expect(result.errors).toEqual([]);
    expect(warningCodes(result)).toEqual(["name-not-normalized"]);
  });
});

describe("validateSkillFolder: other fields", () => {
  it("accepts a 1024-character description and rejects 1025", async () => {
    const at = await skill(
      "at-limit",
      frontmatter(`name: at-limit\ndescription: ${"x".repeat(1024)}`),
    );
    expect((await validateSkillFolder(at)).valid).toBe(true);
    const over = await skill("over", frontmatter(`name: over\ndescription: ${"x".repeat(1025)}`));
    const result = await validateSkillFolder(over);
    expect(result.errors).toMatchObject([
      { code: "description-too-long", field: "description", line: 3 },
    ]);
  });

  it("counts description length in code points, not UTF-16 units", async () => {
    // 1000 emoji are 2000 UTF-16 units but 1000 characters.
    const path = await skill(
      "emoji",
      frontmatter(`name: emoji\ndescription: ${"😀".repeat(1000)}`),
    );
    expect((await validateSkillFolder(path)).valid).toBe(true);
  });

  it.each([
    ["missing", "name: s", "description-missing"],
    ["blank", 'name: s\ndescription: "  "', "description-empty"],
    ["without a value", "name: s\ndescription:", "description-empty"],
    ["a list", "name: s\ndescription: [a, b]", "description-not-string"],
  ])("rejects a description that is %s", async (_label, fields, code) => {
    const result = await validateSkillFolder(await skill("s", frontmatter(fields)));
    expect(errorCodes(result)).toEqual([code]);
  });

  it("limits compatibility to 500 characters and rejects an empty one", async () => {
    const fine = await skill("c", frontmatter(`${ok("c")}\ncompatibility: ${"y".repeat(500)}`));
    expect((await validateSkillFolder(fine)).valid).toBe(true);
    const long = await skill("d", frontmatter(`${ok("d")}\ncompatibility: ${"y".repeat(501)}`));
    expect(errorCodes(await validateSkillFolder(long))).toEqual(["compatibility-too-long"]);
    const empty = await skill("e", frontmatter(`${ok("e")}\ncompatibility: ""`));
    expect(errorCodes(await validateSkillFolder(empty))).toEqual(["compatibility-empty"]);
    const number = await skill("f", frontmatter(`${ok("f")}\ncompatibility: 3`));
    expect(errorCodes(await validateSkillFolder(number))).toEqual(["compatibility-not-string"]);
  });

  it("requires metadata to map strings to strings, naming the key and its line", async () => {
    const path = await skill(
      "meta",
      frontmatter(`${ok("meta")}\nmetadata:\n  author: me\n  version: 1.0\n  tags: [a, b]`),
    );
    const result = await validateSkillFolder(path);
    expect(result.errors).toMatchObject([
      { code: "metadata-value-not-string", field: "metadata.version", line: 6 },
      { code: "metadata-value-not-string", field: "metadata.tags", line: 7 },
    ]);
    const list = await skill("meta-list", frontmatter(`${ok("meta-list")}\nmetadata: [a, b]`));
    expect(errorCodes(await validateSkillFolder(list))).toEqual(["metadata-not-mapping"]);
  });

  it("takes allowed-tools as a string, warns on a list, rejects other shapes", async () => {
    const list = await skill("t1", frontmatter(`${ok("t1")}\nallowed-tools:\n  - Read\n  - Bash`));
    const listResult = await validateSkillFolder(list);
    expect(listResult.errors).toEqual([]);
    expect(warningCodes(listResult)).toEqual(["allowed-tools-list"]);
    const mapping = await skill("t2", frontmatter(`${ok("t2")}\nallowed-tools:\n  Read: yes`));
    expect(errorCodes(await validateSkillFolder(mapping))).toEqual(["allowed-tools-invalid"]);
    const number = await skill("t3", frontmatter(`${ok("t3")}\nallowed-tools: 5`));
    expect(errorCodes(await validateSkillFolder(number))).toEqual(["allowed-tools-invalid"]);
  });

  it("rejects unknown frontmatter fields, each at its line", async () => {
    const path = await skill("u", frontmatter(`${ok("u")}\nversion: "2"\nmodel: opus`));
    const result = await validateSkillFolder(path);
    expect(result.errors).toMatchObject([
      { code: "unknown-field", field: "version", line: 4 },
      { code: "unknown-field", field: "model", line: 5 },
    ]);
  });

  it("rejects a non-string license", async () => {
    const path = await skill("l", frontmatter(`${ok("l")}\nlicense: [MIT]`));
    expect(errorCodes(await validateSkillFolder(path))).toEqual(["license-not-string"]);
  });
});

describe("validateSkillFolder: body", () => {
  it("warns above 500 body lines, not at 500", async () => {
    const lines = (count: number): string => `${Array(count).fill("step").join("\n")}\n`;
    const at = await skill("at", frontmatter(ok("at"), lines(500)));
    expect((await validateSkillFolder(at)).warnings).toEqual([]);
    const over = await skill("over", frontmatter(ok("over"), lines(501)));
    const result = await validateSkillFolder(over);
    expect(result.valid).toBe(true);
    // The body starts on line 5; its 501st line is file line 505.
    expect(result.warnings).toMatchObject([{ code: "body-too-long", line: 505 }]);
  });

  it("warns about an empty body", async () => {
    const path = await skill("empty-body", frontmatter(ok("empty-body"), "\n"));
    expect(warningCodes(await validateSkillFolder(path))).toEqual(["body-empty"]);
  });

  it("warns about relative links that do not resolve inside the folder", async () => {
    const body = [
      "See [the guide](references/guide.md) and [missing](references/missing.md).", // line 5
      "Run [script](scripts/run.sh#usage) or read [outside](../other/SKILL.md).", // line 6
      "Web [site](https://example.com/x.md), [anchor](#steps), [mail](mailto:a@b.c).", // line 7
      "```",
      "[not a link](nowhere.md)",
      "```",
      "Inline `[code](nowhere.md)` is not a link either.",
      "[ref]: assets/missing.png",
      "![diagram](<assets/my diagram.png>)",
    ].join("\n");
    const path = await skill("links", frontmatter(ok("links"), body), {
      "references/guide.md": "guide",
      "scripts/run.sh": "echo",
      "assets/my diagram.png": "png",
    });
    const result = await validateSkillFolder(path);
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((finding) => [finding.code, finding.line])).toEqual([
      ["link-broken", 5],
      ["link-outside-skill", 6],
      ["link-broken", 12],
    ]);
  });
});

describe("validateSkillFolder: many links", () => {
  it("checks at most 1000 distinct link targets, then says so once", async () => {
    const body = Array.from({ length: 1005 }, (_, index) => `[l](missing-${index}.md)`).join("\n");
    const result = await validateSkillFolder(await skill("links", frontmatter(ok("links"), body)));
    const codes = warningCodes(result);
    expect(codes.filter((code) => code === "link-broken")).toHaveLength(1000);
    // Body line 1001 (file line 1005) holds the first target over the limit.
    expect(result.warnings.filter((finding) => finding.code === "too-many-links")).toMatchObject([
      { line: 1005 },
    ]);
  });
});

describe("validateSkillFolder: hostile folders", () => {
  it("reports a path that does not exist", async () => {
    const result = await validateSkillFolder(join(root, "nothing-here"));
    expect(errorCodes(result)).toEqual(["path-not-found"]);
  });

  it("reports a dangling link given as the skill folder", async () => {
    await symlink(join(root, "gone"), join(root, "dangling"));
    const result = await validateSkillFolder(join(root, "dangling"));
    expect(result.errors).toMatchObject([
      { code: "path-not-found", message: expect.stringContaining("link") },
    ]);
  });

  it("reports a file given instead of a folder", async () => {
    const file = join(root, "file.md");
    await writeFile(file, "---\nname: file\n---\n");
    expect(errorCodes(await validateSkillFolder(file))).toEqual(["not-a-directory"]);
  });

  it("reports a folder without SKILL.md, hinting at a wrong-case file", async () => {
    const directory = join(root, "lower");
    await mkdir(directory);
    await writeFile(join(directory, "skill.md"), frontmatter(ok("lower")));
    const result = await validateSkillFolder(directory);
    expect(errorCodes(result)).toEqual(["skill-file-missing"]);
    expect(result.errors[0]?.message).toContain("skill.md");
  });

  it("reports a binary SKILL.md", async () => {
    const bytes = Buffer.concat([Buffer.from(frontmatter(ok("bin"))), Buffer.from([0, 1, 2])]);
    expect(errorCodes(await validateSkillFolder(await skill("bin", bytes)))).toEqual([
      "skill-file-binary",
    ]);
  });

  it("reports a SKILL.md that is not UTF-8", async () => {
    const bytes = Buffer.concat([Buffer.from(frontmatter(ok("latin"))), Buffer.from([0xe9, 0x0a])]);
    expect(errorCodes(await validateSkillFolder(await skill("latin", bytes)))).toEqual([
      "skill-file-encoding",
    ]);
  });

  it("refuses to read a SKILL.md over 1 MiB", async () => {
    const text = frontmatter(ok("big"), "x".repeat(1024 * 1024));
    expect(errorCodes(await validateSkillFolder(await skill("big", text)))).toEqual([
      "skill-file-too-large",
    ]);
  });

  it("reports a BOM and CRLF as warnings but validates the content", async () => {
    const text = `\uFEFF${frontmatter(ok("windows")).replace(/\n/g, "\r\n")}`;
    const result = await validateSkillFolder(await skill("windows", text));
    expect(result.valid).toBe(true);
    expect(warningCodes(result).sort()).toEqual(["crlf-line-endings", "skill-file-bom"]);
  });

  it("rejects symbolic links that leave the folder, and a SKILL.md that is one", async () => {
    const outside = join(root, "secret.txt");
    await writeFile(outside, "secret");
    const path = await skill("linked", frontmatter(ok("linked")));
    await symlink(outside, join(path, "notes.txt"));
    await symlink(join(path, "SKILL.md"), join(path, "inside-link.md"));
    const result = await validateSkillFolder(path);
    expect(result.errors).toMatchObject([
      { code: "symlink-outside", file: join(path, "notes.txt") },
    ]);

    const other = join(root, "outer-skill");
    await mkdir(other);
    await symlink(join(path, "SKILL.md"), join(other, "SKILL.md"));
    const linkedSkill = await validateSkillFolder(other);
    expect(errorCodes(linkedSkill)).toEqual(["symlink-outside"]);
  });

  it("warns about a broken symbolic link", async () => {
    const path = await skill("broken", frontmatter(ok("broken")));
    await symlink(join(path, "gone.md"), join(path, "dangling.md"));
    expect(warningCodes(await validateSkillFolder(path))).toEqual(["symlink-broken"]);
  });

  it("names a symbolic link loop as a loop, not as a link to nothing", async () => {
    const path = await skill("looped", frontmatter(ok("looped")));
    await symlink("loop.md", join(path, "loop.md"));
    await symlink(join(path, "gone.md"), join(path, "dangling.md"));
    const messages = (await validateSkillFolder(path)).warnings
      .filter((finding) => finding.code === "symlink-broken")
      .map((finding) => `${finding.file?.split("/").at(-1)}: ${finding.message}`)
      .sort();
    // realpath of a link to itself fails with ELOOP (too many levels of links), not ENOENT.
    expect(messages).toEqual([
      "dangling.md: symbolic link points to nothing",
      "loop.md: symbolic link cannot be followed (ELOOP)",
    ]);
  });

  it("reports a FIFO instead of blocking on it", async () => {
    const path = await skill("fifo", frontmatter(ok("fifo")));
    execFileSync("mkfifo", [join(path, "pipe")]);
    expect(errorCodes(await validateSkillFolder(path))).toEqual(["special-file"]);
  });

  it("reports a SKILL.md that is a FIFO without reading it", async () => {
    const directory = join(root, "fifo-skill");
    await mkdir(directory);
    execFileSync("mkfifo", [join(directory, "SKILL.md")]);
    const codes = errorCodes(await validateSkillFolder(directory));
    expect(codes).toContain("skill-file-not-regular");
  });

  it("stops descending into absurdly deep folders", async () => {
    const path = await skill("deep", frontmatter(ok("deep")));
    await mkdir(join(path, ...Array(40).fill("d")), { recursive: true });
    expect(errorCodes(await validateSkillFolder(path))).toEqual(["too-deep"]);
  });
});

describe("link helpers", () => {
  it("extracts link targets with their file lines", () => {
    const links = extractLinks("a [x](one.md)\n[y]: two.md 'title'\n![z](three.png \"t\")", 10);
    expect(links).toEqual([
      { target: "one.md", line: 10 },
      { target: "two.md", line: 11 },
      { target: "three.png", line: 12 },
    ]);
  });

  it("skips lines too long to search and links inside inline code", () => {
    const long = `${"[".repeat(5000)}[x](missing.md)`;
    expect(extractLinks(`${long}\n\`[y](code.md)\` [z](real.md)`, 1)).toEqual([
      { target: "real.md", line: 2 },
    ]);
  });

  it("keeps only local relative paths, decoded and without fragments", () => {
    expect(localLinkPath("https://x.y/z")).toBeUndefined();
    expect(localLinkPath("#top")).toBeUndefined();
    expect(localLinkPath("/etc/passwd")).toBeUndefined();
    expect(localLinkPath("a%20b.md#part")).toBe("a b.md");
    expect(localLinkPath("<c d.md>")).toBe("c d.md");
  });
});

describe("message slips of issue 17", () => {
  it("quotes a metadata number as written, says lists cannot be quoted, and puts a duplicate key's value at its last line", async () => {
    const { mkdtemp, mkdir, writeFile, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const root = await mkdtemp(join(tmpdir(), "skillsmith-slips-"));
    try {
      await mkdir(join(root, "a"));
      await writeFile(
        join(root, "a", "SKILL.md"),
        "---\nname: a\ndescription: x\nname: b\nmetadata:\n  version: 1.0\n  tags: [a, b]\n  owners:\n    - name: x\n---\nbody\n",
      );
      const errors = (await validateSkillFolder(join(root, "a"))).errors.map(
        (error) => `${error.line} ${error.code} ${error.message}`,
      );
      expect(errors).toContain(
        '4 yaml-duplicate-key a frontmatter key ("name") appears twice; agents disagree on which value wins (this one, the last, is what skillsmith reads)',
      );
      expect(errors).toContain('4 name-mismatch name "b" does not match the folder name "a"');
      expect(errors).toContain(
        '6 metadata-value-not-string metadata value "version" is a number; metadata maps strings to strings (quote it: "1.0")',
      );
      expect(errors.join("\n")).not.toContain("[object Object]");
      expect(errors).toContain(
        '8 metadata-value-not-string metadata value "owners" is a list; metadata maps strings to strings: write it as one string (a list as "a, b") or move it out of metadata',
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
