import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InputError } from "../core/errors.js";
import { exportEntry } from "./export.js";
import type { WikiEntry } from "./store.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-export-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** An entry folder with only what export reads before the files it lists. */
async function entryWith(name: string, code: string[], overview: boolean): Promise<WikiEntry> {
  const dir = join(root, name);
  await mkdir(join(dir, "text"), { recursive: true });
  if (overview) await writeFile(join(dir, "text", "overview.md"), "How to do it.\n");
  const meta = {
    skill_name: "Slugify titles",
    skill_id: "a1b2c3d4",
    files: { code, visual: [], text: [] },
  };
  return { dir, meta } as unknown as WikiEntry;
}

async function failure(entry: WikiEntry): Promise<InputError> {
  const error = await exportEntry(entry, join(root, "out")).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof InputError))
    throw new Error(`expected an InputError, got ${String(error)}`);
  return error;
}

describe("exportEntry on a damaged or hostile entry", () => {
  it("names the entry and the file when its overview is missing, instead of a bare ENOENT", async () => {
    const error = await failure(await entryWith("no-overview", [], false));
    expect(error.code).toBe("wiki.entry-file-missing");
    expect(error.message).toContain('entry a1b2c3d4 lists "text/overview.md"');
    expect(error.message).toContain("meta.json");
  });

  it("refuses a listed file outside the entry's folder", async () => {
    const outside = join(root, "secret.txt");
    await writeFile(outside, "not yours\n");
    for (const listed of ["../secret.txt", outside, "code/../../secret.txt"]) {
      const error = await failure(await entryWith(`escape-${listed.length}`, [listed], true));
      expect(error.code, listed).toBe("wiki.entry-file-outside");
    }
  });
});
