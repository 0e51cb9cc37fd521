import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../test/support/temporary.js";
import { InputError } from "../../core/errors.js";
import { readStoredBase } from "./base.js";

const cleanups = cleanupsAfterEach();
let root: string;
beforeEach(async () => {
  root = await temporaryDirectoryIn(cleanups, "skillsmith-base-");
});

describe("readStoredBase", () => {
  it("is undefined until both meta.json and tree/ are there, then reads meta.json", async () => {
    expect(await readStoredBase(root)).toBeUndefined();
    await writeFile(join(root, "meta.json"), `${JSON.stringify({ key: "k1", commit: "c" })}\n`);
    expect(await readStoredBase(root)).toBeUndefined();
    await mkdir(join(root, "tree"));
    expect(await readStoredBase(root)).toMatchObject({ key: "k1", commit: "c" });
  });

  it("refuses a meta.json that is there but unreadable instead of taking it for no base", async () => {
    // As root EACCES cannot be provoked: a folder in meta.json's place gives EISDIR.
    await mkdir(join(root, "meta.json"));
    await mkdir(join(root, "tree"));
    const failure = await readStoredBase(root).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InputError);
    expect((failure as InputError).code).toBe("core.file-unreadable");
    expect((failure as Error).message).toContain(join(root, "meta.json"));
  });
});
