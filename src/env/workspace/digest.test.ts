import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import type { Dirent } from "node:fs";
import {
  chmod,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  symlink,
  writeFile,
} from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../test/support/temporary.js";
import { treeDigest } from "./digest.js";

const cleanups = cleanupsAfterEach();

/**
 * The digest as it was computed before the walk was parallelised: one awaited call at a time.
 * Kept here as the reference, since digests stored in prepared bases were made this way.
 */
async function sequentialDigest(
  root: string,
  exclude?: (path: string) => boolean,
): Promise<string> {
  const hash = createHash("sha256");
  hash.update(`root ${((await lstat(root)).mode & 0o7777).toString(8)}\0`);
  const below = async (directory: string, prefix: string): Promise<void> => {
    const entries: Dirent[] = await readdir(directory, { withFileTypes: true });
    entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    for (const entry of entries) {
      const relativePath = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      if (exclude?.(relativePath) === true) continue;
      const path = join(directory, entry.name);
      const info = await lstat(path);
      const mode = (info.mode & 0o7777).toString(8);
      if (info.isSymbolicLink())
        hash.update(`link ${mode} ${relativePath}\0${await readlink(path)}\0`);
      else if (info.isDirectory()) {
        hash.update(`dir ${mode} ${relativePath}\0`);
        await below(path, relativePath);
      } else if (info.isFile()) {
        const content = await readFile(path);
        hash.update(`file ${mode} ${relativePath} ${content.length}\0`);
        hash.update(content);
      } else hash.update(`special ${mode} ${relativePath}\0`);
    }
  };
  await below(root, "");
  return hash.digest("hex");
}

describe("treeDigest", () => {
  it("hashes the documented byte stream (computed by hand for a two-entry tree)", async () => {
    const root = await temporaryDirectoryIn(cleanups, "digest-");
    await chmod(root, 0o755);
    await mkdir(join(root, "d"), { mode: 0o700 });
    await chmod(join(root, "d"), 0o700);
    await writeFile(join(root, "d", "f"), "xy");
    await chmod(join(root, "d", "f"), 0o640);
    const expected = createHash("sha256")
      .update("root 755\0dir 700 d\0file 640 d/f 2\0xy")
      .digest("hex");
    expect(await treeDigest(root)).toBe(expected);
  });

  it("equals the sequential reference on a tree of every entry kind, with exclusions", async () => {
    const root = await temporaryDirectoryIn(cleanups, "digest-");
    // Names whose code-unit order differs from locale order, nested folders, many files so the
    // read-ahead window is exercised, empty and executable files, links (dangling too), a FIFO.
    for (let index = 0; index < 300; index += 1) {
      const folder = join(root, `p${index % 7}`, `q${index % 3}`);
      await mkdir(folder, { recursive: true });
      await writeFile(join(folder, `f${index}.txt`), "z".repeat((index * 37) % 5000));
    }
    await writeFile(join(root, "B"), "");
    await writeFile(join(root, "a"), "a\n");
    await writeFile(join(root, "_x"), "#!/bin/sh\n");
    await chmod(join(root, "_x"), 0o755);
    await symlink("a", join(root, "link-to-a"));
    await symlink("missing/target", join(root, "dangling"));
    await mkdir(join(root, ".git", "objects"), { recursive: true });
    await writeFile(join(root, ".git", "objects", "pack"), Buffer.from([0, 1, 2, 255]));
    execFileSync("mkfifo", [join(root, "fifo")]);
    expect(await treeDigest(root)).toBe(await sequentialDigest(root));
    const exclude = (path: string) => path === ".git" || path.startsWith("p3/");
    expect(await treeDigest(root, { exclude })).toBe(await sequentialDigest(root, exclude));
    expect(await treeDigest(root, { exclude })).not.toBe(await treeDigest(root));
  });

  it("changes with a file's content, mode or name, and with an added empty folder", async () => {
    const root = await temporaryDirectoryIn(cleanups, "digest-");
    await writeFile(join(root, "file"), "one");
    const digests = [await treeDigest(root)];
    await writeFile(join(root, "file"), "two");
    digests.push(await treeDigest(root));
    await chmod(join(root, "file"), 0o600);
    digests.push(await treeDigest(root));
    await mkdir(join(root, "empty"));
    digests.push(await treeDigest(root));
    expect(new Set(digests).size).toBe(4);
  });
});
