import { describe, expect, it } from "vitest";
import { naturalCompare, repositoryName } from "./load.js";

describe("naturalCompare", () => {
  it("orders batch names by number and other text by code point", () => {
    const names = ["batch10", "batch2", "batch1", "test_outputs.py", "test.sh", "batch1a"];
    expect([...names].sort(naturalCompare)).toEqual([
      "batch1",
      "batch1a",
      "batch2",
      "batch10",
      "test.sh",
      "test_outputs.py",
    ]);
  });
});

describe("repositoryName", () => {
  it.each([
    ["https://github.com/encode/httpx", "httpx"],
    ["https://github.com/encode/httpx.git", "httpx"],
    ["git@github.com:encode/httpx.git", "httpx"],
    ["file:///srv/repos/pyfolio/", "pyfolio"],
    ["../bundles/app.bundle", "app"],
  ])("%s → %s", (location, name) => {
    expect(repositoryName(location)).toBe(name);
  });
});
