import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseUnifiedDiff } from "./diff.js";

describe("parseUnifiedDiff", () => {
  it("reads real git output: spaces, quoted UTF-8 names, renames, creations and deletions", async () => {
    const directory = await mkdtemp(join(tmpdir(), "skillsmith-diff-"));
    try {
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], {
          cwd: directory,
          encoding: "utf8",
        });
      git("init", "-q");
      await writeFile(join(directory, "my file.txt"), "one\n");
      await writeFile(join(directory, "plain.txt"), "keep\n");
      await writeFile(join(directory, "gone.txt"), "bye\n");
      git("add", ".");
      git("commit", "-qm", "start");
      await writeFile(join(directory, "my file.txt"), "one\ntwo\n");
      git("mv", "plain.txt", "new name.txt");
      git("rm", "-q", "gone.txt");
      // A folder named "café b" puts " b/" inside the path as well as a quoted UTF-8 name.
      await mkdir(join(directory, "café b"));
      await writeFile(join(directory, "café b/x.txt"), "-- a line that looks like a header\n");
      git("add", "-A");
      const files = parseUnifiedDiff(git("diff", "--cached", "-M"));
      // git sorts by path: "café b/x.txt", "gone.txt", "my file.txt", "new name.txt".
      expect(files.map((file) => [file.oldPath, file.newPath])).toEqual([
        [undefined, "café b/x.txt"],
        ["gone.txt", undefined],
        ["my file.txt", "my file.txt"],
        ["plain.txt", "new name.txt"],
      ]);
      expect(files.map((file) => file.path)).toEqual([
        "café b/x.txt",
        "gone.txt",
        "my file.txt",
        "new name.txt",
      ]);
      expect(files[0]?.lines).toEqual(["@@ -0,0 +1 @@", "+-- a line that looks like a header"]);
      expect(files[2]?.lines).toEqual(["@@ -1 +1,2 @@", " one", "+two"]);
      expect(files[3]?.lines).toEqual([]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("keeps a removed line starting with `-- ` inside its hunk, not as a header", () => {
    const diff = [
      "--- a/notes.sql",
      "+++ b/notes.sql",
      "@@ -1,2 +1 @@",
      "--- old comment",
      " select 1;",
    ].join("\n");
    expect(parseUnifiedDiff(diff)).toEqual([
      {
        oldPath: "notes.sql",
        newPath: "notes.sql",
        path: "notes.sql",
        lines: ["@@ -1,2 +1 @@", "--- old comment", " select 1;"],
      },
    ]);
  });

  it("reads a plain two-file diff, a patch without hunk counts, and text that is no diff", () => {
    const diff = [
      "--- a/one.txt",
      "+++ b/one.txt",
      "@@",
      "-x",
      "+y",
      "--- a/two.txt\t2024-01-01 00:00:00",
      "+++ b/two.txt\t2024-01-01 00:00:01",
      "@@ -3 +3 @@",
      "-p",
      "+q",
      "\\ No newline at end of file",
    ].join("\n");
    expect(parseUnifiedDiff(diff).map((file) => [file.path, file.lines])).toEqual([
      ["one.txt", ["@@", "-x", "+y"]],
      ["two.txt", ["@@ -3 +3 @@", "-p", "+q", "\\ No newline at end of file"]],
    ]);
    expect(parseUnifiedDiff("no diff here\n")).toEqual([]);
  });
});
