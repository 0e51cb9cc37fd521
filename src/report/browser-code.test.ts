import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../test/support/temporary.js";
import { BROWSER_ENTRIES, browserScript, writeBrowserBundles } from "./browser-code.js";

const cleanups = cleanupsAfterEach();

describe("the report's browser code", () => {
  it("bundles every entry into a classic script that can sit inside a <script> element", () => {
    for (const entry of BROWSER_ENTRIES) {
      const script = browserScript(entry);
      // new Function parses the text as a classic script body: import/export would not parse.
      expect(() => new Function(script), entry).not.toThrow();
      expect(script, entry).not.toMatch(/<\/script/i);
      // Bundled, not loaded: the page fetches nothing, so no module specifier may remain.
      expect(script, entry).not.toMatch(/\bfrom\s+["']\.{1,2}\//);
    }
    // The viewer's public surface, which the router and the dashboard page call.
    expect(browserScript("viewer")).toContain("window.skillsmithViewer = { render, missing }");
  });

  it("writes for the build the same scripts it bundles at first use", async () => {
    const directory = await temporaryDirectoryIn(cleanups, "skillsmith-browser-");
    const written = writeBrowserBundles(directory);
    expect(written).toEqual(BROWSER_ENTRIES.map((entry) => join(directory, `${entry}.js`)));
    for (const entry of BROWSER_ENTRIES)
      expect(await readFile(join(directory, `${entry}.js`), "utf8")).toBe(browserScript(entry));
  });
});
