/**
 * Package caches a prepared environment owns, from which installs that verifiers run at test
 * time are served without network. One mechanism, with each installer a pluggable part: a folder
 * of the environment, the variables setup's steps get (so what setup installs fills it), the
 * variables runs get (so an install reads only it, read-only, and fails at once on a miss), and
 * the setup commands that fill it with what a verifier's own install command asks for.
 *
 * - npm: the cache npm keeps (`npm_config_cache`); the repository's locked install in setup
 *   fills it, and runs use npm's offline mode, so the verifier's `npm ci` is served from it.
 * - pip: a folder of wheels; setup builds the wheels of what the verifier's `pip install`
 *   names (packages, or requirement files of the repository) with `pip wheel`, and runs get
 *   `PIP_NO_INDEX` and `PIP_FIND_LINKS`. pip installs what is missing from the environment
 *   (read-only in runs) into the user site under the run's own home, so nothing a run installs
 *   reaches the next run.
 *
 * An install no cache can serve (a requirement fetched from a VCS or URL at every install) is
 * recorded with its reason, so the check reports it before any agent time is spent.
 */
import { readdir } from "node:fs/promises";
import { join, posix } from "node:path";
import type { SetupNetwork, SetupStep } from "./plan.js";
import { readRepositoryFile, shellQuote } from "./python.js";
import type { TestTimeInstall, TestTimeInstaller } from "./test-time-installs.js";

/** What became of one verifier install command, for the environment's manifest. */
export interface ServedInstall {
  readonly installer: TestTimeInstaller;
  /** The command as the verifier spells it. */
  readonly command: string;
  /**
   * `cache`: setup fills the cache with what it installs (`fill` holds the setup commands);
   * `setup`: setup's own install of the repository fills it; `unservable`: no cache can
   * serve it offline (`reason` says why); `offline`: setup had no network to fill it;
   * `nothing`: it installs nothing here (none of the requirement files it names exists).
   */
  readonly served: "cache" | "setup" | "unservable" | "offline" | "nothing";
  readonly fill?: readonly string[];
  readonly reason?: string;
  /**
   * npm served by setup's install: the lifecycle scripts of the repository and its workspaces
   * (`src/memory/package.json: prepare \`npm run build\``). The verifier's own `npm ci` runs
   * them again in every verifier run, though setup already ran them once: a build there (the
   * TypeScript build of four MCP servers, in v1's mcp-builder) is most of the verifier's time.
   */
  readonly scripts?: readonly string[];
}

/** A cache of the environment and the installs it serves (the manifest's record). */
export interface InstallCacheRecord {
  readonly installer: TestTimeInstaller;
  /** Where runs see it (read-only). */
  readonly path: string;
  readonly installs: readonly ServedInstall[];
}

interface FillContext {
  readonly repository: string;
  readonly network: SetupNetwork;
  /** The cache folder as setup and runs see it. */
  readonly path: string;
  /** The detected primary language fills its own cache through setup's install step. */
  readonly primaryLanguage: string;
}

/** One installer's cache: the pluggable part. */
export interface InstallCache {
  readonly installer: TestTimeInstaller;
  /** Folder name inside the environment. */
  readonly folder: string;
  setupEnv(path: string): Record<string, string>;
  runEnv(path: string): Record<string, string>;
  /** How one of the verifier's install commands is served, and the setup commands that fill it. */
  serve(install: TestTimeInstall, context: FillContext): Promise<ServedInstall>;
}

export const npmCache: InstallCache = {
  installer: "npm",
  folder: "npm-cache",
  setupEnv: (path) => ({ npm_config_cache: path }),
  // A missing package fails at once (ENOTCACHED) instead of waiting out npm's retries against a
  // network runs do not have. The cache is mounted read-only, so npm writes no log files there.
  runEnv: (path) => ({
    npm_config_cache: path,
    npm_config_offline: "true",
    npm_config_logs_max: "0",
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
  }),
  serve: async (install, context) => {
    const base = { installer: install.installer, command: install.command };
    const packages = installArguments(install.command, /^npm (?:ci|install|i)\b/).filter(
      (word) => !word.startsWith("-"),
    );
    if (packages.length > 0) {
      return context.network === "online"
        ? {
            ...base,
            served: "cache",
            fill: [`npm cache add ${packages.map(shellQuote).join(" ")}`],
          }
        : { ...base, served: "offline" };
    }
    if (context.primaryLanguage === "node") {
      const scripts = await lifecycleScripts(context.repository);
      return { ...base, served: "setup", ...(scripts.length === 0 ? {} : { scripts }) };
    }
    return {
      ...base,
      served: "unservable",
      reason: "it installs a node project, and setup installs no node dependencies here",
    };
  },
};

export const pipCache: InstallCache = {
  installer: "pip",
  folder: "pip-wheels",
  setupEnv: () => ({}),
  // No index and no configuration file (which may name other find-links folders): the wheels
  // setup put here are all a run's pip sees.
  runEnv: (path) => ({ PIP_NO_INDEX: "1", PIP_FIND_LINKS: path, PIP_CONFIG_FILE: "/dev/null" }),
  serve: async (install, context) => {
    const base = { installer: install.installer, command: install.command };
    const words = installArguments(
      install.command,
      /^(?:\S*python3?(?:\.\d+)? -m )?pip3? install\b/,
    );
    const files: string[] = [];
    const packages: string[] = [];
    let local = false;
    let candidatesOnly = false;
    for (let index = 0; index < words.length; index += 1) {
      const word = words[index] as string;
      if (word === "-r" || word === "--requirement") {
        const file = words[index + 1];
        index += 1;
        if (file !== undefined) files.push(file);
        else {
          candidatesOnly = true;
          files.push(...(await existing(context.repository, install.requirementFiles ?? [])));
        }
      } else if (word === "-e" || word === "--editable") {
        local = true;
        index += 1;
      } else if (word.startsWith("-")) {
      } else if (/^[./]|\/workspace\//.test(word)) local = true;
      else packages.push(word);
    }
    for (const file of files) {
      const remote = await remoteRequirement(context.repository, file, new Set());
      if (remote !== undefined) {
        return {
          ...base,
          served: "unservable",
          reason: `${remote.file}:${remote.line} is \`${remote.text}\`${remote.file === file ? "" : ` (${file} includes ${remote.file})`}, which pip fetches from its host at every install; no cache serves it offline`,
        };
      }
    }
    const requirements = [
      ...files.map((file) => `-r ${shellQuote(file)}`),
      ...packages.map(shellQuote),
    ];
    if (requirements.length === 0 && candidatesOnly && !local) {
      return {
        ...base,
        served: "nothing",
        reason: `none of the requirement files it looks for (${(install.requirementFiles ?? []).join(", ") || "none named"}) is in the repository`,
      };
    }
    if (requirements.length === 0) {
      // The project itself (`pip install -e .`): its dependencies are what setup installed.
      return local
        ? { ...base, served: "setup" }
        : { ...base, served: "unservable", reason: "it names nothing setup can find to install" };
    }
    if (context.network !== "online") return { ...base, served: "offline" };
    return {
      ...base,
      served: "cache",
      fill: [
        `python -m pip wheel --quiet --wheel-dir ${shellQuote(context.path)} ${requirements.join(" ")}`,
      ],
    };
  },
};

/** The caches, by installer. */
export const installCaches: readonly InstallCache[] = [npmCache, pipCache];

/** The installs a cache can serve: those of an installer that has one. */
export function cacheableInstalls(installs: readonly TestTimeInstall[]): TestTimeInstall[] {
  return installs.filter((install) =>
    installCaches.some((cache) => cache.installer === install.installer),
  );
}

/** The scripts npm runs by itself in an install of a package (`npm ci` and `npm install`). */
const LIFECYCLE_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"] as const;

/**
 * The lifecycle scripts an install of the repository runs: its root package's and its
 * workspaces' (a workspace pattern is a folder or `folder/*`, the forms npm's own documentation
 * uses), as `path: script \`command\``. Dependencies' own scripts are left out: extracting
 * them is what npm does anyway, and their names alone say little.
 */
export async function lifecycleScripts(repository: string): Promise<string[]> {
  const root = parsePackage(await readRepositoryFile(repository, "package.json"));
  if (root === undefined) return [];
  const packages = ["package.json"];
  const workspaces = Array.isArray(root.workspaces)
    ? root.workspaces
    : Array.isArray((root.workspaces as { packages?: unknown } | undefined)?.packages)
      ? (root.workspaces as { packages: unknown[] }).packages
      : [];
  for (const pattern of workspaces) {
    if (typeof pattern !== "string") continue;
    const folder = pattern.replace(/\/+$/, "");
    if (!folder.endsWith("/*")) {
      packages.push(posix.join(folder, "package.json"));
      continue;
    }
    const parent = folder.slice(0, -2);
    const entries = await readdir(join(repository, parent), { withFileTypes: true }).catch(
      () => [],
    );
    for (const entry of entries
      .filter((item) => item.isDirectory())
      .map((item) => item.name)
      .sort()) {
      packages.push(posix.join(parent, entry, "package.json"));
    }
  }
  const found: string[] = [];
  for (const path of packages) {
    const manifest =
      path === "package.json" ? root : parsePackage(await readRepositoryFile(repository, path));
    const scripts = manifest?.scripts;
    if (typeof scripts !== "object" || scripts === null) continue;
    for (const name of LIFECYCLE_SCRIPTS) {
      const command = (scripts as Record<string, unknown>)[name];
      if (typeof command === "string") found.push(`${path}: ${name} \`${command}\``);
    }
  }
  return found;
}

function parsePackage(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    // Not npm's to install either: npm refuses a package.json it cannot parse.
    return undefined;
  }
}

/** The words after the installer's verb, when they are all literal (`pip install x y`). */
function installArguments(command: string, verb: RegExp): string[] {
  const rest = command.replace(verb, "").trim();
  return rest === "" ? [] : rest.split(/\s+/);
}

/**
 * A requirement pip fetches from where a URL points at every install, whatever is cached: a VCS
 * or archive URL (`git+https://…`, `-e git+…`) or a direct reference (`amqp @ git+https://…`).
 * pip never swaps it for a package of the same name from an index or a wheel folder, and nor
 * does setup (that would test other code than the repository names).
 */
const REMOTE_REQUIREMENT =
  /^(?:(?:-e|--editable)[=\s]+)?[A-Za-z][\w+.-]*:\/\/|^[A-Za-z0-9][\w.-]*\s*(?:\[[^\]]*\])?\s*@\s*\S+:\/\//;

/**
 * The first remote requirement of a requirement file or of the files it includes (`-r`, `-c`,
 * relative to the including file), with its file and line. Files outside the repository are not
 * read: pip in a run could not read them either.
 */
async function remoteRequirement(
  repository: string,
  file: string,
  seen: Set<string>,
): Promise<{ file: string; line: number; text: string } | undefined> {
  const path = posix.normalize(file);
  if (path.startsWith("../") || posix.isAbsolute(path) || seen.has(path)) return undefined;
  seen.add(path);
  const text = await readRepositoryFile(repository, path);
  if (text === undefined) return undefined;
  for (const [index, raw] of text.split("\n").entries()) {
    // pip drops a comment only where `#` follows whitespace (`#egg=` in a URL stays).
    const line = raw.replace(/(^|\s)#.*$/, "").trim();
    if (REMOTE_REQUIREMENT.test(line)) return { file: path, line: index + 1, text: line };
    const include = /^(?:-r|--requirement|-c|--constraint)(?:\s*=\s*|\s+)(\S+)$/.exec(line);
    if (include === null) continue;
    const found = await remoteRequirement(
      repository,
      posix.join(posix.dirname(path), include[1] as string),
      seen,
    );
    if (found !== undefined) return found;
  }
  return undefined;
}

async function existing(repository: string, files: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const file of files) {
    if ((await readRepositoryFile(repository, file)) !== undefined) found.push(file);
  }
  return found;
}

/**
 * The caches a plan fills for the verifiers' install commands: one record per installer that
 * has any, the setup steps that fill them (optional: a package that cannot be fetched leaves the
 * environment usable and the install reported), and the variables of each.
 */
export async function planInstallCaches(
  installs: readonly TestTimeInstall[],
  context: Omit<FillContext, "path"> & { readonly environmentPath: string },
): Promise<{
  records: InstallCacheRecord[];
  steps: SetupStep[];
  setupEnv: Record<string, string>;
  runEnv: Record<string, string>;
}> {
  const records: InstallCacheRecord[] = [];
  const steps: SetupStep[] = [];
  const setupEnv: Record<string, string> = {};
  const runEnv: Record<string, string> = {};
  for (const cache of installCaches) {
    const path = posix.join(context.environmentPath, cache.folder);
    const mine = installs.filter((install) => install.installer === cache.installer);
    const seen = new Set<string>();
    const served: ServedInstall[] = [];
    for (const install of mine) {
      const key = `${install.command}\n${(install.requirementFiles ?? []).join(",")}`;
      if (seen.has(key)) continue;
      seen.add(key);
      served.push(await cache.serve(install, { ...context, path }));
    }
    if (served.length === 0) continue;
    records.push({ installer: cache.installer, path, installs: served });
    Object.assign(setupEnv, cache.setupEnv(path));
    Object.assign(runEnv, cache.runEnv(path));
    const fills = [...new Set(served.flatMap((entry) => entry.fill ?? []))];
    if (fills.length > 0) steps.push(cacheFolderStep(path, cache.installer));
    for (const command of fills) {
      steps.push({
        kind: "install",
        command,
        why: `the ${cache.installer} cache at ${path}: a verifier installs this at test time, without network`,
        optional: true,
        timeoutSeconds: 900,
      });
    }
  }
  return { records, steps, setupEnv, runEnv };
}

function cacheFolderStep(path: string, installer: TestTimeInstaller): SetupStep {
  return {
    kind: "environment",
    command: `mkdir -p ${shellQuote(path)}`,
    why: `the ${installer} cache verifier-time installs are served from`,
  };
}
