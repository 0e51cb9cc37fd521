import { readdir, readFile, stat } from "node:fs/promises";
import { join, posix } from "node:path";
import { parse as parseToml } from "smol-toml";
import { pathExists, unlessMissing } from "../../core/fs.js";

/**
 * What a Python repository's manifests say about how it is built and where its code lives:
 * enough to make it importable offline the way an editable install would.
 */
export interface PythonProject {
  /** `[project].name`, `[tool.poetry].name`, setup.cfg `name` or setup.py `name=`. */
  readonly name?: string;
  /** PEP 517 backend (`flit_core.buildapi`); setuptools' legacy backend for a bare setup.py. */
  readonly buildBackend?: string;
  /** The importable module of the backend (`flit_core.buildapi` → `flit_core`). */
  readonly backendModule?: string;
  /**
   * Folders (relative to the repository root, `.` for the root) that an editable install would
   * put on `sys.path`: `src` for a src layout, the root otherwise.
   */
  readonly sourceRoots: readonly string[];
  /** Extras or dependency groups for tests (`test`, `tests`, `testing`, `dev`), first match. */
  readonly testExtra?: string;
  /** Requirement strings of a PEP 735 test dependency group (include-group entries skipped). */
  readonly testGroup?: readonly string[];
  readonly testGroupName?: string;
  /** Why each value was chosen. */
  readonly reasons: readonly string[];
}

type Table = Record<string, unknown>;

function table(value: unknown): Table {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Table)
    : {};
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

const TEST_NAMES = ["test", "tests", "testing", "dev"];

/**
 * A manifest of the repository being detected, or undefined when it is not there. One that is
 * there but unreadable (a folder named `setup.py`, a symlink loop) is a `core.file-unreadable`
 * input error naming it: read as empty, it would silently change the detected setup.
 */
export function readRepositoryFile(repository: string, name: string): Promise<string | undefined> {
  const path = join(repository, name);
  return unlessMissing(path, readFile(path, "utf8"));
}

async function isDirectory(path: string): Promise<boolean> {
  return (await unlessMissing(path, stat(path)))?.isDirectory() === true;
}

/** A folder holding a package (a folder with `__init__.py`) or a module (`*.py`). */
async function holdsPythonCode(folder: string): Promise<boolean> {
  const entries = (await unlessMissing(folder, readdir(folder, { withFileTypes: true }))) ?? [];
  for (const entry of entries) {
    if (entry.isFile() && entry.name.endsWith(".py")) return true;
    if (entry.isDirectory() && (await pathExists(join(folder, entry.name, "__init__.py"))))
      return true;
  }
  return false;
}

/**
 * Read pyproject.toml, setup.cfg and setup.py of `repository` (whichever exist). A pyproject
 * that does not parse is reported in `reasons` and treated as absent, so a damaged manifest
 * still gets the path-entry preparation instead of failing detection.
 */
export async function inspectPythonProject(
  repository: string,
  names: ReadonlySet<string>,
): Promise<PythonProject> {
  const reasons: string[] = [];
  let pyproject: Table = {};
  if (names.has("pyproject.toml")) {
    const source = (await readRepositoryFile(repository, "pyproject.toml")) ?? "";
    try {
      pyproject = table(parseToml(source));
    } catch (error) {
      reasons.push(
        `pyproject.toml does not parse as TOML (${error instanceof Error ? error.message.split("\n")[0] : String(error)}); read as if absent`,
      );
    }
  }
  const setupPy = names.has("setup.py")
    ? ((await readRepositoryFile(repository, "setup.py")) ?? "")
    : "";
  const setupCfg = names.has("setup.cfg")
    ? ((await readRepositoryFile(repository, "setup.cfg")) ?? "")
    : "";

  const project = table(pyproject.project);
  const tool = table(pyproject.tool);
  const poetry = table(tool.poetry);
  const name =
    text(project.name) ??
    text(poetry.name) ??
    /^\s*name\s*=\s*(\S+)\s*$/m.exec(setupCfg)?.[1] ??
    /\bname\s*=\s*["']([^"']+)["']/.exec(setupPy)?.[1];

  const buildSystem = table(pyproject["build-system"]);
  let buildBackend = text(buildSystem["build-backend"]);
  if (buildBackend === undefined && (setupPy !== "" || names.has("setup.cfg"))) {
    buildBackend = "setuptools.build_meta:__legacy__";
    reasons.push("setup.py/setup.cfg without a declared build backend: setuptools (legacy)");
  } else if (buildBackend === undefined && names.has("pyproject.toml")) {
    // PEP 517: no build-system table means setuptools' legacy backend.
    buildBackend = "setuptools.build_meta:__legacy__";
    reasons.push("pyproject.toml declares no build backend: setuptools (PEP 517 default)");
  } else if (buildBackend !== undefined) {
    reasons.push(`build backend ${buildBackend} (pyproject.toml [build-system])`);
  }
  const backendModule = buildBackend?.split(/[.:]/)[0];

  // Where the code lives, in the order an editable install would decide it.
  const setuptools = table(tool.setuptools);
  const packageDir = table(setuptools["package-dir"]);
  const find = table(table(setuptools.packages).find);
  const declared: string[] = [];
  const rootDir = text(packageDir[""]);
  if (rootDir !== undefined) declared.push(rootDir);
  if (Array.isArray(find.where)) {
    for (const where of find.where) if (typeof where === "string") declared.push(where);
  }
  const setupPyDir = /package_dir\s*=\s*\{\s*["']{2}\s*:\s*["']([^"']+)["']/.exec(setupPy)?.[1];
  if (setupPyDir !== undefined) declared.push(setupPyDir);
  // setup.cfg spells the root mapping `package_dir =` followed by `=src` (same or next line).
  const cfgDir = /^\s*package_dir\s*=\s*(?:\n\s*)?=\s*(\S+)/m.exec(setupCfg)?.[1];
  if (cfgDir !== undefined) declared.push(cfgDir);
  let sourceRoots: string[];
  if (declared.length > 0) {
    sourceRoots = [...new Set(declared.map((root) => posix.normalize(root)))];
    reasons.push(`source roots declared by the manifest: ${sourceRoots.join(", ")}`);
  } else if (
    (await isDirectory(join(repository, "src"))) &&
    (await holdsPythonCode(join(repository, "src")))
  ) {
    sourceRoots = ["src"];
    reasons.push("src/ holds the package (src layout): src/ is the source root");
  } else {
    sourceRoots = ["."];
    reasons.push("flat layout: the repository root is the source root");
  }

  const extras = table(project["optional-dependencies"]);
  const testExtra = TEST_NAMES.find((candidate) => Array.isArray(extras[candidate]));
  const groups = table(pyproject["dependency-groups"]);
  const testGroupName = TEST_NAMES.find((candidate) => Array.isArray(groups[candidate]));
  const testGroup =
    testGroupName === undefined
      ? undefined
      : (groups[testGroupName] as unknown[]).filter(
          (item): item is string => typeof item === "string",
        );
  return {
    ...(name === undefined ? {} : { name }),
    ...(buildBackend === undefined ? {} : { buildBackend }),
    ...(backendModule === undefined ? {} : { backendModule }),
    sourceRoots,
    ...(testExtra === undefined ? {} : { testExtra }),
    ...(testGroup === undefined || testGroupName === undefined ? {} : { testGroup, testGroupName }),
    reasons,
  };
}

/** Quote for `sh`: single quotes, with embedded ones closed, escaped and reopened. */
export function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
