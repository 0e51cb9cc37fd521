import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { applyDiff } from "./apply-diff.js";

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(
    folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })),
  );
});

// Written by hand: line "two" of a.txt becomes "TWO".
const diff = `--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
`;

describe("applyDiff", () => {
  it("writes the diff's bytes even when the workspace sits inside another repository", async () => {
    const outer = await mkdtemp(join(tmpdir(), "skillsmith-apply-"));
    folders.push(outer);
    execFileSync("git", ["init", "-q", outer]);
    // The outer repository's attributes would rewrite every line ending of the applied file.
    await writeFile(join(outer, ".gitattributes"), "* text eol=crlf\n");
    const workspace = join(outer, "cache", "workspace");
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, "a.txt"), "one\ntwo\nthree\n");
    const outcome = await applyDiff(workspace, diff);
    expect(outcome.ok).toBe(true);
    // Without the ceiling git takes `outer` as the top and writes "one\r\nTWO\r\nthree\r\n".
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("one\nTWO\nthree\n");
  });

  it("changes nothing and says why when one hunk does not apply", async () => {
    const workspace = await mkdtemp(join(tmpdir(), "skillsmith-apply-"));
    folders.push(workspace);
    await writeFile(join(workspace, "a.txt"), "one\ntwo\nthree\n");
    await writeFile(join(workspace, "b.txt"), "other\n");
    const twoFiles = `${diff}--- a/b.txt
+++ b/b.txt
@@ -1 +1 @@
-not what b.txt holds
+changed
`;
    const outcome = await applyDiff(workspace, twoFiles);
    expect(outcome.ok).toBe(false);
    expect(outcome.message).toContain("b.txt");
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("one\ntwo\nthree\n");
  });
});
