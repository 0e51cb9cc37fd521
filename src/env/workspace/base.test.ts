import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InputError } from "../../core/errors.js";
import { readStoredBase } from "./base.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-base-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
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
    expect((failure as InputError).code).toBe("file.unreadable");
    expect((failure as Error).message).toContain(join(root, "meta.json"));
  });
});
