import { describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../../test/support/temporary.js";
import { reportRunDir } from "./load.js";

const cleanups = cleanupsAfterEach();

describe("reportRunDir", () => {
  it("says a folder without results.sqlite is not a run directory", async () => {
    const runDir = await temporaryDirectoryIn(cleanups, "report-load-");
    await expect(reportRunDir(runDir)).rejects.toMatchObject({ code: "bench.report-no-results" });
  });

  it("refuses a results.sqlite that is there but unreadable, naming it", async () => {
    const runDir = await temporaryDirectoryIn(cleanups, "report-load-");
    const loop = await selfLoopingLink(runDir, "results.sqlite");
    await expect(reportRunDir(runDir)).rejects.toMatchObject({
      code: "core.file-unreadable",
      data: { file: loop },
    });
  });
});
