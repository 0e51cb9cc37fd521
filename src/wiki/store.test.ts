import { describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../test/support/temporary.js";
import { readWikiManifest } from "./store.js";

const cleanups = cleanupsAfterEach();

describe("reading a wiki that cannot be read", () => {
  it("reports an unreadable wiki.json as unreadable, not as 'not a wiki'", async () => {
    const wiki = await temporaryDirectoryIn(cleanups, "skillsmith-wiki-unreadable-");
    await selfLoopingLink(wiki, "wiki.json");
    await expect(readWikiManifest(wiki)).rejects.toMatchObject({ code: "file.unreadable" });
  });
});
