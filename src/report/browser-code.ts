/**
 * The report's browser code as inline scripts. The code lives as TypeScript modules in
 * `report/browser/` (type-checked with the DOM library by `tsconfig.browser.json`, linted by
 * Biome); each entry is bundled by esbuild into one self-contained script, so the report stays a
 * single offline file.
 *
 * Where the bundle comes from: `npm run build` writes `dist/report/browser/<entry>.js` (see
 * `scripts/build-browser.mjs`); run from `src/` (tests, tsx) or from a `dist/` compiled by `tsc`
 * alone, the entry is bundled from its source at first use and kept for the process. esbuild is
 * a development dependency, so an installed package relies on the bundles `npm run build` wrote.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { InternalError } from "../core/errors.js";
import { packageRoot } from "../core/paths.js";

export const BROWSER_ENTRIES = [
  "viewer",
  "router",
  "charts",
  "live",
  "pair-page",
  "waiting",
] as const;
export type BrowserEntry = (typeof BROWSER_ENTRIES)[number];

const here = dirname(fileURLToPath(import.meta.url));
const cache = new Map<BrowserEntry, string>();

/** The entry's bundled script, ready to place inside a `<script>` element. */
export function browserScript(entry: BrowserEntry): string {
  const cached = cache.get(entry);
  if (cached !== undefined) return cached;
  const built = join(here, "browser", `${entry}.js`);
  const script = existsSync(built) ? readFileSync(built, "utf8") : bundleEntry(entry);
  // The script is inlined: a closing tag inside it would end the element early.
  if (/<\/script/i.test(script))
    throw new InternalError("report.browser-script", `browser script ${entry} contains </script`);
  cache.set(entry, script);
  return script;
}

/** Where the entry's TypeScript source is: beside this file (src/), or in the package's src/. */
function sourceOf(entry: BrowserEntry): string {
  const candidates = [
    join(here, "browser", `${entry}.ts`),
    join(packageRoot(), "src", "report", "browser", `${entry}.ts`),
  ];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined)
    throw new InternalError(
      "report.browser-script",
      `the report's browser script ${entry} is not built (no ${join(here, "browser", `${entry}.js`)}) and its source is not here; run \`npm run build\``,
    );
  return found;
}

interface EsbuildLike {
  buildSync(options: Record<string, unknown>): { outputFiles?: { text: string }[] };
}

/** esbuild, loaded only when a bundle has to be made (it is a development dependency). */
function esbuild(): EsbuildLike {
  try {
    return createRequire(import.meta.url)("esbuild") as EsbuildLike;
  } catch (cause) {
    throw new InternalError(
      "report.browser-script",
      "the report's browser scripts are not built and esbuild (a development dependency) is not installed; run `npm run build` in a development checkout",
      { cause },
    );
  }
}

/** Bundle one entry: an IIFE for browsers of 2017 on, no source map, nothing external. */
export function bundleEntry(entry: BrowserEntry): string {
  const result = esbuild().buildSync({
    entryPoints: [sourceOf(entry)],
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2017",
    charset: "ascii",
    legalComments: "none",
    write: false,
    logLevel: "silent",
  });
  const text = result.outputFiles?.[0]?.text;
  if (text === undefined)
    throw new InternalError("report.browser-script", `esbuild wrote no bundle for ${entry}`);
  return text;
}

/** Write every entry's bundle into `directory` (the build step: `dist/report/browser/`). */
export function writeBrowserBundles(directory: string = join(here, "browser")): string[] {
  mkdirSync(directory, { recursive: true });
  return BROWSER_ENTRIES.map((entry) => {
    const path = join(directory, `${entry}.js`);
    writeFileSync(path, bundleEntry(entry));
    return path;
  });
}
