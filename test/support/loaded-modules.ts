/**
 * Which npm packages a process loads: start Node with a module hook that records every ES
 * module it loads and every CommonJS file it resolves, and name the packages they belong to.
 * Start-up regressions (a heavy import reaching a light command) show as a package name, which
 * a test can assert on without timing anything.
 */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { type Cleanup, temporaryDirectoryIn } from "./temporary.js";

// Runs in Node's hooks thread: appends each loaded URL to the file named by the environment.
const hooks = `
import { appendFileSync } from "node:fs";
const out = process.env.SKILLSMITH_TRACE_FILE;
export async function load(url, context, nextLoad) {
  appendFileSync(out, url + "\\n");
  return nextLoad(url, context);
}
`;

// Runs in the main thread before the program: registers the hooks and records CommonJS files.
const register = `
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
register(new URL("./hooks.mjs", import.meta.url));
const Module = createRequire(import.meta.url)("node:module");
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const resolved = resolveFilename.apply(this, args);
  appendFileSync(process.env.SKILLSMITH_TRACE_FILE, resolved + "\\n");
  return resolved;
};
`;

export interface LoadedModules {
  readonly code: number;
  /** npm package names (scoped ones with their scope), sorted, without duplicates. */
  readonly packages: readonly string[];
}

/** Package of a loaded file or URL, or undefined for Node built-ins and our own modules. */
export function packageOf(location: string): string | undefined {
  const marker = "/node_modules/";
  const at = location.lastIndexOf(marker);
  if (at < 0) return undefined;
  const parts = location.slice(at + marker.length).split("/");
  const first = parts[0] ?? "";
  return first.startsWith("@") ? `${first}/${parts[1] ?? ""}` : first;
}

/** Run `node ...nodeArguments` (a script and its arguments) and report the packages it loaded. */
export async function loadedPackages(
  cleanups: Cleanup[],
  nodeArguments: readonly string[],
  options: { readonly cwd: string },
): Promise<LoadedModules> {
  const { code, packages } = await loadedFiles(cleanups, nodeArguments, options);
  return { code, packages };
}

export interface LoadedFiles extends LoadedModules {
  /** Every file of ours it loaded (outside node_modules), relative to `root`, sorted. */
  readonly own: readonly string[];
}

/** As `loadedPackages`, and also the project's own modules it loaded (relative to `cwd`). */
export async function loadedFiles(
  cleanups: Cleanup[],
  nodeArguments: readonly string[],
  options: { readonly cwd: string },
): Promise<LoadedFiles> {
  const directory = await temporaryDirectoryIn(cleanups, "skillsmith-trace-");
  await writeFile(join(directory, "hooks.mjs"), hooks);
  await writeFile(join(directory, "register.mjs"), register);
  const traceFile = join(directory, "trace.txt");
  await writeFile(traceFile, "");
  let code = 0;
  try {
    await promisify(execFile)(
      process.execPath,
      ["--import", join(directory, "register.mjs"), ...nodeArguments],
      { cwd: options.cwd, env: { ...process.env, SKILLSMITH_TRACE_FILE: traceFile } },
    );
  } catch (error) {
    code = (error as { code?: number }).code ?? -1;
  }
  const lines = (await readFile(traceFile, "utf8")).split("\n").filter((line) => line !== "");
  const packages = new Set<string>();
  const own = new Set<string>();
  const root = `${pathToFileURL(options.cwd).href}/`;
  for (const line of lines) {
    const name = packageOf(line);
    if (name !== undefined) packages.add(name);
    else if (line.startsWith(root)) own.add(line.slice(root.length));
    else if (line.startsWith(`${options.cwd}/`)) own.add(line.slice(options.cwd.length + 1));
  }
  return { code, packages: [...packages].sort(), own: [...own].sort() };
}
