/**
 * A fresh workspace's digest without a walk per run (src/env/workspace/identity.ts): every claim
 * is checked against `treeDigest` of the workspace itself, and the attacks on the shortcut — a
 * base changed in the cache after preparation, skill folders planted in a base whose recorded
 * digest was rewritten to match — are shown to be caught.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { treeDigest } from "../src/env/workspace/digest.js";
import {
  checkBase,
  forgetVerifiedBases,
  freshWorkspaceDigest,
  materialiseVerified,
  STAMP_FILE,
  verifyBase,
} from "../src/env/workspace/identity.js";
import type { MaterialiseMethod } from "../src/env/workspace/materialise.js";
import { type PreparedBase, prepareBase } from "../src/env/workspace/prepare.js";
import { gitSync as git } from "./support/git.js";

// Every file read by `readFileSync` (the digest walk's only way to read content), so a test can
// count what a check read; tests run as root here, so an unreadable file proves nothing.
const filesRead = vi.hoisted(() => [] as string[]);
vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs")>();
  const readFileSync = ((...parameters: Parameters<typeof actual.readFileSync>) => {
    filesRead.push(String(parameters[0]));
    return actual.readFileSync(...parameters);
  }) as typeof actual.readFileSync;
  return { ...actual, default: { ...actual, readFileSync }, readFileSync };
});

const isRoot = process.getuid?.() === 0;
let scratch: string;
let repository: string;
let commit: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-identity-"));
  repository = join(scratch, "repo");
  await mkdir(join(repository, "src"), { recursive: true });
  git(repository, "init", "-q", "-b", "main");
  await writeFile(join(repository, "src", "app.py"), "VERSION = 1\n");
  await writeFile(join(repository, "run.sh"), "#!/bin/sh\necho run\n", { mode: 0o755 });
  // Decoys: a folder named skills outside any agent folder is not a skill folder.
  await mkdir(join(repository, "docs", "skills"), { recursive: true });
  await writeFile(join(repository, "docs", "skills", "index.md"), "docs\n");
  git(repository, "add", "-A");
  git(repository, "commit", "-q", "-m", "first");
  commit = git(repository, "rev-parse", "HEAD");
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function freshBase(): Promise<PreparedBase> {
  const cacheDir = await mkdtemp(join(scratch, "cache-"));
  return prepareBase({ source: repository, commit, cacheDir });
}

const methods: MaterialiseMethod[] = isRoot ? ["overlay", "copy"] : ["copy"];

describe("fresh workspace identity", () => {
  it.each(methods)("equals the workspace's own tree digest (%s)", async (method) => {
    const base = await freshBase();
    for (let run = 0; run < 2; run += 1) {
      const workspace = await materialiseVerified(base, { method });
      try {
        expect(workspace.removedSkillFolders).toEqual([]);
        expect(await freshWorkspaceDigest(workspace)).toBe(await treeDigest(workspace.path));
      } finally {
        await workspace.dispose();
      }
    }
    expect((await verifyBase(base)).mayHoldSkillFolders).toBe(false);
  });

  it("refuses a base changed in the cache after preparation, and looks again next time", async () => {
    const base = await freshBase();
    const app = join(base.tree, "src", "app.py");
    await writeFile(app, "VERSION = 'tampered'\n");
    await expect(materialiseVerified(base)).rejects.toMatchObject({ code: "env.base-changed" });
    await writeFile(app, "VERSION = 1\n");
    const workspace = await materialiseVerified(base);
    try {
      expect(await freshWorkspaceDigest(workspace)).toBe(base.digest);
    } finally {
      await workspace.dispose();
    }
  });

  it("still removes skill folders planted in a base whose recorded digest was rewritten to match", async () => {
    const prepared = await freshBase();
    for (const folder of [".claude/skills/planted", "pkg/.cursor/skills/nested"]) {
      await mkdir(join(prepared.tree, folder), { recursive: true });
      await writeFile(join(prepared.tree, folder, "SKILL.md"), "---\nname: planted\n---\n");
    }
    // The attacker (or a base prepared by an older version) makes the record agree.
    const base: PreparedBase = { ...prepared, digest: await treeDigest(prepared.tree) };
    expect((await verifyBase(base)).mayHoldSkillFolders).toBe(true);
    const workspace = await materialiseVerified(base);
    try {
      expect(
        workspace.removedSkillFolders.map((path) => path.slice(workspace.path.length)),
      ).toEqual(["/.claude/skills", "/pkg/.cursor/skills"]);
      expect(existsSync(join(workspace.path, ".claude", "skills"))).toBe(false);
      const digest = await freshWorkspaceDigest(workspace);
      expect(digest).toBe(await treeDigest(workspace.path));
      expect(digest).not.toBe(base.digest);
    } finally {
      await workspace.dispose();
    }
  });
});

describe("verification stamp", () => {
  /**
   * A base whose entries are all older than the racy margin given to the first check, so that
   * check stamps it; any change made afterwards gets a later ctime than the one stamped.
   */
  async function stampedBase(): Promise<PreparedBase> {
    const base = await freshBase();
    await sleep(60);
    expect((await checkBase(base, { racyMarginMs: 30 })).source).toBe("walk");
    expect(existsSync(join(base.root, STAMP_FILE))).toBe(true);
    return base;
  }

  function readsUnder(tree: string): number {
    return filesRead.filter((path) => path.startsWith(`${tree}/`)).length;
  }

  it("answers a later check from the stamp without reading a file", async () => {
    const base = await stampedBase();
    const walked = await checkBase(base);
    expect(walked).toEqual({ digest: base.digest, mayHoldSkillFolders: false, source: "stamp" });

    // The first walk read every file of the tree; a new process (a cleared memo) reads none.
    filesRead.length = 0;
    forgetVerifiedBases();
    expect(await verifyBase(base)).toEqual({ digest: base.digest, mayHoldSkillFolders: false });
    expect(readsUnder(base.tree)).toBe(0);

    await rm(join(base.root, STAMP_FILE));
    forgetVerifiedBases();
    filesRead.length = 0;
    expect(await verifyBase(base)).toEqual({ digest: base.digest, mayHoldSkillFolders: false });
    // app.py, run.sh, docs/skills/index.md and every file of .git.
    expect(readsUnder(base.tree)).toBeGreaterThan(3);
  });

  it("does not stamp entries changed within the racy margin", async () => {
    const base = await freshBase();
    expect((await checkBase(base)).source).toBe("walk");
    expect((await checkBase(base)).source).toBe("walk");
    expect(existsSync(join(base.root, STAMP_FILE))).toBe(false);
  });

  it("catches content rewritten at the same size with mtime put back (ctime moves)", async () => {
    const base = await stampedBase();
    const app = join(base.tree, "src", "app.py");
    const before = await stat(app, { bigint: true });
    // `touch -r` copies times to the nanosecond (Node's utimes takes a double of seconds).
    const reference = join(scratch, `times-${process.hrtime.bigint()}`);
    await writeFile(reference, "");
    execFileSync("touch", ["-r", app, reference]);
    await writeFile(app, "VERSION = 2\n");
    execFileSync("touch", ["-r", reference, app]);
    const after = await stat(app, { bigint: true });
    expect([after.size, after.mtimeNs, after.ino]).toEqual([
      before.size,
      before.mtimeNs,
      before.ino,
    ]);
    expect(after.ctimeNs).not.toBe(before.ctimeNs);
    await expect(checkBase(base)).rejects.toMatchObject({ code: "env.base-changed" });
  });

  it.each([
    ["a file added", (tree: string) => writeFile(join(tree, "src", "extra.py"), "")],
    ["a file removed", (tree: string) => rm(join(tree, "run.sh"))],
    ["a mode changed", (tree: string) => chmod(join(tree, "src", "app.py"), 0o600)],
  ])("catches %s", async (_change, change) => {
    const base = await stampedBase();
    await change(base.tree);
    await expect(checkBase(base)).rejects.toMatchObject({ code: "env.base-changed" });
  });

  it("walks again after a metadata-only change, and stamps the tree anew", async () => {
    const base = await stampedBase();
    const app = join(base.tree, "src", "app.py");
    await writeFile(app, await readFile(app));
    await sleep(60);
    expect(await checkBase(base, { racyMarginMs: 30 })).toMatchObject({ source: "walk" });
    expect(await checkBase(base)).toMatchObject({ digest: base.digest, source: "stamp" });
  });

  // Each damages the real stamp, which would otherwise match the tree entry for entry.
  it.each([
    ["not JSON", (text: string) => text.slice(0, text.length / 2)],
    [
      "another version",
      (text: string) => text.replace("skillsmith-base-stamp/1", "skillsmith-base-stamp/0"),
    ],
    [
      "without its entries",
      (text: string) => JSON.stringify({ ...JSON.parse(text), entries: undefined }),
    ],
  ])("takes a stamp that is %s for none: a full walk, no error", async (_kind, damage) => {
    const base = await stampedBase();
    const stampPath = join(base.root, STAMP_FILE);
    const damaged = damage(await readFile(stampPath, "utf8"));
    expect(damaged).not.toBe(await readFile(stampPath, "utf8"));
    await writeFile(stampPath, damaged);
    expect(await checkBase(base, { racyMarginMs: 30 })).toEqual({
      digest: base.digest,
      mayHoldSkillFolders: false,
      source: "walk",
    });
    expect((await checkBase(base)).source).toBe("stamp");
  });

  it("does not trust a stamp of another digest", async () => {
    const base = await stampedBase();
    const rewritten: PreparedBase = { ...base, digest: "0".repeat(64) };
    await expect(checkBase(rewritten)).rejects.toMatchObject({ code: "env.base-changed" });
  });
});
