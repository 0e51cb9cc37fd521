/**
 * Capturing the agent's change: the diff re-creates the workspace from the base byte for byte
 * (edits, new, deleted, binary and ignored files), git configuration the agent planted in the
 * workspace never runs, and a change hidden in a nested repository is marked incomplete.
 */
import { chmod, cp, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git } from "../../../test/support/git.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../test/support/temporary.js";
import { applyDiff } from "../../core/apply-diff.js";
import { treeDigest } from "../../env/index.js";
import { captureWorkspacePatch, splitRawAndPatch } from "./patch.js";

const cleanups = cleanupsAfterEach();
const withoutGit = { exclude: (path: string) => path === ".git" || path.startsWith(".git/") };

async function baseRepository(root: string): Promise<string> {
  const base = join(root, "base");
  await mkdir(join(base, "src"), { recursive: true });
  await writeFile(join(base, "src", "keep.py"), "print('keep')\n");
  await writeFile(join(base, "src", "edit.py"), "x = 1\n");
  await writeFile(join(base, "gone.txt"), "delete me\n");
  await git(base, "init", "-q", "-b", "main");
  await git(base, "add", "-A");
  await git(base, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
  return base;
}

describe("captureWorkspacePatch", () => {
  it("re-creates the agent's workspace from the base, without running its git configuration", async () => {
    const root = await temporaryDirectoryIn(cleanups, "patch-");
    const base = await baseRepository(root);
    const workspace = join(root, "workspace");
    await cp(base, workspace, { recursive: true });
    await writeFile(join(workspace, "src", "edit.py"), "x = 2\n");
    await rm(join(workspace, "gone.txt"));
    await writeFile(join(workspace, "new.sh"), "#!/bin/sh\necho hi\n");
    await chmod(join(workspace, "new.sh"), 0o755);
    await writeFile(join(workspace, "blob.bin"), Buffer.from([0, 1, 2, 255, 0, 7]));
    // An ignore file must not hide a change, and a planted hook or filter must not run.
    await writeFile(join(workspace, ".gitignore"), "hidden.txt\n");
    await writeFile(join(workspace, "hidden.txt"), "still a change\n");
    const marker = join(root, "pwned");
    await writeFile(
      join(workspace, ".git", "config"),
      `[core]\n\tfsmonitor = "touch ${marker}; false"\n[filter "evil"]\n\tclean = touch ${marker}; cat\n`,
    );
    await writeFile(join(workspace, ".gitattributes"), "* filter=evil\n");

    const patch = await captureWorkspacePatch(base, workspace);
    expect(await stat(marker).catch(() => undefined)).toBeUndefined();
    // Changed by hand above: edit.py, gone.txt, new.sh, blob.bin, .gitignore, hidden.txt, .gitattributes.
    expect(patch.files).toBe(7);
    expect(patch.truncated).toBe(false);
    expect(patch.incomplete).toBeUndefined();

    const replayed = join(root, "replayed");
    await cp(base, replayed, { recursive: true });
    const applied = await applyDiff(replayed, patch.diff);
    expect(applied).toMatchObject({ ok: true });
    // The workspace's planted .git/config differs; everything else must be identical.
    expect(await treeDigest(replayed, withoutGit)).toBe(await treeDigest(workspace, withoutGit));
    expect(await readFile(join(replayed, "blob.bin"))).toEqual(Buffer.from([0, 1, 2, 255, 0, 7]));
  });

  it("is empty when nothing changed, cut and marked when too long, redacted when asked", async () => {
    const root = await temporaryDirectoryIn(cleanups, "patch-");
    const base = await baseRepository(root);
    const workspace = join(root, "workspace");
    await cp(base, workspace, { recursive: true });
    expect(await captureWorkspacePatch(base, workspace)).toMatchObject({
      diff: "",
      files: 0,
      truncated: false,
    });
    await writeFile(join(workspace, "big.txt"), `${"line with sk-secret-123\n".repeat(200)}`);
    const patch = await captureWorkspacePatch(
      base,
      workspace,
      (text) => text.replaceAll("sk-secret-123", "[redacted]"),
      1000,
    );
    expect(patch.truncated).toBe(true);
    expect(patch.diff.length).toBe(1000);
    expect(patch.redacted).toBe(true);
    expect(patch.diff).not.toContain("sk-secret-123");
  });

  it("counts every changed path once and stores only the patch, whatever the names", async () => {
    const root = await temporaryDirectoryIn(cleanups, "patch-");
    const base = await baseRepository(root);
    const workspace = join(root, "workspace");
    await cp(base, workspace, { recursive: true });
    // A name with a newline, one starting with ':' and a removal: git quotes the first in its
    // raw line, so no raw line spills into the patch and none is taken for a patch line.
    await writeFile(join(workspace, "two\nlines.txt"), ":not a raw line\n");
    await writeFile(join(workspace, ":colon.txt"), "x\n");
    await rm(join(workspace, "gone.txt"));
    const patch = await captureWorkspacePatch(base, workspace);
    expect(patch.files).toBe(3);
    expect(patch.diff.startsWith("diff --git")).toBe(true);
    expect(patch.diff.split("\n").filter((line) => line.startsWith(":"))).toEqual([]);
    expect(patch.diff).toContain("+:not a raw line");
  });

  it("marks a change hidden inside a nested repository as incomplete", async () => {
    const root = await temporaryDirectoryIn(cleanups, "patch-");
    const base = await baseRepository(root);
    const workspace = join(root, "workspace");
    await cp(base, workspace, { recursive: true });
    await writeFile(join(workspace, "src", "solution.py"), "answer = 42\n");
    await git(join(workspace, "src"), "init", "-q");
    await git(join(workspace, "src"), "add", "-A");
    await git(join(workspace, "src"), "-c", "commit.gpgsign=false", "commit", "-q", "-m", "hide");
    const patch = await captureWorkspacePatch(base, workspace);
    expect(patch.incomplete).toContain("src");
  });
});

describe("splitRawAndPatch", () => {
  it("splits git's raw lines from the patch after them", () => {
    const raw = ':100644 100644 abc def M\tsrc/a.py\n:000000 100644 000 123 A\t"two\\nlines"\n';
    const patch = "diff --git a/src/a.py b/src/a.py\n-:old\n+:new\n";
    expect(splitRawAndPatch(`${raw}\n${patch}`)).toEqual({
      raw: [":100644 100644 abc def M\tsrc/a.py", ':000000 100644 000 123 A\t"two\\nlines"'],
      patch,
    });
    expect(splitRawAndPatch("")).toEqual({ raw: [], patch: "" });
    // Cut inside the raw lines (the output cap): the part line counts, there is no patch.
    expect(splitRawAndPatch(":100644 100644 abc def M\tsrc/a")).toEqual({
      raw: [":100644 100644 abc def M\tsrc/a"],
      patch: "",
    });
  });
});
