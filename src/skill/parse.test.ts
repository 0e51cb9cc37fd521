import { describe, expect, it, vi } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../test/support/temporary.js";
import { decodeText, loadSkillFolder, parseSkillMarkdown } from "./parse.js";

const FILE = "skill/SKILL.md";

function codes(text: string): string[] {
  return parseSkillMarkdown(text, FILE).findings.map((finding) => finding.code);
}

describe("parseSkillMarkdown", () => {
  it("splits frontmatter and body and records the line of every key", () => {
    const parsed = parseSkillMarkdown(
      "---\nname: a\ndescription: b\nmetadata:\n  owner: me\n---\n# Title\ntext\n",
      FILE,
    );
    expect(parsed.findings).toEqual([]);
    expect(parsed.frontmatter).toEqual({ name: "a", description: "b", metadata: { owner: "me" } });
    expect(parsed.fieldLines.get("name")).toBe(2);
    expect(parsed.fieldLines.get("description")).toBe(3);
    expect(parsed.fieldLines.get("metadata.owner")).toBe(5);
    expect(parsed.body).toBe("# Title\ntext\n");
    expect(parsed.bodyStartLine).toBe(7);
  });

  it("reports a file without frontmatter on line 1", () => {
    const parsed = parseSkillMarkdown("# Just markdown\n", FILE);
    expect(parsed.findings).toMatchObject([
      { code: "frontmatter-missing", line: 1, level: "error" },
    ]);
    expect(parsed.frontmatter).toBeUndefined();
  });

  it("reports frontmatter that is never closed", () => {
    expect(codes("---\nname: a\ndescription: b\n# body\n")).toEqual(["frontmatter-unterminated"]);
  });

  it("reports an empty file as missing frontmatter", () => {
    expect(codes("")).toEqual(["frontmatter-missing"]);
  });

  it.each([
    ["a scalar", "---\njust text\n---\n", "a single value"],
    ["a list", "---\n- name\n- description\n---\n", "a list"],
    ["empty", "---\n---\nbody\n", "empty"],
  ])("reports frontmatter that is %s as not a mapping", (_label, text, what) => {
    const parsed = parseSkillMarkdown(text, FILE);
    expect(parsed.findings).toHaveLength(1);
    expect(parsed.findings[0]).toMatchObject({ code: "frontmatter-not-mapping", line: 2 });
    expect(parsed.findings[0]?.message).toContain(what);
  });

  it("reports a duplicate key at the line of its second occurrence", () => {
    const parsed = parseSkillMarkdown(
      "---\nname: a\ndescription: one\nlicense: MIT\ndescription: two\n---\n",
      FILE,
    );
    expect(parsed.findings).toMatchObject([{ code: "yaml-duplicate-key", line: 5 }]);
  });

  it("reports YAML syntax errors with the file line", () => {
    const parsed = parseSkillMarkdown("---\nname: a\ndescription: [unclosed\n---\n", FILE);
    expect(parsed.findings.map((finding) => finding.code)).toContain("yaml-syntax");
    expect(parsed.frontmatter).toBeUndefined();
    const lines = parsed.findings.map((finding) => finding.line);
    expect(lines.every((line) => line !== undefined && line >= 3 && line <= 4)).toBe(true);
  });

  it("refuses an alias bomb instead of expanding it", () => {
    const rows = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let level = 1; level < 8; level++) {
      const previous = String.fromCharCode(96 + level);
      const next = String.fromCharCode(97 + level);
      rows.push(`${next}: &${next} [${Array(10).fill(`*${previous}`).join(", ")}]`);
    }
    const text = `---\nname: n\ndescription: d\n${rows.join("\n")}\n---\n`;
    const parsed = parseSkillMarkdown(text, FILE);
    expect(parsed.findings.map((finding) => finding.code)).toContain("yaml-syntax");
  });

  it("refuses frontmatter over 16 KiB without parsing it", () => {
    const keys = Array.from({ length: 2500 }, (_, index) => `k${index}: v`).join("\n");
    expect(keys.length).toBeGreaterThan(16 * 1024);
    const parsed = parseSkillMarkdown(`---\n${keys}\n---\nbody\n`, FILE);
    expect(parsed.findings).toMatchObject([{ code: "frontmatter-too-large", line: 1 }]);
    expect(parsed.body).toBe("body\n");
  });

  it("refuses brackets nested deeper than 64 levels, and accepts 64", () => {
    const nested = (depth: number): string => `a: ${"[".repeat(depth)}${"]".repeat(depth)}`;
    expect(codes(`---\n${nested(65)}\n---\n`)).toEqual(["frontmatter-too-deep"]);
    expect(codes(`---\n${nested(64)}\nname: n\n---\n`)).toEqual([]);
  });

  it("accepts a byte-order mark with a warning and still parses", () => {
    const parsed = parseSkillMarkdown("\uFEFF---\nname: a\ndescription: b\n---\nbody\n", FILE);
    expect(parsed.findings).toMatchObject([{ code: "skill-file-bom", level: "warning" }]);
    expect(parsed.frontmatter).toEqual({ name: "a", description: "b" });
  });

  it("accepts CRLF line endings with a warning and normalises them", () => {
    const parsed = parseSkillMarkdown("---\r\nname: a\r\ndescription: b\r\n---\r\nline\r\n", FILE);
    expect(parsed.findings).toMatchObject([{ code: "crlf-line-endings", level: "warning" }]);
    expect(parsed.frontmatter).toEqual({ name: "a", description: "b" });
    expect(parsed.body).toBe("line\n");
  });

  it("keeps a collection used as a key as an unknown field, printing nothing", () => {
    const emitted = vi.spyOn(process, "emitWarning");
    try {
      const parsed = parseSkillMarkdown("---\n? [a, b]\n: 1\nname: n\n---\n", FILE);
      expect(parsed.findings).toEqual([]);
      expect(Object.keys(parsed.frontmatter ?? {})).toEqual(["[ a, b ]", "name"]);
      expect(emitted).not.toHaveBeenCalled();
    } finally {
      emitted.mockRestore();
    }
  });

  it("allows trailing spaces after the delimiters", () => {
    const parsed = parseSkillMarkdown("---  \nname: a\ndescription: b\n--- \nbody", FILE);
    expect(parsed.findings).toEqual([]);
    expect(parsed.body).toBe("body");
  });
});

describe("decodeText", () => {
  it("refuses NUL bytes and names their line", () => {
    const bytes = new Uint8Array([97, 10, 98, 10, 0, 99]);
    expect(decodeText(bytes)).toEqual({ kind: "binary", line: 3 });
  });

  it("refuses invalid UTF-8", () => {
    expect(decodeText(new Uint8Array([0x61, 0xff, 0xfe])).kind).toBe("invalid-utf8");
  });

  it("keeps a byte-order mark so it can be reported", () => {
    const decoded = decodeText(new Uint8Array([0xef, 0xbb, 0xbf, 0x61]));
    expect(decoded).toEqual({ kind: "text", text: "\uFEFFa" });
  });
});

describe("loadSkillFolder on a path that cannot be read", () => {
  const cleanups = cleanupsAfterEach();

  it("reports it as unreadable, not as a path that was not found", async () => {
    const directory = await temporaryDirectoryIn(cleanups, "skillsmith-skill-unreadable-");
    const loaded = await loadSkillFolder(await selfLoopingLink(directory, "looping-skill"));
    expect(loaded.findings.map((finding) => finding.code)).toEqual(["unreadable"]);
    expect(loaded.findings[0]?.message).toContain("ELOOP");
  });
});
