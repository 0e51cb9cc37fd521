import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { MODULE_IMPORTS } from "./support/layers.js";

/**
 * The import direction of ARCHITECTURE.md, enforced. Each module lists the modules it may
 * import from; anything else is a layering violation.
 */
const allowed = MODULE_IMPORTS;

const sourceRoot = resolve(import.meta.dirname, "..", "src");

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((entry) => {
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

describe("architecture", () => {
  it("has a known module for every folder under src/", () => {
    const folders = readdirSync(sourceRoot).filter((entry) =>
      statSync(join(sourceRoot, entry)).isDirectory(),
    );
    expect(folders.filter((folder) => !(folder in allowed))).toEqual([]);
  });

  it("imports only in the documented direction", () => {
    const violations: string[] = [];
    for (const file of sourceFiles(sourceRoot)) {
      const module = relative(sourceRoot, file).split(sep)[0] ?? "";
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(/from\s+["'](\.{1,2}\/[^"']+)["']/g)) {
        const target = resolve(file, "..", match[1] ?? "");
        const targetModule = relative(sourceRoot, target).split(sep)[0] ?? "";
        if (targetModule === module || targetModule.startsWith("..")) continue;
        if (!(allowed[module] ?? []).includes(targetModule)) {
          violations.push(`${relative(sourceRoot, file)} imports ${targetModule}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });
});
