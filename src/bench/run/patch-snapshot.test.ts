/**
 * The capture from a materialised `Workspace` (the base indexed once per process, an overlay's
 * upper layer naming what to re-read) against the capture from the workspace's path (both trees
 * indexed from scratch, the behaviour before the snapshot): byte-identical patches on tricky
 * changes, including the ones the shortcut has to notice (an edit that keeps size and mtime, a
 * folder replaced by a link, a changed `.gitattributes`, a nested repository). And the attacks
 * on the snapshot: one run's change reaching another run's patch, a sandboxed agent writing
 * into it.
 */
import { execFile } from "node:child_process";
import {
  chmod,
  cp,
  lutimes,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { git } from "../../../test/support/git.js";
import { usableBubblewrap } from "../../../test/support/sandboxes.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../test/support/temporary.js";
import { applyDiff } from "../../core/apply-diff.js";
import {
  type MaterialiseMethod,
  type PreparedBase,
  prepareBase,
  treeDigest,
} from "../../env/index.js";
import { materialiseVerified } from "../../env/workspace/identity.js";
import { readOwner } from "../../env/workspace/owner.js";
import { captureWorkspacePatch, forgetBaseSnapshots } from "./patch.js";

const cleanups = cleanupsAfterEach();
const isRoot = process.getuid?.() === 0;
const methods: MaterialiseMethod[] = isRoot ? ["overlay", "copy"] : ["copy"];
const bubblewrap = await usableBubblewrap();
const withoutGit = { exclude: (path: string) => path === ".git" || path.startsWith(".git/") };

/** A committed repository with one file or folder for each kind of change below. */
async function trickyRepository(root: string): Promise<string> {
  const repository = join(root, "repository");
  const files: Record<string, string | Buffer> = {
    "src/keep.py": "print('keep')\n",
    "src/edit.py": "x = 1\n",
    "src/move.py": "moved = True\n",
    "same-size.txt": "aaaa\n",
    "gone.txt": "delete me\n",
    "tool.sh": "#!/bin/sh\necho tool\n",
    "folder-to-file/a.txt": "a\n",
    "folder-to-link/b.txt": "b\n",
    "file-to-folder": "file\n",
    "recreated/old.txt": "old\n",
    "recreated/kept.txt": "kept\n",
    "name with spaces.txt": "spaces\n",
    "ünïcödé.txt": "unicode\n",
    "ignored/.gitignore": "*\n",
    "ignored/cache.txt": "cached\n",
    "blob.bin": Buffer.from([0, 1, 2, 255, 0, 7]),
    "deep/a/b/c/leaf.txt": "leaf\n",
    "renamed/one.txt": "one\n",
    "renamed/inner/two.txt": "two\n",
  };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(repository, path)), { recursive: true });
    await writeFile(join(repository, path), content);
  }
  await symlink("src/keep.py", join(repository, "link"));
  await git(repository, "init", "-q", "-b", "main");
  await git(repository, "add", "-A", "--force");
  await git(repository, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
  return repository;
}

async function preparedBase(root: string, repository: string): Promise<PreparedBase> {
  const commit = await git(repository, "rev-parse", "HEAD");
  return prepareBase({ source: repository, commit, cacheDir: join(root, "cache") });
}

/**
 * Give every entry of the base an old mtime (ctime stays now), as a setup step that unpacks an
 * archive keeping its timestamps does. Without it a base checked out a moment ago has entries git
 * treats as racy and re-reads anyway, and a test would not show that the shortcut is exact.
 */
async function ageBase(base: PreparedBase): Promise<void> {
  const old = new Date("2001-09-09T01:46:40Z");
  for (const entry of await readdir(base.tree, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (!path.includes(`${base.tree}/.git`)) await lutimes(path, old, old);
  }
}

/** Both captures of one workspace, and the snapshot capture checked against the reference. */
async function bothCaptures(
  base: PreparedBase,
  workspace: Parameters<typeof captureWorkspacePatch>[1],
) {
  if (typeof workspace === "string") throw new Error("a materialised workspace is needed");
  const fast = await captureWorkspacePatch(base.tree, workspace);
  const reference = await captureWorkspacePatch(base.tree, workspace.path);
  expect(fast).toEqual(reference);
  return fast;
}

describe("captureWorkspacePatch from a materialised workspace", () => {
  it.each(methods)(
    "is byte-identical to the capture from scratch on tricky changes, and re-creates the workspace (%s)",
    async (method) => {
      const root = await temporaryDirectoryIn(cleanups, "patch-snapshot-");
      const base = await preparedBase(root, await trickyRepository(root));
      await ageBase(base);
      const outside = join(root, "outside");
      await mkdir(outside);
      await writeFile(join(outside, "b.txt"), "not the base's b\n");
      // Warm the snapshot with a run that changes nothing, as a runner's first run would.
      const first = await materialiseVerified(base, { method });
      try {
        expect(await bothCaptures(base, first)).toMatchObject({ diff: "", files: 0 });
      } finally {
        await first.dispose();
      }

      const workspace = await materialiseVerified(base, { method });
      cleanups.push(async () => {
        await workspace.dispose();
      });
      expect(workspace.upperLayer !== undefined).toBe(method === "overlay");
      const path = workspace.path;
      // An edit that keeps the size and puts the timestamps back: only the content tells.
      const sameSize = join(path, "same-size.txt");
      const before = await stat(sameSize);
      await writeFile(sameSize, "bbbb\n");
      await utimes(sameSize, before.atime, before.mtime);
      await writeFile(join(path, "src", "edit.py"), "x = 2\n");
      await rename(join(path, "src", "move.py"), join(path, "src", "moved.py"));
      await rm(join(path, "gone.txt"));
      await chmod(join(path, "tool.sh"), 0o755);
      await rm(join(path, "folder-to-file"), { recursive: true });
      await writeFile(join(path, "folder-to-file"), "now a file\n");
      // A folder replaced by a link to a folder outside holding a file of the same name.
      await rm(join(path, "folder-to-link"), { recursive: true });
      await symlink(outside, join(path, "folder-to-link"));
      await rm(join(path, "file-to-folder"));
      await mkdir(join(path, "file-to-folder"));
      await writeFile(join(path, "file-to-folder", "inside.txt"), "inside\n");
      // Removed and made again: an opaque folder in an overlay.
      await rm(join(path, "recreated"), { recursive: true });
      await mkdir(join(path, "recreated"));
      await writeFile(join(path, "recreated", "kept.txt"), "kept\n");
      await writeFile(join(path, "recreated", "new.txt"), "new\n");
      await writeFile(join(path, "name with spaces.txt"), "spaces changed\n");
      await writeFile(join(path, "ünïcödé.txt"), "unicode changed\n");
      await writeFile(join(path, "new\nline\tname.txt"), "odd name\n");
      await writeFile(join(path, "ignored", "cache.txt"), "cached changed\n");
      await writeFile(join(path, "ignored", "fresh.txt"), "new and ignored\n");
      await writeFile(join(path, "blob.bin"), Buffer.from([9, 0, 255, 254, 0]));
      await rm(join(path, "link"));
      await symlink("/etc/passwd", join(path, "link"));
      // The whole chain of folders goes with the file: a diff cannot say "keep this folder empty".
      await rm(join(path, "deep"), { recursive: true });
      // A folder renamed by `mv` (copied then removed in an overlay: rename(2) is refused there).
      await promisify(execFile)("mv", [join(path, "renamed"), join(path, "src", "renamed")]);
      // The workspace's own git set-up is never run (the top `.git` is not indexed at all).
      const marker = join(root, "pwned");
      await writeFile(
        join(path, ".git", "config"),
        `[core]\n\tfsmonitor = "touch ${marker}; false"\n[filter "evil"]\n\tclean = touch ${marker}; cat\n`,
      );

      const patch = await bothCaptures(base, workspace);
      expect(await stat(marker).catch(() => undefined)).toBeUndefined();
      // Counted by hand from the changes above: same-size, edit, move (2), gone, tool.sh,
      // folder-to-file (2), folder-to-link (2), file-to-folder (2), recreated (2: old gone,
      // new added), spaces, unicode, odd name, ignored (2), blob, link, leaf, renamed folder
      // (2 files gone, 2 added).
      expect(patch.files).toBe(26);
      expect(patch.diff).toContain("-aaaa\n+bbbb\n");
      expect(patch.diff).toContain("old mode 100644\nnew mode 100755\n");
      expect(patch.diff).toContain("+/etc/passwd");

      const replayed = join(root, "replayed");
      await cp(base.tree, replayed, { recursive: true, verbatimSymlinks: true });
      expect(await applyDiff(replayed, patch.diff)).toMatchObject({ ok: true });
      expect(await treeDigest(replayed, withoutGit)).toBe(await treeDigest(path, withoutGit));
    },
  );

  it.skipIf(!isRoot)(
    "sees an edit git's own stat check misses: same size, mtime put back, within the base file's second (overlay; needs root to mount)",
    async () => {
      const root = await temporaryDirectoryIn(cleanups, "patch-snapshot-");
      const repository = join(root, "repository");
      await mkdir(repository);
      for (let attempt = 0; attempt < 5; attempt += 1) {
        await writeFile(join(repository, `forged-${attempt}.txt`), "aaaa\n");
      }
      await git(repository, "init", "-q", "-b", "main");
      await git(repository, "add", "-A");
      await git(repository, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
      const base = await preparedBase(root, repository);
      const old = new Date("2001-09-09T01:46:40Z");
      // git compares whole seconds of ctime: an overlay file copied up and edited within the
      // second its base file last changed keeps the base file's inode, size and (put back) mtime,
      // so git's stat check alone calls it unchanged. Timing decides whether an attempt gets
      // there, so each attempt checks that it did, on a file of its own. Only three calls sit
      // inside the second: the workspace is made before it (on a loaded machine making it took
      // longer than the second, and five attempts in a row missed).
      let forged = false;
      for (let attempt = 0; attempt < 5 && !forged; attempt += 1) {
        const name = `forged-${attempt}.txt`;
        const workspace = await materialiseVerified(base, { method: "overlay" });
        try {
          const file = join(workspace.path, name);
          while (Date.now() % 1000 > 100) await new Promise((resolve) => setTimeout(resolve, 5));
          // A base file whose mtime is old and whose ctime is now (a setup step that unpacked an
          // archive keeping its timestamps does this), so the snapshot's entry is not racy. The
          // file is not yet copied up, so the workspace shows the base file's new times.
          await utimes(join(base.tree, name), old, old);
          await writeFile(file, "bbbb\n");
          await utimes(file, old, old);
          const [lower, upper] = [await stat(join(base.tree, name)), await stat(file)];
          forged =
            lower.ino === upper.ino &&
            lower.size === upper.size &&
            lower.mtimeMs === upper.mtimeMs &&
            Math.floor(lower.ctimeMs / 1000) === Math.floor(upper.ctimeMs / 1000);
          if (!forged) continue;
          // The snapshot entry's mtime is old, so git does not treat it as racy: it trusts it.
          const patch = await bothCaptures(base, workspace);
          expect(patch.files).toBe(1);
          expect(patch.diff).toContain(`diff --git a/${name} b/${name}`);
          expect(patch.diff).toContain("-aaaa\n+bbbb\n");
        } finally {
          await workspace.dispose();
        }
      }
      expect(forged).toBe(true);
    },
  );

  it.each(methods)(
    "reads every file again when a .gitattributes changes how unchanged files hash (%s)",
    async (method) => {
      const root = await temporaryDirectoryIn(cleanups, "patch-snapshot-");
      const repository = join(root, "repository");
      await mkdir(repository);
      // A file committed with CRLF endings, then `text=auto`: checked out as committed, but
      // indexed with LF endings. Without the attribute it is indexed as it is, so removing the
      // attribute changes that file's blob though the file itself is untouched.
      await writeFile(join(repository, "windows.txt"), "one\r\ntwo\r\n");
      await writeFile(join(repository, "other.txt"), "other\n");
      await git(repository, "init", "-q", "-b", "main");
      await git(repository, "add", "-A");
      await git(repository, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "crlf");
      await writeFile(join(repository, ".gitattributes"), "* text=auto\n");
      await git(repository, "add", "-A");
      await git(repository, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "attributes");
      const base = await preparedBase(root, repository);
      await ageBase(base);
      const warm = await materialiseVerified(base, { method });
      await bothCaptures(base, warm);
      await warm.dispose();

      const workspace = await materialiseVerified(base, { method });
      cleanups.push(async () => {
        await workspace.dispose();
      });
      await rm(join(workspace.path, ".gitattributes"));
      const patch = await bothCaptures(base, workspace);
      expect(patch.files).toBe(2);
      expect(patch.diff).toContain("diff --git a/windows.txt b/windows.txt");

      // A filter named by a planted .gitattributes is never configured, so never runs.
      const marker = join(root, "pwned");
      await writeFile(join(workspace.path, ".gitattributes"), "* filter=evil\n");
      await writeFile(
        join(workspace.path, ".git", "config"),
        `[filter "evil"]\n\tclean = touch ${marker}; cat\n`,
      );
      await bothCaptures(base, workspace);
      expect(await stat(marker).catch(() => undefined)).toBeUndefined();
    },
  );

  it.each(methods)("leaves a special file to git's own walk (%s)", async (method) => {
    const root = await temporaryDirectoryIn(cleanups, "patch-snapshot-");
    const base = await preparedBase(root, await trickyRepository(root));
    await ageBase(base);
    const workspace = await materialiseVerified(base, { method });
    cleanups.push(async () => {
      await workspace.dispose();
    });
    // git indexes no fifo; the edit beside it is still captured.
    await promisify(execFile)("mkfifo", [join(workspace.path, "src", "pipe")]);
    await writeFile(join(workspace.path, "src", "edit.py"), "x = 3\n");
    const patch = await bothCaptures(base, workspace);
    expect(patch.files).toBe(1);
    expect(patch.diff).toContain("-x = 1\n+x = 3\n");
  });

  it.each(methods)(
    "marks a folder made into a nested repository as incomplete (%s)",
    async (method) => {
      const root = await temporaryDirectoryIn(cleanups, "patch-snapshot-");
      const base = await preparedBase(root, await trickyRepository(root));
      const workspace = await materialiseVerified(base, { method });
      cleanups.push(async () => {
        await workspace.dispose();
      });
      const folder = join(workspace.path, "src");
      await writeFile(join(folder, "solution.py"), "answer = 42\n");
      await git(folder, "init", "-q");
      await git(folder, "add", "-A");
      await git(folder, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "hide");
      const patch = await bothCaptures(base, workspace);
      expect(patch.incomplete).toContain("src");
    },
  );
});

describe("the base snapshot under attack", () => {
  /** A base's kept snapshot: `patch-snapshot-<digest>` in the base's own folder. */
  async function snapshotHolder(base: PreparedBase): Promise<string> {
    const kept = (await readdir(base.root)).filter((name) => name.startsWith("patch-snapshot-"));
    expect(kept).toEqual([`patch-snapshot-${base.digest.slice(0, 32)}`]);
    return join(base.root, kept[0] as string);
  }

  /** Snapshot holders of this process left beside the workspaces (made, not kept). */
  async function ownHolders(base: PreparedBase): Promise<string[]> {
    const root = join(base.cacheDir, "workspaces");
    return (await readdir(root))
      .filter((name) => name.startsWith(`${base.key}-patch-`))
      .map((name) => join(root, name));
  }

  /** Every file under a folder with its content, to tell whether anything changed. */
  async function contents(folder: string): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = join(entry.parentPath, entry.name);
      found.set(file, (await readFile(file)).toString("base64"));
    }
    return found;
  }

  it.each(methods)(
    "one run's change never reaches another run's patch, and no run writes the snapshot (%s)",
    async (method) => {
      const root = await temporaryDirectoryIn(cleanups, "patch-snapshot-");
      const base = await preparedBase(root, await trickyRepository(root));
      // The first capture makes the snapshot after this agent ran: it must not see its change.
      const first = await materialiseVerified(base, { method });
      await writeFile(join(first.path, "src", "keep.py"), "print('poisoned')\n");
      await writeFile(join(first.path, "planted.txt"), "planted\n");
      const firstPatch = await bothCaptures(base, first);
      expect(firstPatch.files).toBe(2);
      await first.dispose();

      const holder = await snapshotHolder(base);
      // Kept in the base's folder for later processes, nothing left beside the workspaces.
      expect(await ownHolders(base)).toEqual([]);
      const snapshot = await contents(holder);

      const second = await materialiseVerified(base, { method });
      expect(await bothCaptures(base, second)).toMatchObject({ diff: "", files: 0 });
      await writeFile(join(second.path, "planted.txt"), "another\n");
      const secondPatch = await bothCaptures(base, second);
      expect(secondPatch.files).toBe(1);
      expect(secondPatch.diff).toContain("+another\n");
      expect(secondPatch.diff).not.toContain("poisoned");
      await second.dispose();
      expect(await contents(holder)).toEqual(snapshot);
    },
  );

  it("a snapshot removed from under the process is made again, and the run is still captured", async () => {
    const root = await temporaryDirectoryIn(cleanups, "patch-snapshot-");
    const base = await preparedBase(root, await trickyRepository(root));
    const first = await materialiseVerified(base);
    await bothCaptures(base, first);
    await first.dispose();
    const holder = await snapshotHolder(base);
    await rm(holder, { recursive: true, force: true });

    const workspace = await materialiseVerified(base);
    cleanups.push(async () => {
      await workspace.dispose();
    });
    await writeFile(join(workspace.path, "src", "edit.py"), "x = 4\n");
    expect((await bothCaptures(base, workspace)).diff).toContain("-x = 1\n+x = 4\n");
    // That capture forgot the snapshot and no longer trusts the kept one; the next one makes
    // its own beside the workspaces (swept once this process is gone) and uses it.
    expect((await bothCaptures(base, workspace)).diff).toContain("-x = 1\n+x = 4\n");
    const own = await ownHolders(base);
    expect(own).toHaveLength(1);
    expect((await readOwner(own[0] as string))?.pid).toBe(process.pid);
  });

  it("a later process reads the kept snapshot instead of indexing the base again (copy)", async () => {
    const root = await temporaryDirectoryIn(cleanups, "patch-snapshot-");
    const base = await preparedBase(root, await trickyRepository(root));
    const first = await materialiseVerified(base, { method: "copy" });
    await bothCaptures(base, first);
    await first.dispose();
    await snapshotHolder(base);
    // As a new process: nothing remembered. A file slipped into the base after the snapshot is
    // then only in a base indexed again, so a patch showing it added proves the kept one was read.
    forgetBaseSnapshots();
    await writeFile(join(base.tree, "slipped-in.txt"), "after the snapshot\n");
    const workspace = await materialiseVerified(base, { method: "copy" });
    cleanups.push(async () => {
      await workspace.dispose();
    });
    const patch = await captureWorkspacePatch(base.tree, workspace);
    expect(patch.files).toBe(1);
    expect(patch.diff).toContain("+after the snapshot");
    forgetBaseSnapshots();
  });

  it.each([
    ["a folder without its record (a maker killed before the move)", undefined],
    ["a record that is not JSON", "{not json"],
    [
      "another base's record",
      JSON.stringify({
        format: "skillsmith-patch-snapshot/1",
        digest: "0".repeat(64),
        tree: "a".repeat(40),
        entries: [],
      }),
    ],
    ["a record of another format", JSON.stringify({ format: "skillsmith-patch-snapshot/9" })],
  ])("a kept snapshot that is not whole is never used: %s", async (_name, record) => {
    const root = await temporaryDirectoryIn(cleanups, "patch-snapshot-");
    const base = await preparedBase(root, await trickyRepository(root));
    forgetBaseSnapshots();
    // Planted where the kept snapshot goes, claiming the base has no files at all: used, every
    // file of the base would show as added.
    const kept = join(base.root, `patch-snapshot-${base.digest.slice(0, 32)}`);
    await mkdir(join(kept, "git"), { recursive: true });
    if (record !== undefined) await writeFile(join(kept, "snapshot.json"), record);
    const workspace = await materialiseVerified(base);
    cleanups.push(async () => {
      await workspace.dispose();
    });
    await writeFile(join(workspace.path, "src", "edit.py"), "x = 5\n");
    const patch = await bothCaptures(base, workspace);
    expect(patch.files).toBe(1);
    expect(patch.diff).toContain("-x = 1\n+x = 5\n");
    forgetBaseSnapshots();
  });

  it.skipIf(bubblewrap === undefined || !isRoot)(
    "a sandboxed agent cannot write into the snapshot (needs bubblewrap and root for the overlay)",
    async () => {
      const sandbox = bubblewrap;
      if (sandbox === undefined) throw new Error("bubblewrap is not usable here");
      const root = await temporaryDirectoryIn(cleanups, "patch-snapshot-");
      const base = await preparedBase(root, await trickyRepository(root));
      const warm = await materialiseVerified(base, { method: "overlay" });
      await bothCaptures(base, warm);
      await warm.dispose();
      const holder = await snapshotHolder(base);
      const snapshot = await contents(holder);

      const workspace = await materialiseVerified(base, { method: "overlay" });
      cleanups.push(async () => {
        await workspace.dispose();
      });
      // The agent knows where the snapshot is (beside its own holder) and overwrites the base's
      // index and every object so that `src/edit.py` would seem unchanged.
      const attack = [
        `for file in $(find ${holder} -type f); do printf poison > "$file" && echo "wrote $file"; done`,
        `printf poison > ${join(holder, "git", "objects", "planted")} && echo planted`,
        "printf 'x = 3\\n' > src/edit.py",
      ].join("; ");
      const result = await sandbox.exec({
        command: ["sh", "-c", attack],
        workspace: workspace.path,
        workspaceMountPath: workspace.mountPath,
        network: "none",
        limits: { timeoutMs: 30_000 },
      });
      expect(result.stdout).not.toContain("wrote");
      expect(result.stdout).not.toContain("planted");
      expect(await contents(holder)).toEqual(snapshot);
      const patch = await bothCaptures(base, workspace);
      expect(patch.files).toBe(1);
      expect(patch.diff).toContain("-x = 1\n+x = 3\n");
    },
  );
});
