import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../../test/support/temporary.js";
import { folderEntries, folderNames, pathKind } from "./files.js";

const cleanups = cleanupsAfterEach();

describe("pathKind", () => {
  it("tells files, folders and nothing apart; nothing includes a path under a file", async () => {
    const root = await temporaryDirectoryIn(cleanups, "suite-files-");
    await writeFile(join(root, "a.txt"), "a");
    await mkdir(join(root, "folder"));
    expect(await pathKind(join(root, "a.txt"))).toBe("file");
    expect(await pathKind(join(root, "folder"))).toBe("directory");
    expect(await pathKind(join(root, "absent"))).toBe("missing");
    // ENOTDIR: a file on the way means nothing is there either.
    expect(await pathKind(join(root, "a.txt", "inside"))).toBe("missing");
  });

  it("refuses a path that is there but unreadable instead of calling it missing", async () => {
    const root = await temporaryDirectoryIn(cleanups, "suite-files-");
    const loop = await selfLoopingLink(root, "loop");
    await expect(pathKind(loop)).rejects.toMatchObject({
      code: "core.file-unreadable",
      data: { file: loop, errno: "ELOOP" },
    });
  });
});

describe("folderEntries and folderNames", () => {
  it("list nothing for a missing folder and refuse an unreadable one", async () => {
    const root = await temporaryDirectoryIn(cleanups, "suite-files-");
    expect(await folderEntries(join(root, "absent"))).toEqual([]);
    expect(await folderNames(join(root, "absent"))).toEqual([]);
    const loop = await selfLoopingLink(root, "loop");
    await expect(folderEntries(loop)).rejects.toMatchObject({ code: "core.file-unreadable" });
    await expect(folderNames(loop)).rejects.toMatchObject({ code: "core.file-unreadable" });
  });

  it("names entries in natural order (batch2 before batch10)", async () => {
    const root = await temporaryDirectoryIn(cleanups, "suite-files-");
    for (const name of ["batch10", "batch2", "batch1"]) await mkdir(join(root, name));
    expect(await folderNames(root)).toEqual(["batch1", "batch2", "batch10"]);
  });
});
