/**
 * Packages only some features need (the container client, the queue, the Chromium driver, the
 * chart libraries, the tree-sitter grammars, the MCP server, the HTML article reader). They are
 * optional peer dependencies: someone who imports skillsmith to validate a skill or run its
 * statistics does not install them. Every feature loads its package through this module, so a
 * missing one is always the same typed error naming the package, the feature and the command.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { InfrastructureError } from "./errors.js";

const requireFromCore = createRequire(import.meta.url);

/** The package a specifier belongs to: `@scope/name/sub/path` → `@scope/name`. */
export function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

/** The range skillsmith's package.json asks for (`peerDependencies`), when it names the package. */
function wantedRange(name: string): string | undefined {
  try {
    // src/core and dist/core both sit two folders below the package root.
    const manifest = requireFromCore("../../package.json") as {
      peerDependencies?: Record<string, string>;
    };
    return manifest.peerDependencies?.[name];
  } catch {
    // The manifest only sharpens the install command; without it the command names no range.
    return undefined;
  }
}

/** Optional packages a feature needs are not installed. */
export class DependencyMissingError extends InfrastructureError {
  readonly packageNames: readonly string[];
  readonly feature: string;

  constructor(packageNames: readonly string[], feature: string, cause?: unknown) {
    const install = `npm install ${packageNames
      .map((name) => {
        const range = wantedRange(name);
        return range === undefined ? name : `${name}@"${range}"`;
      })
      .join(" ")}`;
    const names =
      packageNames.length < 2
        ? packageNames.join("")
        : `${packageNames.slice(0, -1).join(", ")} and ${packageNames.at(-1)}`;
    super("core.dependency-missing", `install ${names} to use ${feature} (${install})`, {
      cause,
      data: { packages: packageNames, feature, install },
    });
    this.packageNames = packageNames;
    this.feature = feature;
  }
}

/**
 * Whether `error` says that `name` (or a file of it) cannot be found, not a package it depends on
 * (a broken install, which stays what it is; so does a missing file of an installed package).
 */
export function isPackageMissing(error: unknown, name: string): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== "MODULE_NOT_FOUND" && code !== "ERR_MODULE_NOT_FOUND") return false;
  if (typeof message !== "string") return false;
  // require: "Cannot find module 'x'" or 'x/package.json'; import: "Cannot find package 'x'".
  const quoted = message.match(/Cannot find (?:module|package) '([^']+)'/)?.[1];
  return quoted !== undefined && packageOf(quoted) === name;
}

/** Whether a folder of `name` is where Node would look for it (its exports may hide the rest). */
function installed(name: string): boolean {
  return (requireFromCore.resolve.paths(name) ?? []).some((folder) =>
    existsSync(join(folder, name, "package.json")),
  );
}

function missing(specifier: string, feature: string, error: unknown): unknown {
  const name = packageOf(specifier);
  return isPackageMissing(error, name) && !installed(name)
    ? new DependencyMissingError([name], feature, error)
    : error;
}

/** `require` an optional CommonJS package (or a file of it) for `feature`. */
export function requireOptional<Module>(specifier: string, feature: string): Module {
  try {
    return requireFromCore(specifier) as Module;
  } catch (error) {
    throw missing(specifier, feature, error);
  }
}

/** `import()` an optional package (or an exported subpath of it) for `feature`. */
export async function importOptional<Module>(specifier: string, feature: string): Promise<Module> {
  try {
    return (await import(specifier)) as Module;
  } catch (error) {
    throw missing(specifier, feature, error);
  }
}

/** The file `specifier` resolves to, for packages used by path (grammars, browser builds). */
export function resolveOptional(specifier: string, feature: string): string {
  try {
    return requireFromCore.resolve(specifier);
  } catch (error) {
    throw missing(specifier, feature, error);
  }
}

/**
 * Check up front that every package a feature needs resolves, so a user missing several learns
 * of all of them in one message rather than one per attempt.
 */
export function assertInstalled(specifiers: readonly string[], feature: string): void {
  const absent: string[] = [];
  let first: unknown;
  for (const specifier of specifiers) {
    try {
      requireFromCore.resolve(specifier);
    } catch (error) {
      if (!isPackageMissing(error, packageOf(specifier)) || installed(packageOf(specifier)))
        throw error;
      absent.push(packageOf(specifier));
      first ??= error;
    }
  }
  if (absent.length > 0) throw new DependencyMissingError(absent, feature, first);
}
