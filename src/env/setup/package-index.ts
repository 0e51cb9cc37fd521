/**
 * The Python package index the user has configured, so setup installs from where the user's own
 * pip would: a private mirror named in `PIP_INDEX_URL` or in a pip configuration file is the
 * "network" of an online setup. Setup runs in a sandbox that sees neither the user's home, nor
 * `/etc/pip.conf`, nor `/opt`, so the configuration is read here, on the host, and handed to
 * setup's steps as pip's own variables, with the local folders it names mounted read-only into
 * setup alone. Verifier and agent runs get none of it: they install only from the environment's
 * wheel folder, with every configuration file switched off.
 */
import { readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";

export const DEFAULT_PYTHON_INDEX = "https://pypi.org/simple/";

/** Where pip would look for packages, and where that was read. */
export interface PythonIndexConfiguration {
  /** `index-url`; absent means pip's default (PyPI). */
  readonly indexUrl?: string;
  readonly extraIndexUrls: readonly string[];
  /** `find-links`: URLs or folders of distributions. */
  readonly findLinks: readonly string[];
  readonly trustedHosts: readonly string[];
  /** The files and variables each setting came from, for the setup log. */
  readonly sources: readonly string[];
}

const KEYS = {
  "index-url": "indexUrl",
  "extra-index-url": "extraIndexUrls",
  "find-links": "findLinks",
  "trusted-host": "trustedHosts",
} as const;
type Key = keyof typeof KEYS;

/**
 * pip's configuration files in the order pip loads them (a later one overrides an earlier one):
 * global (each `XDG_CONFIG_DIRS` folder, then `/etc`), user (legacy `~/.pip`, then the XDG
 * folder), the virtual environment's, then `PIP_CONFIG_FILE`.
 */
export function pipConfigFiles(env: Readonly<Record<string, string | undefined>>): string[] {
  if (env.PIP_CONFIG_FILE === "/dev/null") return [];
  const home = env.HOME ?? homedir();
  const xdgDirs = (env.XDG_CONFIG_DIRS ?? "/etc/xdg").split(":").filter((dir) => dir !== "");
  const files = [
    ...xdgDirs.map((dir) => join(dir, "pip", "pip.conf")),
    "/etc/pip.conf",
    join(home, ".pip", "pip.conf"),
    join(env.XDG_CONFIG_HOME ?? join(home, ".config"), "pip", "pip.conf"),
  ];
  if (env.VIRTUAL_ENV !== undefined) files.push(join(env.VIRTUAL_ENV, "pip.conf"));
  if (env.PIP_CONFIG_FILE !== undefined) files.push(env.PIP_CONFIG_FILE);
  return files;
}

/**
 * The index settings of one pip configuration file: `[global]`, then `[install]` over it (setup
 * runs `pip install` and `pip wheel`; both read `[global]`). Values of several words (extra
 * indexes, find-links) may continue on indented lines, as pip's INI reader allows.
 */
export function parsePipConfig(text: string): Partial<Record<Key, string>> {
  const sections: Record<string, Partial<Record<Key, string>>> = {};
  let section = "";
  let last: Key | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\r$/, "");
    if (/^\s*[#;]/.test(line) || line.trim() === "") continue;
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (header !== null) {
      section = (header[1] as string).trim().toLowerCase();
      last = undefined;
      continue;
    }
    const values = sections[section] ?? {};
    sections[section] = values;
    if (/^\s/.test(line) && last !== undefined) {
      values[last] = `${values[last] ?? ""} ${line.trim()}`.trim();
      continue;
    }
    const pair = /^([^=:]+?)\s*[=:]\s*(.*)$/.exec(line);
    const name = pair?.[1]?.trim().toLowerCase().replaceAll("_", "-");
    last = name !== undefined && name in KEYS ? (name as Key) : undefined;
    if (last !== undefined) values[last] = (pair?.[2] ?? "").trim();
  }
  return { ...sections.global, ...sections.install };
}

/**
 * The user's index configuration: pip's configuration files, then pip's variables over them
 * (`PIP_INDEX_URL`, `PIP_EXTRA_INDEX_URL`, `PIP_FIND_LINKS`, `PIP_TRUSTED_HOST`), as pip itself
 * ranks them. An unreadable or absent file is skipped, as pip skips it.
 */
export async function readPythonIndexConfiguration(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<PythonIndexConfiguration> {
  const merged: Partial<Record<Key, string>> = {};
  const origin: Partial<Record<Key, string>> = {};
  for (const file of pipConfigFiles(env)) {
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text === undefined) continue;
    for (const [key, value] of Object.entries(parsePipConfig(text)) as [Key, string][]) {
      merged[key] = value;
      origin[key] = file;
    }
  }
  for (const key of Object.keys(KEYS) as Key[]) {
    const variable = `PIP_${key.toUpperCase().replaceAll("-", "_")}`;
    const value = env[variable];
    if (value !== undefined && value.trim() !== "") {
      merged[key] = value;
      origin[key] = variable;
    }
  }
  const words = (key: Key) => (merged[key] ?? "").split(/\s+/).filter((word) => word !== "");
  const indexUrl = words("index-url")[0];
  return {
    ...(indexUrl === undefined ? {} : { indexUrl }),
    extraIndexUrls: words("extra-index-url"),
    findLinks: words("find-links"),
    trustedHosts: words("trusted-host"),
    sources: (Object.keys(origin) as Key[]).map((key) => `${key} from ${origin[key]}`),
  };
}

/** A `file://` URL or an absolute path as a host folder; undefined for a remote URL. */
export function localIndexPath(location: string): string | undefined {
  if (location.startsWith("file:")) {
    try {
      return fileURLToPath(location);
    } catch {
      return undefined;
    }
  }
  return isAbsolute(location) ? location : undefined;
}

/**
 * The variables setup's pip steps get so they use the user's indexes, and the host folders
 * among them (mounted read-only, at the same path, into setup's sandbox only). Nothing when the
 * user configured nothing: pip's default index needs no variable.
 */
export function pythonIndexSetupAccess(configuration: PythonIndexConfiguration): {
  env: Record<string, string>;
  folders: string[];
} {
  const env: Record<string, string> = {};
  if (configuration.indexUrl !== undefined) env.PIP_INDEX_URL = configuration.indexUrl;
  if (configuration.extraIndexUrls.length > 0) {
    env.PIP_EXTRA_INDEX_URL = configuration.extraIndexUrls.join(" ");
  }
  if (configuration.findLinks.length > 0) env.PIP_FIND_LINKS = configuration.findLinks.join(" ");
  if (configuration.trustedHosts.length > 0) {
    env.PIP_TRUSTED_HOST = configuration.trustedHosts.join(" ");
  }
  // An index folder named `simple` is mounted from its parent: mirror tools keep the files its
  // pages link to beside it (`../../files/…`, `../../packages/…`), not inside it.
  const indexFolders = [
    ...(configuration.indexUrl === undefined ? [] : [configuration.indexUrl]),
    ...configuration.extraIndexUrls,
  ]
    .map(localIndexPath)
    .filter((path): path is string => path !== undefined)
    .map((path) =>
      basename(path.replace(/\/+$/, "")) === "simple" ? dirname(path.replace(/\/+$/, "")) : path,
    );
  const linkFolders = configuration.findLinks
    .map(localIndexPath)
    .filter((path): path is string => path !== undefined);
  const folders = [...indexFolders, ...linkFolders];
  return { env, folders: [...new Set(folders)] };
}

/** Every place the configuration names, in pip's order: the index, extra indexes, find-links. */
export function pythonIndexLocations(configuration: PythonIndexConfiguration): string[] {
  return [
    configuration.indexUrl ?? DEFAULT_PYTHON_INDEX,
    ...configuration.extraIndexUrls,
    ...configuration.findLinks,
  ];
}

/** Whether a local index or find-links folder is there (the offline counterpart of a probe). */
export async function localIndexExists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true;
}
