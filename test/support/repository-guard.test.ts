import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git } from "./git.js";
import { leftFilesMessage, newFiles, untrackedFiles } from "./repository-guard.js";

let checkout: string;
beforeAll(async () => {
  checkout = await mkdtemp(join(tmpdir(), "repository-guard-"));
  await git(checkout, "init", "--quiet");
  await writeFile(join(checkout, ".gitignore"), "test-output/\n");
  await writeFile(join(checkout, "tracked.txt"), "kept\n");
  await git(checkout, "add", ".");
  await git(checkout, "commit", "--quiet", "-m", "start");
});
afterAll(async () => {
  await rm(checkout, { recursive: true, force: true });
});

describe("repository guard", () => {
  it("sees a new empty file at the root and in a folder, but not an ignored or tracked one", async () => {
    const before = await untrackedFiles(checkout);
    expect(before).toEqual(new Set());
    await writeFile(join(checkout, "oom"), "");
    await mkdir(join(checkout, "src"));
    await writeFile(join(checkout, "src", "leak.txt"), "x");
    await mkdir(join(checkout, "test-output"));
    await writeFile(join(checkout, "test-output", "screenshot.png"), "x");
    await writeFile(join(checkout, "tracked.txt"), "changed\n");
    const after = await untrackedFiles(checkout);
    expect(newFiles(before ?? new Set(), after ?? new Set())).toEqual(["oom", "src/leak.txt"]);
  });

  it("reports nothing new when the files were there before the run", () => {
    expect(newFiles(new Set(["oom"]), new Set(["oom"]))).toEqual([]);
  });

  it("has nothing to compare outside a git checkout", async () => {
    const outside = await mkdtemp(join(tmpdir(), "repository-guard-outside-"));
    try {
      // GIT_CEILING_DIRECTORIES is not needed: the temporary folder is not inside a checkout.
      expect(await untrackedFiles(outside)).toBeUndefined();
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("names the files and where the Podman service should be started from", () => {
    const message = leftFilesMessage("/repo", ["oom"]);
    expect(message).toMatch(/^the test run left 1 untracked file\(s\) in \/repo: oom$/m);
    expect(message).toContain("cd / && podman system service");
  });
});
