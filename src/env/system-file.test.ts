import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../test/support/temporary.js";
import { isSkillsmithError } from "../core/errors.js";
import { readSystemFile, readSystemFileSync } from "./system-file.js";

const cleanups = cleanupsAfterEach();
let folder: string;
beforeEach(async () => {
  folder = await temporaryDirectoryIn(cleanups, "skillsmith-system-file-");
});

describe("readSystemFile", () => {
  it("reads a file, and says undefined for a missing one or one under a non-folder", async () => {
    await writeFile(join(folder, "present"), "oom_kill 2\n");
    expect(await readSystemFile(join(folder, "present"))).toBe("oom_kill 2\n");
    expect(readSystemFileSync(join(folder, "present"))).toBe("oom_kill 2\n");
    expect(await readSystemFile(join(folder, "absent"))).toBeUndefined();
    expect(readSystemFileSync(join(folder, "present", "below"))).toBeUndefined();
  });

  it("raises an infrastructure error naming the file when it is there but unreadable", async () => {
    // Tests run as root, so EACCES cannot be provoked: a folder where a file is expected gives
    // EISDIR, which is neither ENOENT nor ENOTDIR.
    const path = join(folder, "memory.events");
    await mkdir(path);
    const failure = await readSystemFile(path).catch((error: unknown) => error);
    expect(isSkillsmithError(failure, "infrastructure")).toBe(true);
    expect((failure as Error).message).toContain(path);
    expect((failure as Error).message).toContain("EISDIR");
    expect(() => readSystemFileSync(path)).toThrow(path);
  });
});
