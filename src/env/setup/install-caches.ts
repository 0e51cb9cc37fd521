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
 * - git: a requirement that is a git URL (pip clones it at every install) is served from a bare
 *   mirror setup clones into the environment; runs get `url.<mirror>.insteadOf <URL>` through
 *   `GIT_CONFIG_*` for exactly the URLs setup mirrored, so pip's clone reads the mirror.
 *
 * An install no cache can serve (a requirement fetched from another VCS or an archive URL at
 * every install, or an editable git clone) is recorded with its reason, so the check reports it
 * before any agent time is spent.
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
  /** Git repositories the requirement files name, mirrored by setup (pip): see {@link GitMirror}. */
  readonly mirrors?: readonly GitMirror[];
}

/**
 * A git repository a requirement names (`git+https://host/x.git@v1#egg=x`), cloned by setup into
 * the environment. Runs get git configuration (`url.<path>.insteadOf <url>`) so pip's own
 * `git clone <url>` reads this mirror: the same commits the repository names, without network.
 */
export interface GitMirror {
  /** What git is given to clone: the requirement's URL without `git+`, `@ref` or `#fragment`. */
  readonly url: string;
  /** The ref the requirement names after `@`, if any (else the default branch). */
  readonly ref?: string;
  /** Where the requirement is: `requirements/dev.txt:1`. */
  readonly where: string;
  /** The bare mirror inside the environment (read-only in runs). */
  readonly path: string;
  /** The commit the ref (or the default branch) resolved to when setup cloned it. */
  readonly commit?: string;
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
  readonly environmentPath: string;
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
    const mirrors: GitMirror[] = [];
    for (const file of files) {
      for (const remote of await remoteRequirements(context.repository, file, new Set())) {
        const where = `${remote.file}:${remote.line} is \`${remote.text}\`${remote.file === file ? "" : ` (${file} includes ${remote.file})`}`;
        const target = gitTarget(remote.text);
        if (typeof target === "string") {
          return { ...base, served: "unservable", reason: `${where}, ${target}` };
        }
        if (!mirrors.some((mirror) => mirror.url === target.url)) {
          mirrors.push({
            ...target,
            where: `${remote.file}:${remote.line}`,
            path: posix.join(context.environmentPath, GIT_MIRRORS, mirrorName(target.url)),
          });
        }
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
    const mirrored = mirrors.length === 0 ? {} : { mirrors };
    if (context.network !== "online") {
      return {
        ...base,
        served: "offline",
        ...mirrored,
        ...(mirrors.length === 0
          ? {}
          : {
              reason: `${mirrors.map((mirror) => `${mirror.where} names \`${mirror.url}\``).join(", ")}, which git clones at every install; setup mirrors it only with the network`,
            }),
      };
    }
    return {
      ...base,
      served: "cache",
      ...mirrored,
      fill: [
        ...mirrors.flatMap((mirror) => mirrorCommands(mirror, context.path)),
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
 * does setup (that would test other code than the repository names); a git URL is instead
 * served from a mirror of the same repository (see {@link gitTarget}).
 */
const REMOTE_REQUIREMENT =
  /^(?:(?:-e|--editable)[=\s]+)?[A-Za-z][\w+.-]*:\/\/|^[A-Za-z0-9][\w.-]*\s*(?:\[[^\]]*\])?\s*@\s*\S+:\/\//;

/**
 * The remote requirements of a requirement file and of the files it includes (`-r`, `-c`,
 * relative to the including file), with their file and line. Files outside the repository are
 * not read: pip in a run could not read them either.
 */
async function remoteRequirements(
  repository: string,
  file: string,
  seen: Set<string>,
): Promise<{ file: string; line: number; text: string }[]> {
  const path = posix.normalize(file);
  if (path.startsWith("../") || posix.isAbsolute(path) || seen.has(path)) return [];
  seen.add(path);
  const text = await readRepositoryFile(repository, path);
  if (text === undefined) return [];
  const found: { file: string; line: number; text: string }[] = [];
  for (const [index, raw] of text.split("\n").entries()) {
    // pip drops a comment only where `#` follows whitespace (`#egg=` in a URL stays).
    const line = raw.replace(/(^|\s)#.*$/, "").trim();
    if (REMOTE_REQUIREMENT.test(line)) found.push({ file: path, line: index + 1, text: line });
    const include = /^(?:-r|--requirement|-c|--constraint)(?:\s*=\s*|\s+)(\S+)$/.exec(line);
    if (include === null) continue;
    found.push(
      ...(await remoteRequirements(
        repository,
        posix.join(posix.dirname(path), include[1] as string),
        seen,
      )),
    );
  }
  return found;
}

/** The environment's folder of git mirrors. */
const GIT_MIRRORS = "git-mirrors";

/**
 * The git repository a remote requirement clones (pip's own reading: `git+` dropped, the
 * fragment dropped, and the last `@` of the path starts a ref), or why setup cannot mirror it.
 */
function gitTarget(requirement: string): { url: string; ref?: string } | string {
  const editable = /^(?:-e|--editable)[=\s]+/.test(requirement);
  const location = requirement
    .replace(/^(?:-e|--editable)[=\s]+/, "")
    .replace(/^[A-Za-z0-9][\w.-]*\s*(?:\[[^\]]*\])?\s*@\s*/, "")
    .split(/[\s;]/)[0] as string;
  const parsed = /^git\+((?:https?|git|ssh|file):\/\/)([^/]*)([^#]*)/.exec(location);
  if (parsed === null) {
    return "which pip fetches from its host at every install; no cache serves it offline (setup mirrors git repositories only)";
  }
  if (editable) {
    // pip clones an editable requirement into the environment's `src` folder, read-only in runs.
    return "an editable clone pip writes into the environment, which is read-only in runs; no cache serves it offline";
  }
  const [, scheme, host, rest] = parsed as unknown as [string, string, string, string];
  const at = rest.lastIndexOf("@");
  const path = at < 0 ? rest : rest.slice(0, at);
  const ref = at < 0 ? undefined : rest.slice(at + 1);
  return { url: `${scheme}${host}${path}`, ...(ref === undefined || ref === "" ? {} : { ref }) };
}

/** A folder name for a mirror: readable, and distinct for distinct URLs. */
function mirrorName(url: string): string {
  const readable = url
    .replace(/^\w+:\/\//, "")
    .replace(/[^\w.-]+/g, "_")
    .slice(0, 80);
  let hash = 0;
  for (const character of url) hash = (hash * 31 + (character.codePointAt(0) ?? 0)) >>> 0;
  return `${readable}-${hash.toString(16)}.git`;
}

/**
 * The setup commands that mirror one repository and make the build of its package possible
 * offline: a bare mirror (every ref, so `@ref` resolves as it would upstream), then the build
 * requirements its `pyproject.toml` declares at that ref, as wheels in the cache and installed
 * in the environment, because runs build without isolation (they cannot download a backend).
 */
function mirrorCommands(mirror: GitMirror, wheels: string): string[] {
  return [
    `rm -rf ${shellQuote(mirror.path)} && git clone --quiet --mirror ${shellQuote(mirror.url)} ${shellQuote(mirror.path)}`,
    `python -c ${shellQuote(BUILD_REQUIREMENTS)} ${shellQuote(mirror.path)} ${shellQuote(mirror.ref ?? "HEAD")} ${shellQuote(wheels)}`,
  ];
}

/** Reads `build-system.requires` at a ref of a mirror, then wheels and installs them. */
const BUILD_REQUIREMENTS = [
  "import subprocess, sys",
  "mirror, ref, wheels = sys.argv[1:4]",
  'shown = subprocess.run(["git", "--git-dir", mirror, "show", ref + ":pyproject.toml"], capture_output=True, text=True)',
  'requires = ["setuptools", "wheel"]',
  "if shown.returncode == 0:",
  "    import tomllib",
  '    requires = tomllib.loads(shown.stdout).get("build-system", {}).get("requires", requires)',
  "if requires:",
  '    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", wheels, *requires], check=True)',
  '    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", wheels, *requires], check=True)',
].join("\n");

/** Git configuration for runs: each mirrored URL read from its mirror, and nothing else. */
export function gitMirrorEnvironment(mirrors: readonly GitMirror[]): Record<string, string> {
  const unique = [...new Map(mirrors.map((mirror) => [mirror.url, mirror])).values()];
  if (unique.length === 0) return {};
  const environment: Record<string, string> = { GIT_CONFIG_COUNT: String(unique.length) };
  for (const [index, mirror] of unique.entries()) {
    environment[`GIT_CONFIG_KEY_${index}`] = `url.${mirror.path}.insteadOf`;
    environment[`GIT_CONFIG_VALUE_${index}`] = mirror.url;
  }
  return environment;
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
    Object.assign(runEnv, gitMirrorEnvironment(served.flatMap((entry) => entry.mirrors ?? [])));
    const fills = [...new Set(served.flatMap((entry) => entry.fill ?? []))];
    if (fills.length > 0) steps.push(cacheFolderStep(path, cache.installer));
    const mirrorFolders = [
      ...new Set(served.flatMap((entry) => entry.mirrors ?? []).map((mirror) => mirror.path)),
    ].map((mirror) => posix.dirname(mirror));
    if (fills.length > 0 && mirrorFolders.length > 0) {
      steps.push(cacheFolderStep(mirrorFolders[0] as string, "git"));
    }
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

function cacheFolderStep(path: string, installer: TestTimeInstaller | "git"): SetupStep {
  return {
    kind: "environment",
    command: `mkdir -p ${shellQuote(path)}`,
    why: `the ${installer} cache verifier-time installs are served from`,
  };
}
