import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../../test/support/temporary.js";
import { mountedAt, sweepStaleWorkspaces } from "./materialise.js";

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

describe("mountedAt", () => {
  // Lines as Linux writes them (proc(5)): the mount point is the fifth field, octal-escaped.
  const mountinfo = [
    "22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
    "731 22 0:61 / /tmp/skillsmith\\040ws/run-1 rw,relatime shared:400 - overlay overlay rw,lowerdir=/b,upperdir=/u,workdir=/w",
    "",
  ].join("\n");

  it("finds a mount point, unescaping a space in its path", () => {
    expect(mountedAt(mountinfo, "/tmp/skillsmith ws/run-1")).toBe(true);
    expect(mountedAt(mountinfo, "/")).toBe(true);
  });

  it("says a path whose overlay is gone is not mounted, nor a prefix or a parent of one", () => {
    expect(mountedAt(mountinfo, "/tmp/skillsmith ws/run-2")).toBe(false);
    expect(mountedAt(mountinfo, "/tmp/skillsmith ws")).toBe(false);
    expect(mountedAt(mountinfo, "/tmp/skillsmith\\040ws/run-1")).toBe(false);
  });
});
