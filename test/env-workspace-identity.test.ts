/**
 * A fresh workspace's digest without a walk per run (src/env/workspace/identity.ts): every claim
 * is checked against `treeDigest` of the workspace itself, and the attacks on the shortcut — a
 * base changed in the cache after preparation, skill folders planted in a base whose recorded
 * digest was rewritten to match — are shown to be caught.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { treeDigest } from "../src/env/workspace/digest.js";
import {
  freshWorkspaceDigest,
  materialiseVerified,
  verifyBase,
} from "../src/env/workspace/identity.js";
import type { MaterialiseMethod } from "../src/env/workspace/materialise.js";
import { type PreparedBase, prepareBase } from "../src/env/workspace/prepare.js";
import { gitSync as git } from "./support/git.js";

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
