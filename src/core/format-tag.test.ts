import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formatTag, upgradeFormatTag } from "./format-tag.js";
import { formatTagSchema, readingOlderTags } from "./format-tag-schema.js";
import { parseResult } from "./parse.js";

const TAG = formatTag("widget", 2);
const widget = z.object({ format: formatTagSchema(TAG), size: z.number() });

describe("formatTag", () => {
  it("spells skillsmith-<kind>/<version>", () => {
    expect(TAG).toBe("skillsmith-widget/2");
  });
});

describe("formatTagSchema", () => {
  it("reads its own tag", () => {
    expect(parseResult(widget, { format: "skillsmith-widget/2", size: 3 })).toEqual({
      ok: true,
      value: { format: "skillsmith-widget/2", size: 3 },
    });
  });

  it.each([
    [{ format: "skillsmith-widget/3", size: 3 }, /from a later skillsmith.*upgrade skillsmith/],
    [{ format: "skillsmith-widget/1", size: 3 }, /no longer read; this skillsmith reads/],
    [{ format: "skillsmith-gadget/2", size: 3 }, /not this kind of skillsmith file/],
    [{ format: 2, size: 3 }, /expected format "skillsmith-widget\/2", found 2/],
    [{ size: 3 }, /found no format field/],
  ])("refuses %j on the format field", (value, message) => {
    const parsed = parseResult(widget, value);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.field).toBe("format");
    expect(parsed.error.message).toMatch(message);
  });
});

describe("readingOlderTags", () => {
  // One schema reading every older style; each case is a file as an older version wrote it.
  const reader = readingOlderTags(widget, TAG, [
    { style: "number", format: 1 },
    { style: "name-and-version", format: "skillsmith-widget", version: 1 },
    { style: "version", version: 1 },
    { style: "none" },
  ]);

  it.each([
    ["a bare number", { format: 1, size: 3 }],
    ["a name and a version", { format: "skillsmith-widget", version: 1, size: 3 }],
    ["a lone version", { version: 1, size: 3 }],
    ["no tag at all", { size: 3 }],
    ["the current tag", { format: "skillsmith-widget/2", size: 3 }],
  ])("reads a file tagged with %s as the current tag", (_style, value) => {
    expect(parseResult(reader, value)).toEqual({
      ok: true,
      value: { format: "skillsmith-widget/2", size: 3 },
    });
  });

  it.each([
    ["a later bare number", { format: 2, size: 3 }],
    ["the name with a later version", { format: "skillsmith-widget", version: 2, size: 3 }],
    ["a later lone version", { version: 2, size: 3 }],
    ["a later tag", { format: "skillsmith-widget/9", size: 3 }],
  ])("still refuses %s", (_style, value) => {
    const parsed = parseResult(reader, value);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.field).toBe("format");
  });

  it("judges the rest of an upgraded file by the schema", () => {
    const parsed = parseResult(reader, { format: 1, size: "big" });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.field).toBe("size");
  });
});

describe("upgradeFormatTag", () => {
  it("leaves values that are not objects, and objects with another tag, as they are", () => {
    expect(upgradeFormatTag([1], TAG, [{ style: "none" }])).toEqual([1]);
    expect(upgradeFormatTag(null, TAG, [{ style: "none" }])).toBeNull();
    const other = { format: "skillsmith-gadget/1" };
    expect(upgradeFormatTag(other, TAG, [{ style: "none" }])).toBe(other);
  });
});
