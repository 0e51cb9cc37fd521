import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../../test/support/temporary.js";
import { sweepStaleWorkspaces } from "./materialise.js";

const cleanups = cleanupsAfterEach();
let scratch: string;
beforeEach(async () => {
  scratch = await temporaryDirectoryIn(cleanups, "skillsmith-sweep-");
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
    const root = await selfLoopingLink(scratch, "workspaces");
    const report = await sweepStaleWorkspaces(root);
    expect(report.removed).toEqual([]);
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0]?.path).toBe(root);
    expect(report.failed[0]?.error).toContain("ELOOP");
  });
});
