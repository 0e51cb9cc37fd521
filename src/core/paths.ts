import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { InternalError } from "./errors.js";

let cachedRoot: string | undefined;

/**
 * The folder of the installed skillsmith package (holding `examples/` and `prompts/`). Found by
 * walking up from this file, so it is the same whether we run from `src/` (tests) or `dist/`.
 */
export function packageRoot(): string {
  if (cachedRoot !== undefined) return cachedRoot;
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(directory, "package.json");
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown };
      if (parsed.name === "skillsmith") {
        cachedRoot = directory;
        return directory;
      }
    }
    const parent = dirname(directory);
    if (parent === directory) {
      // Only a bundled or copied-out build lacks its package.json: a packaging bug, not a user's.
      throw new InternalError("core.package-root-missing", "skillsmith package root not found", {
        data: { searchedFrom: dirname(fileURLToPath(import.meta.url)) },
      });
    }
    directory = parent;
  }
}

export function packageVersion(): string {
  const parsed = JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as {
    version?: unknown;
  };
  return typeof parsed.version === "string" ? parsed.version : "0.0.0";
}
