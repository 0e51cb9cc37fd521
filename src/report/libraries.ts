/**
 * The chart libraries inlined into the HTML report, read from the installed packages so the
 * report opens with no network and always matches the versions in the lockfile. They are
 * optional peer dependencies: only rendering a report needs them.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { InternalError } from "../core/errors.js";
import { assertInstalled, resolveOptional } from "../core/optional.js";

export interface InlineLibrary {
  readonly name: string;
  readonly version: string;
  readonly source: string;
}

/** Load order matters: vega-lite needs the `vega` global, vega-embed needs both. */
export const CHART_LIBRARIES = ["vega", "vega-lite", "vega-embed"] as const;

const CHARTS_FEATURE = "the HTML report's charts";
let cached: readonly InlineLibrary[] | undefined;

/**
 * vega-embed's `exports` map hides its `build/` folder from `require.resolve`, so we resolve the
 * package's entry point and walk up to the folder whose package.json carries its name.
 */
function packageFolder(name: string): string {
  let directory = dirname(resolveOptional(name, CHARTS_FEATURE));
  for (;;) {
    const manifest = join(directory, "package.json");
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown };
      // vega-lite ships a nested build/package.json under the same name: require the build too.
      if (parsed.name === name && existsSync(join(directory, "build", `${name}.min.js`)))
        return directory;
    }
    const parent = dirname(directory);
    if (parent === directory) {
      throw new InternalError(
        "report.report-library-missing",
        `the chart library ${name} is not installed (run \`npm ci\`)`,
      );
    }
    directory = parent;
  }
}

/** The minified browser builds of Vega, Vega-Lite and vega-embed, in load order. */
export function chartLibraries(): readonly InlineLibrary[] {
  if (cached !== undefined) return cached;
  assertInstalled(CHART_LIBRARIES, CHARTS_FEATURE);
  cached = CHART_LIBRARIES.map((name) => {
    const folder = packageFolder(name);
    const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as {
      version?: unknown;
    };
    return {
      name,
      version: typeof manifest.version === "string" ? manifest.version : "unknown",
      source: readFileSync(join(folder, "build", `${name}.min.js`), "utf8"),
    };
  });
  return cached;
}
