/**
 * Shallow repositories are real input: a user's `git clone --depth 1`, a bundle made from one, and
 * the two depth-1 bundles of ../shared/fixtures/repos (celery, MCP servers) that `git clone`
 * refuses ("remote did not send all necessary objects"). Each is prepared as a base at its pinned
 * commit, and suite validation's commit check finds (or misses) commits in them.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommitChecker } from "../src/bench/suite/commits.js";
import type { SuiteRepository } from "../src/bench/suite/types.js";
import { prepareBase } from "../src/env/workspace/prepare.js";
import { gitSync as git } from "./support/git.js";

const repos = resolve(import.meta.dirname, "..", "..", "shared", "fixtures", "repos");
const celeryBundle = join(repos, "celery-celery.bundle");
const celeryCommit = "c38600d429eb0d457ce57ae4ec6b52fe9e40a28d";

/** A suite repository read from a bundle, as the suite loader makes one. */
function fromBundle(path: string, commit: string): SuiteRepository {
  return {
    source: { kind: "bundle", path },
    commit,
    name: "repo",
    setup: [],
    setupChoice: { kind: "none" },
    mountPath: "/workspace/repo",
  };
}

let scratch: string;
let shallowClone: string;
let shallowBundle: string;
let head: string;
let older: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-shallow-"));
  const origin = join(scratch, "origin");
  await mkdir(origin);
  git(origin, "init", "-q", "-b", "main");
  for (const version of [1, 2, 3]) {
    await writeFile(join(origin, "app.py"), `VERSION = ${version}\n`);
    git(origin, "add", "-A");
    git(origin, "commit", "-q", "-m", `version ${version}`);
    if (version === 2) older = git(origin, "rev-parse", "HEAD");
  }
  head = git(origin, "rev-parse", "HEAD");
  shallowClone = join(scratch, "shallow");
  git(scratch, "clone", "-q", "--depth", "1", `file://${origin}`, shallowClone);
  shallowBundle = join(scratch, "shallow.bundle");
  git(shallowClone, "bundle", "create", shallowBundle, "--all");
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("shallow repositories", () => {
  it("the depth-1 bundle is one git clone refuses (so the fallback is what is tested)", () => {
    expect(() => git(scratch, "clone", "-q", "--no-checkout", shallowBundle, "refused")).toThrow(
      /necessary objects|traverse parents/,
    );
  });

  it("prepares a base from a depth-1 bundle and from a shallow clone at the pinned commit", async () => {
    const cacheDir = join(scratch, "cache");
    for (const source of [shallowBundle, shallowClone]) {
      const base = await prepareBase({ source, commit: head, cacheDir, setup: { kind: "none" } });
      expect(base.commit).toBe(head);
      expect(await readFile(join(base.tree, "app.py"), "utf8")).toBe("VERSION = 3\n");
      // The history is the one commit the bundle holds, not a broken walk.
      expect(git(base.tree, "rev-list", "--count", "HEAD")).toBe("1");
    }
  });

  it("names a commit the shallow bundle does not hold as missing, not as an unreadable bundle", async () => {
    await expect(
      prepareBase({ source: shallowBundle, commit: older, cacheDir: join(scratch, "cache-2") }),
    ).rejects.toThrow(/does not exist in repository/);
    const checker = new CommitChecker();
    try {
      expect(await checker.check(fromBundle(shallowBundle, head))).toEqual({ status: "present" });
      expect((await checker.check(fromBundle(shallowBundle, older))).status).toBe("missing");
    } finally {
      await checker.close();
    }
  });

  it("finds the pinned commit in a user's shallow clone taken as a folder (`--repo-root`, `repository.path`), and names one it lacks as missing", async () => {
    const checker = new CommitChecker();
    const fromFolder = (commit: string): SuiteRepository => ({
      ...fromBundle(shallowClone, commit),
      source: { kind: "path", path: shallowClone },
    });
    try {
      expect(await checker.check(fromFolder(head))).toEqual({ status: "present" });
      const missing = await checker.check(fromFolder(older));
      expect(missing.status).toBe("missing");
      // The fix it names fits a shallow clone: a fuller clone holds the commit.
      expect(missing.status === "missing" && missing.message).toMatch(
        new RegExp(`commit ${older} does not exist in repository ${shallowClone}.*a fuller clone`),
      );
    } finally {
      await checker.close();
    }
  });

  it.skipIf(!existsSync(celeryBundle))(
    "prepares the shared celery depth-1 bundle at its pinned commit (needs ../shared/fixtures/repos)",
    async () => {
      const base = await prepareBase({
        source: celeryBundle,
        commit: celeryCommit,
        cacheDir: join(scratch, "cache-celery"),
        setup: { kind: "none" },
      });
      expect(base.commit).toBe(celeryCommit);
      expect(existsSync(join(base.tree, "celery", "app", "task.py"))).toBe(true);
      const checker = new CommitChecker();
      try {
        expect(await checker.check(fromBundle(celeryBundle, celeryCommit))).toEqual({
          status: "present",
        });
      } finally {
        await checker.close();
      }
    },
    120_000,
  );
});
