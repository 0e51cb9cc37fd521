import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../test/support/temporary.js";
import { LibraryStore, SYNTH_LIBRARY_FORMAT, SYNTH_PATCH_FORMAT } from "./store.js";

const cleanups = cleanupsAfterEach();

// A library and a patch as the release before store formats wrote them: no `format` field.
const olderLibrary = {
  version: "v2",
  input: [{ id: "read-target", text: "Read the instruction first." }],
  output: [{ id: "check-edges", text: "Check the edge cases before answering." }],
};
const olderPatch = {
  number: 1,
  epoch: 1,
  baseVersion: "v1",
  resultVersion: "v2",
  status: "accepted",
  reason: "better on held-out tasks",
  rationale: "shorter slots",
  operations: [],
  diff: "--- v1\n+++ v2",
  createdAt: "2026-11-01T00:00:00.000Z",
};

async function storeWith(files: Record<string, unknown>): Promise<LibraryStore> {
  const directory = await temporaryDirectoryIn(cleanups, "skillsmith-synth-store-");
  for (const [relative, value] of Object.entries(files)) {
    await mkdir(join(directory, relative, ".."), { recursive: true });
    await writeFile(join(directory, relative), JSON.stringify(value));
  }
  return new LibraryStore(directory);
}

describe("LibraryStore formats", () => {
  it("reads a library and a patch written before formats were recorded", async () => {
    const store = await storeWith({
      "libraries/v2.json": olderLibrary,
      "patches/0001.json": olderPatch,
    });
    expect(await store.load("v2")).toEqual(olderLibrary);
    expect(await store.patches()).toEqual([olderPatch]);
  });

  it("reads a library and a patch written with the bare format number", async () => {
    const store = await storeWith({
      "libraries/v2.json": { format: 1, ...olderLibrary },
      "patches/0001.json": { format: 1, ...olderPatch },
    });
    expect(await store.load("v2")).toEqual(olderLibrary);
    expect(await store.patches()).toEqual([olderPatch]);
  });

  it("writes the format into libraries and patches, and reads them back without it", async () => {
    const store = await storeWith({});
    await store.save(olderLibrary);
    const written = JSON.parse(
      await readFile(join(store.directory, "libraries", "v2.json"), "utf8"),
    );
    expect(written.format).toBe("skillsmith-synth-library/1");
    expect(await store.load("v2")).toEqual(olderLibrary);
    const { number: _number, ...record } = olderPatch;
    await store.savePatch(record as Parameters<LibraryStore["savePatch"]>[0]);
    const patch = JSON.parse(await readFile(join(store.directory, "patches", "0001.json"), "utf8"));
    expect(patch.format).toBe("skillsmith-synth-patch/1");
    expect(await store.patches()).toEqual([olderPatch]);
  });

  it("refuses a patch record that does not match its schema, naming the file and field", async () => {
    const store = await storeWith({ "patches/0001.json": { ...olderPatch, status: "maybe" } });
    await expect(store.patches()).rejects.toMatchObject({
      code: "synth.patch-invalid",
      location: { file: join(store.directory, "patches", "0001.json"), field: "status" },
    });
  });

  it("refuses a library of a later format, or a patch as a library, saying so", async () => {
    const cases = [
      [{ ...olderLibrary, format: 2 }, /expected format "skillsmith-synth-library\/1", found 2/],
      [{ ...olderLibrary, format: "skillsmith-synth-library/2" }, /from a later skillsmith/],
      [{ ...olderLibrary, format: SYNTH_PATCH_FORMAT }, /not this kind of skillsmith file/],
    ] as const;
    for (const [stored, message] of cases) {
      const store = await storeWith({ "libraries/v2.json": stored });
      await expect(store.load("v2")).rejects.toMatchObject({
        code: "synth.store-format",
        location: { file: join(store.directory, "libraries", "v2.json"), field: "format" },
        message: expect.stringMatching(message),
      });
    }
    expect(SYNTH_LIBRARY_FORMAT).toBe("skillsmith-synth-library/1");
  });
});

describe("LibraryStore on files it cannot read", () => {
  it("says a stored library is unreadable instead of 'not stored'", async () => {
    const store = await storeWith({});
    await mkdir(join(store.directory, "libraries"), { recursive: true });
    await selfLoopingLink(join(store.directory, "libraries"), "v2.json");
    await expect(store.load("v2")).rejects.toMatchObject({ code: "core.file-unreadable" });
    // A missing one is still "not stored".
    await expect(store.load("v3")).rejects.toMatchObject({ code: "synth.library-missing" });
  });
});
