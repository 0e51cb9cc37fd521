import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sweepStaleWorkspaces } from "./materialise.js";

let scratch: string;
beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-sweep-"));
});
afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("sweepStaleWorkspaces", () => {
  it("finds nothing to do where the workspaces folder does not exist yet", async () => {
    expect(await sweepStaleWorkspaces(join(scratch, "workspaces"))).toEqual({
      removed: [],
      failed: [],
    });
  });

  it("reports a workspaces folder it cannot list as failed, not as empty", async () => {
    // A symbolic link to itself: readdir fails with ELOOP (as root, EACCES cannot be provoked).
    const root = join(scratch, "workspaces");
    await symlink("workspaces", root);
    const report = await sweepStaleWorkspaces(root);
    expect(report.removed).toEqual([]);
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0]?.path).toBe(root);
    expect(report.failed[0]?.error).toContain("ELOOP");
  });
});
