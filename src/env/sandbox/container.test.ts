import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../test/support/temporary.js";
import { isSkillsmithError } from "../../core/errors.js";
import { readLimitReport } from "./container.js";

const cleanups = cleanupsAfterEach();
let folder: string;
beforeEach(async () => {
  folder = await temporaryDirectoryIn(cleanups, "skillsmith-limit-report-");
});

describe("readLimitReport", () => {
  it("takes the largest OOM and fork-refusal counts, and zeros when there is no report", async () => {
    const report = join(folder, "report");
    expect(await readLimitReport(report)).toEqual({ oomKills: 0, processLimitHits: 0 });
    // Lines as LIMITS_WRAPPER writes them: "<file> <key> <value>", v1 and v2 files mixed.
    await writeFile(
      report,
      [
        "/sys/fs/cgroup/memory/memory.oom_control oom_kill 1",
        "/sys/fs/cgroup/memory.events oom_kill 2",
        "/sys/fs/cgroup/pids.events max 5",
        "/sys/fs/cgroup/memory.events max 9",
      ].join("\n"),
    );
    // By hand: oom_kill lines from memory files give max(1, 2) = 2; "max" only counts from a
    // pids file, so the memory.events "max 9" line is ignored and the hits are 5.
    expect(await readLimitReport(report)).toEqual({ oomKills: 2, processLimitHits: 5 });
  });

  it("fails naming the report when it is there but unreadable, instead of reporting zeros", async () => {
    const report = join(folder, "report");
    await mkdir(report);
    const failure = await readLimitReport(report).catch((error: unknown) => error);
    expect(isSkillsmithError(failure, "infrastructure")).toBe(true);
    expect((failure as Error).message).toContain(report);
  });
});
