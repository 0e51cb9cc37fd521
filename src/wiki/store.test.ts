import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../test/support/temporary.js";
import { defaultThresholds } from "./meta.js";
import { matchIdPrefix, readWikiManifest } from "./store.js";

const cleanups = cleanupsAfterEach();

describe("reading a wiki that cannot be read", () => {
  it("reports an unreadable wiki.json as unreadable, not as 'not a wiki'", async () => {
    const wiki = await temporaryDirectoryIn(cleanups, "skillsmith-wiki-unreadable-");
    await selfLoopingLink(wiki, "wiki.json");
    await expect(readWikiManifest(wiki)).rejects.toMatchObject({ code: "core.file-unreadable" });
  });
});

describe("wiki.json of other versions", () => {
  it("reads a format-1 manifest written before the later thresholds existed, with their defaults", async () => {
    const wiki = await temporaryDirectoryIn(cleanups, "skillsmith-wiki-older-");
    // The thresholds of the first format-1 builds: the later fields (viewport, shortlist, online,
    // video, card size) are absent, as in wikis built by the previous releases.
    const first = {
      min_text_chars: defaultThresholds.min_text_chars,
      max_tags: defaultThresholds.max_tags,
      exec_timeout_ms: defaultThresholds.exec_timeout_ms,
      exec_memory_bytes: defaultThresholds.exec_memory_bytes,
      shortlist_k: defaultThresholds.shortlist_k,
      select_max: defaultThresholds.select_max,
      bm25_k1: defaultThresholds.bm25_k1,
      bm25_b: defaultThresholds.bm25_b,
    };
    const older = { format: 1, created: "2026-10-01T00:00:00.000Z", skill_id_encoding: "x" };
    await writeFile(join(wiki, "wiki.json"), JSON.stringify({ ...older, thresholds: first }));
    const manifest = await readWikiManifest(wiki);
    expect(manifest.thresholds.render_viewport_width).toBe(1280);
    expect(manifest.thresholds.shortlist_size).toBe("k");
    expect(manifest.thresholds.min_text_chars).toBe(first.min_text_chars);
  });

  it("refuses a manifest of a later format with a message saying so", async () => {
    const wiki = await temporaryDirectoryIn(cleanups, "skillsmith-wiki-newer-");
    await writeFile(join(wiki, "wiki.json"), JSON.stringify({ format: 2, created: "x" }));
    await expect(readWikiManifest(wiki)).rejects.toMatchObject({
      code: "wiki.file-format",
      message: expect.stringContaining("reads format 1"),
    });
  });
});

describe("skill ids and id prefixes", () => {
  const first = `abcd${"1".repeat(36)}`;
  const second = `abcd${"2".repeat(36)}`;
  const third = `ef01${"3".repeat(36)}`;
  const ids = [first, second, third];

  it("takes a full id, a unique prefix of any length from 4 digits, in any case", () => {
    expect(matchIdPrefix(ids, first)).toEqual({ kind: "one", id: first });
    expect(matchIdPrefix(ids, "ef01")).toEqual({ kind: "one", id: third });
    expect(matchIdPrefix(ids, first.slice(0, 12).toUpperCase())).toEqual({
      kind: "one",
      id: first,
    });
  });

  it("names every id an ambiguous prefix matches, and refuses what is no id", () => {
    expect(matchIdPrefix(ids, "abcd")).toEqual({ kind: "ambiguous", ids: [first, second] });
    expect(matchIdPrefix(ids, "abc").kind).toBe("invalid");
    expect(matchIdPrefix(ids, "../etc").kind).toBe("invalid");
    expect(matchIdPrefix(ids, `${first}0`).kind).toBe("invalid");
    expect(matchIdPrefix(ids, "9999")).toEqual({ kind: "none" });
  });
});
