import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InputError } from "../../core/errors.js";
import { parseRepositorySource, repositoryName, sourceIdentity } from "./source.js";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-source-"));
  await mkdir(join(scratch, "my-repo"));
  await writeFile(join(scratch, "archive.bundle"), "not really a bundle");
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("repository sources", () => {
  it("takes URLs as they are and paths as folders or bundles", async () => {
    expect(await parseRepositorySource("https://github.com/o/r.git")).toEqual({
      kind: "git-url",
      url: "https://github.com/o/r.git",
    });
    expect(await parseRepositorySource("git@github.com:o/r.git")).toEqual({
      kind: "git-url",
      url: "git@github.com:o/r.git",
    });
    expect(await parseRepositorySource("my-repo", scratch)).toEqual({
      kind: "local-path",
      path: join(scratch, "my-repo"),
    });
    expect(await parseRepositorySource(join(scratch, "archive.bundle"))).toEqual({
      kind: "bundle",
      path: join(scratch, "archive.bundle"),
    });
  });

  it("names a missing path in an input error", async () => {
    const failure = await parseRepositorySource("nowhere", scratch).catch((error) => error);
    expect(failure).toBeInstanceOf(InputError);
    expect((failure as InputError).message).toContain('"nowhere"');
  });

  it("derives a safe single-segment repository name", () => {
    expect(repositoryName({ kind: "git-url", url: "https://github.com/o/r.git" })).toBe("r");
    expect(repositoryName({ kind: "git-url", url: "https://github.com/o/r/" })).toBe("r");
    expect(repositoryName({ kind: "git-url", url: "git@github.com:owner/tool.git" })).toBe("tool");
    expect(repositoryName({ kind: "bundle", path: "/x/snap.bundle" })).toBe("snap");
    expect(repositoryName({ kind: "local-path", path: "/x/we ird:name" })).toBe("we-ird-name");
    expect(repositoryName({ kind: "local-path", path: "/x/..." })).toBe("repository");
  });

  it("gives different identities to different kinds at the same place", () => {
    expect(sourceIdentity({ kind: "git-url", url: "file:///x/r/" })).toBe("git-url:file:///x/r");
    expect(sourceIdentity({ kind: "local-path", path: "/x/r" })).not.toBe(
      sourceIdentity({ kind: "bundle", path: "/x/r" }),
    );
  });

  it("tells a path that is not there from one that is there but unreadable", async () => {
    const absent = await parseRepositorySource("no-such-repo", scratch).catch((error) => error);
    expect(absent).toBeInstanceOf(InputError);
    expect((absent as InputError).code).toBe("env.repository-not-found");
    // A symbolic link to itself: stat fails with ELOOP, which is not "missing" (as root, EACCES
    // cannot be provoked). Before, this too was reported as "neither a URL nor a path".
    await symlink("loop", join(scratch, "loop"));
    const unreadable = await parseRepositorySource("loop", scratch).catch((error) => error);
    expect(unreadable).toBeInstanceOf(InputError);
    expect((unreadable as InputError).code).toBe("core.file-unreadable");
    expect((unreadable as Error).message).toContain(join(scratch, "loop"));
    expect((unreadable as Error).message).toContain("ELOOP");
  });
});
