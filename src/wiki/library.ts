/**
 * A snippet from a library's own repository (its README, its docs) imports that library; in a
 * bare sandbox the import fails and the snippet would end reference-only for a reason that says
 * nothing about it. When the resource is the library's repository, the snippet runs against the
 * library installed offline from the checkout: the package folder (flat or `src/` layout) copied
 * into a read-only folder on `PYTHONPATH` (Python) or `node_modules/<name>` (JavaScript), nothing
 * downloaded and nothing built. A version file that the build backend would write
 * (hatch-vcs `version-file`, setuptools-scm `write_to` / `version_file`) is written as
 * `0+checkout`, since the checkout does not have it. The outcome names the library so a reader
 * knows what the snippet ran against.
 */
import { cp, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { unlessMissing } from "../core/fs.js";
import type { PreparedResource } from "./resources/types.js";

/** The library a snippet runs against: a folder to mount and how the language finds it. */
export interface LibraryCheckout {
  readonly language: "python" | "javascript";
  /** The import name (`humanize`) or package name (`left-pad`). */
  readonly name: string;
  /** The resource's path in the manifest, for the outcome. */
  readonly source: string;
  /** Stage the library under `into` (a folder the caller owns); returns the folder to mount. */
  stage(into: string): Promise<void>;
}

async function isFile(path: string): Promise<boolean> {
  const info = await unlessMissing(path, stat(path));
  return info?.isFile() === true;
}

async function isDirectory(path: string): Promise<boolean> {
  const info = await unlessMissing(path, stat(path));
  return info?.isDirectory() === true;
}

/** The modules a Python snippet imports at its top level (`import a.b`, `from a import b`). */
export function pythonImports(code: string): Set<string> {
  const names = new Set<string>();
  for (const match of code.matchAll(
    /^\s*(?:>>>\s*)?(?:from\s+([\w]+)[\w.]*\s+import|import\s+([\w., ]+))/gm,
  )) {
    if (match[1] !== undefined) names.add(match[1]);
    for (const part of (match[2] ?? "").split(",")) {
      const name = part.trim().split(/[.\s]/)[0];
      if (name !== undefined && name !== "") names.add(name);
    }
  }
  return names;
}

/** The packages a JavaScript snippet requires or imports by bare name. */
export function javascriptImports(code: string): Set<string> {
  const names = new Set<string>();
  for (const match of code.matchAll(
    /(?:require\(\s*|from\s+|import\s*\(\s*|import\s+)["']([^"'./][^"']*)["']/g,
  )) {
    const spec = match[1] ?? "";
    const name = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0];
    if (name !== undefined && name !== "") names.add(name);
  }
  return names;
}

/** The version file a Python build backend writes at build time, if pyproject.toml names one. */
function versionFileOf(pyproject: string): string | undefined {
  const match =
    /^\s*(?:build\.hooks\.vcs\.version-file|version-file|write_to|version_file)\s*=\s*["']([^"']+)["']/m.exec(
      pyproject,
    );
  return match?.[1];
}

async function pythonLibrary(
  root: string,
  source: string,
  imports: Set<string>,
): Promise<LibraryCheckout | undefined> {
  const pyproject = await unlessMissing(
    join(root, "pyproject.toml"),
    readFile(join(root, "pyproject.toml"), "utf8"),
  );
  const hasSetup = await isFile(join(root, "setup.py"));
  if (pyproject === undefined && !hasSetup) return undefined;
  for (const name of imports) {
    if (!/^\w+$/.test(name)) continue;
    for (const base of ["src", "."]) {
      const packageDir = join(root, base, name);
      const module = join(root, base, `${name}.py`);
      const isPackage = await isFile(join(packageDir, "__init__.py"));
      if (!isPackage && !(await isFile(module))) continue;
      return {
        language: "python",
        name,
        source,
        stage: async (into) => {
          await mkdir(into, { recursive: true });
          if (isPackage) await cp(packageDir, join(into, name), { recursive: true });
          else await cp(module, join(into, `${name}.py`));
          const versionFile = pyproject === undefined ? undefined : versionFileOf(pyproject);
          if (versionFile === undefined) return;
          // The version file lives inside the package; keep its place relative to the package.
          const inside = relative(join(root, base), join(root, versionFile));
          if (inside.startsWith("..") || !inside.startsWith(`${name}/`)) return;
          const target = join(into, inside);
          if (await isFile(target)) return;
          await mkdir(dirname(target), { recursive: true });
          await writeFile(
            target,
            '__version__ = version = "0+checkout"\n__version_tuple__ = version_tuple = (0, "checkout")\n',
          );
        },
      };
    }
  }
  return undefined;
}

async function javascriptLibrary(
  root: string,
  source: string,
  imports: Set<string>,
): Promise<LibraryCheckout | undefined> {
  const manifest = await unlessMissing(
    join(root, "package.json"),
    readFile(join(root, "package.json"), "utf8"),
  );
  if (manifest === undefined) return undefined;
  let name: unknown;
  try {
    name = (JSON.parse(manifest) as { name?: unknown }).name;
  } catch {
    return undefined;
  }
  if (typeof name !== "string" || !imports.has(name)) return undefined;
  return {
    language: "javascript",
    name,
    source,
    stage: async (into) => {
      const target = join(into, "node_modules", name);
      await mkdir(dirname(target), { recursive: true });
      await cp(root, target, {
        recursive: true,
        filter: (path) => !/(?:^|\/)(?:\.git|node_modules)(?:\/|$)/.test(relative(root, path)),
      });
    },
  };
}

/**
 * The library a candidate's code imports when the resource is that library's repository;
 * undefined otherwise (the snippet runs bare, as before).
 */
export async function libraryFor(
  code: string,
  language: string,
  resource: PreparedResource,
): Promise<LibraryCheckout | undefined> {
  if (resource.record.type !== "repository" || !(await isDirectory(resource.absolutePath)))
    return undefined;
  if (language === "python")
    return pythonLibrary(resource.absolutePath, resource.record.path, pythonImports(code));
  if (language === "javascript")
    return javascriptLibrary(resource.absolutePath, resource.record.path, javascriptImports(code));
  return undefined;
}
