import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../test/support/temporary.js";
import { isSkillsmithError } from "./errors.js";
import { pathExists, unlessMissing } from "./fs.js";

const cleanups = cleanupsAfterEach();
// Root reads any file whatever its mode, so a permission test needs another user.
const runsAsRoot = process.getuid?.() === 0;

describe("missing is not unreadable", () => {
  it("answers undefined only for a path that is not there", async () => {
    const directory = await temporaryDirectoryIn(cleanups, "skillsmith-fs-");
    await writeFile(join(directory, "file"), "x");
    expect(await unlessMissing("nothing", readFile(join(directory, "nothing")))).toBeUndefined();
    // ENOTDIR: a path through a file is as absent as a missing one.
    expect(await unlessMissing("x", readFile(join(directory, "file", "below")))).toBeUndefined();
    expect(await pathExists(join(directory, "nothing"))).toBe(false);
    expect(await pathExists(join(directory, "file"))).toBe(true);
  });

  it("turns a path that is there but unreadable into a clear error naming it", async () => {
    const directory = await temporaryDirectoryIn(cleanups, "skillsmith-fs-");
    const loop = await selfLoopingLink(directory, "loop.json");
    const error = await pathExists(loop).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(isSkillsmithError(error) && error.code).toBe("core.file-unreadable");
    expect(String((error as Error).message)).toContain(loop);
    expect(String((error as Error).message)).toContain("ELOOP");
  });

  it.skipIf(runsAsRoot)(
    "reports permission denied (EACCES) as unreadable (needs a non-root user)",
    async () => {
      const directory = await temporaryDirectoryIn(cleanups, "skillsmith-fs-");
      const path = join(directory, "secret.json");
      await writeFile(path, "{}");
      await chmod(path, 0o000);
      await expect(unlessMissing(path, readFile(path))).rejects.toMatchObject({
        code: "core.file-unreadable",
        data: { errno: "EACCES" },
      });
    },
  );
});
