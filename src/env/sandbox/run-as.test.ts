import { lstat, mkdir, mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { handOver, isRootUser, numericUser } from "./run-as.js";

describe("the user a container runs as", () => {
  it("knows every spelling of root, and the engine's default (empty) as root", () => {
    for (const user of [undefined, "", "root", "0", "0:0", "root:root", " root "]) {
      expect(isRootUser(user)).toBe(true);
    }
    for (const user of ["app", "1000", "1000:1000", "nobody"]) {
      expect(isRootUser(user)).toBe(false);
    }
  });

  it("reads uid:gid written with numbers, and leaves a name or a bare uid to the image", () => {
    expect(numericUser("1234:5678")).toEqual({ uid: 1234, gid: 5678 });
    expect(numericUser("1234")).toBeUndefined();
    expect(numericUser("app")).toBeUndefined();
    expect(numericUser("12ab:1")).toBeUndefined();
  });
});

const asRoot = process.getuid?.() === 0;

describe.skipIf(!asRoot)("handing our folders to the image's user (needs root)", () => {
  let scratch: string;
  beforeEach(async () => {
    scratch = await mkdtemp(join(tmpdir(), "skillsmith-run-as-"));
  });
  afterEach(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it("gives the folder and everything in it to the user", async () => {
    const folder = join(scratch, "workspace");
    await mkdir(join(folder, "sub"), { recursive: true });
    await writeFile(join(folder, "sub", "file.txt"), "x");
    await handOver(folder, { uid: 4321, gid: 4322 });
    for (const path of [folder, join(folder, "sub"), join(folder, "sub", "file.txt")]) {
      const stats = await stat(path);
      expect([stats.uid, stats.gid]).toEqual([4321, 4322]);
    }
  });

  it("a symbolic link the workload left never hands over what it points to", async () => {
    // The attack: a previous container left `workspace/escape -> <host file>`; following it
    // would give a host file (here one of ours, owned by root) to the container's user.
    const secret = join(scratch, "host-secret");
    await writeFile(secret, "do not hand me over");
    const folder = join(scratch, "workspace");
    await mkdir(folder);
    await symlink(secret, join(folder, "escape"));
    await symlink(scratch, join(folder, "escape-folder"));
    await handOver(folder, { uid: 4321, gid: 4322 });
    expect((await stat(secret)).uid).toBe(0);
    expect((await stat(scratch)).uid).toBe(0);
    // The link itself may change hands (lchown); its target does not.
    expect((await lstat(join(folder, "escape"))).isSymbolicLink()).toBe(true);
  });
});
