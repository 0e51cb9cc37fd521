import { readdir } from "node:fs/promises";
import { basename, posix } from "node:path";
import { unlessMissing } from "../../core/fs.js";
import {
  inspectPythonProject,
  type PythonProject,
  readRepositoryFile,
  shellQuote,
} from "./python.js";

export type SetupLanguage = "python" | "node" | "go" | "rust" | "java" | "ruby" | "unknown";

/**
 * Whether setup may download: `online` runs the ecosystem's installer against its index;
 * `offline` uses only what is already on the machine (or in the image) and says what it did.
 */
export type SetupNetwork = "online" | "offline";

/**
 * Where a prepared environment (a Python virtual environment, Go/Cargo/Maven caches) is placed
 * inside sandboxes: outside the repository, so agents' diffs never include it, and mounted
 * read-only into every agent and verifier run.
 */
export const PREPARED_ENVIRONMENT_PATH = "/skillsmith-env";

/**
 * The PATH of runs in a prepared environment after its own `bin`: system folders only. The
 * caller's PATH is never used, because it may start with a user's interpreter (pyenv's, under a
 * home directory the sandbox hides) that lacks what the environment installed.
 */
export const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The Python every environment is built from unless the caller names another. */
export const DEFAULT_PYTHON = "/usr/bin/python3";

/** One setup command and why it runs. */
export interface SetupStep {
  /**
   * `toolchain`: the language's programs are there; `environment`: the prepared environment
   * itself (a virtual environment); `install`: the repository's dependencies or the project.
   */
  readonly kind: "toolchain" | "environment" | "install";
  /** Shell command (`sh -c`), run in the repository root. */
  readonly command: string;
  readonly why: string;
  /**
   * A step whose failure still leaves a usable environment (an offline install of what may
   * already be present): its failure is recorded and shown, and setup goes on.
   */
  readonly optional?: boolean;
  /** Run when this step fails; the step's failure is then recorded but not fatal. */
  readonly fallback?: SetupStep;
  /** Per-step wall-clock limit; the caller's default applies when absent. */
  readonly timeoutSeconds?: number;
}

/** The programs setup needs, and the Debian packages that provide them (for image layers). */
export interface Toolchain {
  readonly programs: readonly string[];
  readonly debianPackages: readonly string[];
}

/** Folders and variables that make a prepared environment the one runs use. */
export interface EnvironmentLayout {
  /** Sandbox path of the environment folder. */
  readonly path: string;
  /** Sandbox folders put first on PATH (the virtual environment's `bin`). */
  readonly binPaths: readonly string[];
  /** Variables for agent and verifier runs. */
  readonly runEnv: Readonly<Record<string, string>>;
  /** Variables for the setup steps themselves (runs get `runEnv` only). */
  readonly setupEnv: Readonly<Record<string, string>>;
}

/** What to install before agents run, and why: the AutoDocker step of the evaluation protocol. */
export interface SetupPlan {
  readonly language: SetupLanguage;
  /** A language-appropriate image for container sandboxes. */
  readonly baseImage: string;
  readonly network: SetupNetwork;
  /** Commands in order, each with its reason. */
  readonly steps: readonly SetupStep[];
  /** The steps' commands (without fallbacks), for display and compatibility. */
  readonly commands: readonly string[];
  /** One line per decision: which file led to which choice and why. */
  readonly reasons: readonly string[];
  /** `explicit` when the caller's commands were used, `detected` otherwise. */
  readonly origin: "explicit" | "detected";
  readonly toolchain: Toolchain;
  /** Absent when nothing is prepared outside the repository (no Python, no caches). */
  readonly environment?: EnvironmentLayout;
  readonly python?: PythonProject & { readonly interpreter: string };
}

export interface DetectSetupOptions {
  /** Explicit setup commands always win over detection (an empty list means "install nothing"). */
  readonly commands?: readonly string[];
  /** Default `online` (the ecosystem's installer with its index). */
  readonly network?: SetupNetwork;
  /** Where the environment appears in sandboxes; default `PREPARED_ENVIRONMENT_PATH`. */
  readonly environmentPath?: string;
  /** Where the repository appears in sandboxes (for path entries); default `/workspace/<name>`. */
  readonly workspaceMountPath?: string;
  /** The interpreter virtual environments are made from; default `/usr/bin/python3`. */
  readonly pythonInterpreter?: string;
  /**
   * The verifiers are Python (pytest) whatever the repository's language: prepare a Python
   * environment for them too, so `python` means the prepared interpreter.
   */
  readonly verifierNeedsPython?: boolean;
  /**
   * `image`: setup runs while building a container image, so a missing toolchain can be
   * installed from Debian's archive (online only); `host`: it runs in a sandbox over the host's
   * read-only system, so a missing toolchain is only reported.
   */
  readonly target?: "host" | "image";
}

const defaultImages: Readonly<Record<SetupLanguage, string>> = {
  python: "python:3.12-slim",
  node: "node:20-bookworm-slim",
  go: "golang:1.22-bookworm",
  rust: "rust:1-slim-bookworm",
  java: "maven:3.9-eclipse-temurin-17",
  ruby: "ruby:3.3-slim-bookworm",
  unknown: "debian:bookworm-slim",
};

const toolchains: Readonly<Record<SetupLanguage, Toolchain>> = {
  python: { programs: ["python3"], debianPackages: ["python3", "python3-venv", "python3-pip"] },
  node: { programs: ["node", "npm"], debianPackages: ["nodejs", "npm"] },
  go: { programs: ["go"], debianPackages: ["golang-go"] },
  rust: { programs: ["cargo"], debianPackages: ["cargo"] },
  java: { programs: ["java", "mvn"], debianPackages: ["default-jdk-headless", "maven"] },
  ruby: { programs: ["ruby", "bundle"], debianPackages: ["ruby", "bundler"] },
  unknown: { programs: [], debianPackages: [] },
};

/** pip without prompts, version checks or long retries; offline it never looks for an index. */
function pipEnvironment(network: SetupNetwork): Record<string, string> {
  return network === "online"
    ? {
        PIP_DISABLE_PIP_VERSION_CHECK: "1",
        PIP_NO_INPUT: "1",
        PIP_RETRIES: "2",
        PIP_TIMEOUT: "30",
      }
    : {
        PIP_DISABLE_PIP_VERSION_CHECK: "1",
        PIP_NO_INPUT: "1",
        // Offline, pip would otherwise retry an unreachable index five times per package, with
        // back-off (408 s for one install was seen on fastapi).
        PIP_NO_INDEX: "1",
        PIP_RETRIES: "0",
        PIP_TIMEOUT: "5",
      };
}

interface Detection {
  readonly language: Exclude<SetupLanguage, "unknown">;
  readonly baseImage: string;
  readonly steps: readonly SetupStep[];
  readonly reasons: readonly string[];
  readonly runEnv?: Readonly<Record<string, string>>;
  readonly setupEnv?: Readonly<Record<string, string>>;
  readonly python?: PythonProject;
}

interface Context {
  readonly repository: string;
  readonly names: ReadonlySet<string>;
  readonly network: SetupNetwork;
  readonly environmentPath: string;
  readonly workspaceMountPath: string;
  readonly interpreter: string;
}

/**
 * Decide the language, base image and setup steps for a checked-out repository from the
 * manifests and lock files in its root folder. When several ecosystems are present, the first
 * in the order python, node, go, rust, java, ruby is the primary one (its image is chosen and its
 * install runs); the others are reported in `reasons` but not installed, because one base image
 * carries one toolchain. Pass explicit `commands` to override the install steps.
 *
 * Online, each ecosystem's installer runs against its index. Offline, only what is already
 * present is used: a Python repository gets a virtual environment that sees the system's
 * site-packages, then an editable install without build isolation (when its build backend is
 * installed) or, failing that, a path entry for its source root — what an editable install
 * would have put on `sys.path`. Offline installs of dependencies are optional steps: they
 * succeed when everything is present and are recorded, not fatal, when something is not.
 */
export async function detectSetup(
  repository: string,
  options: DetectSetupOptions = {},
): Promise<SetupPlan> {
  // A repository folder that is not there detects as empty; one that is there but unreadable
  // is an input error naming it, never an empty plan.
  const names = new Set((await unlessMissing(repository, readdir(repository))) ?? []);
  const network = options.network ?? "online";
  const context: Context = {
    repository,
    names,
    network,
    environmentPath: options.environmentPath ?? PREPARED_ENVIRONMENT_PATH,
    workspaceMountPath: options.workspaceMountPath ?? `/workspace/${basename(repository)}`,
    interpreter: options.pythonInterpreter ?? DEFAULT_PYTHON,
  };
  const detections: Detection[] = [];
  for (const detect of [detectPython, detectNode, detectGo, detectRust, detectJava, detectRuby]) {
    const found = await detect(context);
    if (found !== undefined) detections.push(found);
  }
  const [primary, ...others] = detections;
  const reasons: string[] = [];
  const otherReasons = others.map(
    (other) =>
      `also found a ${other.language} project (${other.reasons[0] ?? "manifest"}); not installed because the primary language is ${primary?.language ?? "unknown"} and its image carries one toolchain`,
  );
  const language = primary?.language ?? "unknown";
  const needsPython = language === "python" || options.verifierNeedsPython === true;
  const steps: SetupStep[] = [];
  const toolchainSteps = toolchainCheck(language, options.target ?? "host", network, needsPython);
  steps.push(...toolchainSteps);
  if (needsPython) {
    steps.push(virtualEnvironmentStep(context));
    if (language !== "python") {
      reasons.push(
        `the verifiers run Python: a virtual environment from ${context.interpreter} (seeing the system's site-packages) makes \`python\` the prepared interpreter`,
      );
    }
  }

  let origin: SetupPlan["origin"] = "detected";
  if (options.commands !== undefined) {
    origin = "explicit";
    reasons.push(
      `explicit setup commands given (${options.commands.length}); detection is not used for the install step`,
      primary === undefined
        ? "no manifest found: using a plain Debian image"
        : `image chosen from detection: ${primary.reasons[0] ?? primary.language}`,
    );
    for (const command of options.commands) {
      steps.push({ kind: "install", command, why: "explicit setup command" });
    }
  } else if (primary === undefined) {
    reasons.push(
      "no known manifest or lock file in the repository root: nothing to install, plain Debian image",
    );
  } else {
    reasons.push(...primary.reasons);
    steps.push(...primary.steps);
  }
  reasons.push(...otherReasons);

  const runEnv: Record<string, string> = { ...(primary?.runEnv ?? {}) };
  const setupEnv: Record<string, string> = { ...(primary?.setupEnv ?? {}) };
  const binPaths: string[] = [];
  if (needsPython) {
    binPaths.push(posix.join(context.environmentPath, "bin"));
    runEnv.VIRTUAL_ENV = context.environmentPath;
    setupEnv.VIRTUAL_ENV = context.environmentPath;
    Object.assign(setupEnv, pipEnvironment(network));
    // Verifier runs have no network: pip in them must neither wait for an index nor build in
    // an isolated environment it cannot download (it uses the build tools present instead).
    Object.assign(runEnv, {
      PIP_DISABLE_PIP_VERSION_CHECK: "1",
      PIP_NO_INPUT: "1",
      PIP_NO_INDEX: "1",
      PIP_RETRIES: "0",
      PIP_TIMEOUT: "5",
      // pip reads PIP_NO_BUILD_ISOLATION as the value of `build_isolation`: 0 turns it off.
      PIP_NO_BUILD_ISOLATION: "0",
    });
  }
  const usesEnvironment =
    needsPython || Object.keys(runEnv).length > 0 || Object.keys(setupEnv).length > 0;
  const pythonProject = primary?.python;
  return {
    language,
    baseImage: primary?.baseImage ?? defaultImages.unknown,
    network,
    steps,
    commands: steps.map((step) => step.command),
    reasons,
    origin,
    toolchain: mergeToolchains(language, needsPython),
    ...(usesEnvironment
      ? {
          environment: {
            path: context.environmentPath,
            binPaths,
            runEnv,
            setupEnv,
          },
        }
      : {}),
    ...(needsPython
      ? {
          python: {
            ...(pythonProject ?? { sourceRoots: [], reasons: [] }),
            interpreter: context.interpreter,
          },
        }
      : {}),
  };
}

function mergeToolchains(language: SetupLanguage, needsPython: boolean): Toolchain {
  const own = toolchains[language];
  if (!needsPython || language === "python") return own;
  return {
    programs: [...new Set([...own.programs, ...toolchains.python.programs])],
    debianPackages: [...new Set([...own.debianPackages, ...toolchains.python.debianPackages])],
  };
}

/**
 * The toolchain step. In an image built online, a missing toolchain is installed from Debian's
 * archive; anywhere else its absence is reported (an optional check) so the log says why later
 * steps fail.
 */
function toolchainCheck(
  language: SetupLanguage,
  target: "host" | "image",
  network: SetupNetwork,
  needsPython: boolean,
): SetupStep[] {
  const toolchain = mergeToolchains(language, needsPython);
  if (toolchain.programs.length === 0) return [];
  const present = toolchain.programs
    .map((program) => `command -v ${program} >/dev/null 2>&1`)
    .join(" && ");
  if (target === "image" && network === "online") {
    return [
      {
        kind: "toolchain",
        command: `${present} || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${toolchain.debianPackages.join(" ")}; }`,
        why: `the ${language === "unknown" ? "verifiers'" : language} toolchain (${toolchain.programs.join(", ")}); installed from Debian's archive when the base image lacks it`,
      },
    ];
  }
  return [
    {
      kind: "toolchain",
      command: `${present} || { echo "missing toolchain: ${toolchain.programs.join(", ")} (Debian packages: ${toolchain.debianPackages.join(" ")})" >&2; exit 127; }`,
      why: `check that the ${language === "unknown" ? "verifiers'" : language} toolchain (${toolchain.programs.join(", ")}) is present; it cannot be installed ${target === "image" ? "offline" : "on the host's read-only system"}`,
      optional: true,
    },
  ];
}

/**
 * A virtual environment from an explicit interpreter that sees the system's site-packages (so
 * what the machine or image already has — pytest, Debian's python3-* packages — stays
 * importable), without its own pip (the system's pip module serves it through `python -m pip`;
 * `pip`/`pip3` are small scripts doing exactly that, so explicit `pip install` commands install
 * into the environment).
 */
function virtualEnvironmentStep(context: Context): SetupStep {
  const environment = shellQuote(context.environmentPath);
  const shim = `#!/bin/sh\\nexec "$(dirname "$0")/python" -m pip "$@"\\n`;
  return {
    kind: "environment",
    command: [
      `${shellQuote(context.interpreter)} -m venv --system-site-packages --without-pip ${environment}`,
      `for name in pip pip3; do printf '${shim}' > ${environment}/bin/$name && chmod 755 ${environment}/bin/$name; done`,
    ].join(" && "),
    why: `virtual environment at ${context.environmentPath} from ${context.interpreter}, seeing the system's site-packages; pip and pip3 run that interpreter's pip`,
  };
}

/** `printf` a .pth file naming the source roots into the environment's site-packages. */
function pathEntryStep(context: Context, project: PythonProject): SetupStep {
  const entries = project.sourceRoots.map((root) =>
    root === "." ? context.workspaceMountPath : posix.join(context.workspaceMountPath, root),
  );
  const file = `skillsmith-${(project.name ?? "repository").replace(/[^A-Za-z0-9_.-]/g, "_")}.pth`;
  const site = `"$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"`;
  return {
    kind: "install",
    command: `printf '%s\\n' ${entries.map(shellQuote).join(" ")} > ${site}/${file}`,
    why: `path entry ${file} for ${entries.join(", ")}: the source root${entries.length === 1 ? "" : "s"} an editable install would put on sys.path (no package metadata is installed this way)`,
  };
}

async function detectPython(context: Context): Promise<Detection | undefined> {
  const { names, network } = context;
  const requirements = [...names]
    .filter((name) => /^requirements.*\.txt$/.test(name))
    // requirements.txt first, then the others alphabetically, so runtime deps go in before extras.
    .sort((left, right) =>
      left === "requirements.txt" ? -1 : right === "requirements.txt" ? 1 : left < right ? -1 : 1,
    );
  const hasProject = names.has("pyproject.toml") || names.has("setup.py") || names.has("setup.cfg");
  if (
    !hasProject &&
    requirements.length === 0 &&
    !names.has("uv.lock") &&
    !names.has("poetry.lock")
  )
    return undefined;
  const project = await inspectPythonProject(context.repository, names);
  const base = { language: "python" as const, baseImage: defaultImages.python, python: project };
  const steps: SetupStep[] = [];
  const reasons: string[] = [...project.reasons];
  const pathEntry = pathEntryStep(context, project);

  if (network === "offline") {
    if (hasProject) {
      const backend = project.backendModule ?? "setuptools";
      steps.push({
        kind: "install",
        command: `python -c ${shellQuote(`import ${backend}`)} && python -m pip install --no-index --no-build-isolation --no-deps -e .`,
        why: `offline editable install with the build backend already present (${project.buildBackend ?? backend}), no build isolation, no dependency downloads`,
        timeoutSeconds: 300,
        fallback: pathEntry,
      });
      reasons.push(
        "offline: editable install without build isolation when the build backend is installed, otherwise a path entry for the source root",
      );
    } else {
      steps.push(pathEntry);
      reasons.push("offline: no project manifest, so a path entry for the repository root");
    }
    for (const file of requirements) {
      steps.push({
        kind: "install",
        command: `python -m pip install --no-index -r ${shellQuote(file)}`,
        why: `${file}: offline, installs only if every requirement is already present; otherwise recorded and skipped`,
        optional: true,
        timeoutSeconds: 300,
      });
    }
    if (names.has("uv.lock") || names.has("poetry.lock")) {
      reasons.push(
        `${names.has("uv.lock") ? "uv.lock" : "poetry.lock"}: its installer needs the network; offline the locked dependencies must already be present`,
      );
    }
    return { ...base, steps, reasons };
  }

  if (names.has("uv.lock")) {
    steps.push(
      {
        kind: "install",
        command: "python -m pip install --quiet uv",
        why: "uv, to install from uv.lock",
      },
      {
        kind: "install",
        command: `UV_PROJECT_ENVIRONMENT=${shellQuote(context.environmentPath)} uv sync --frozen --inexact`,
        why: "uv.lock: a uv lock file pins exact versions, so `uv sync --frozen` installs them into the environment without re-resolving",
      },
    );
    reasons.push("uv.lock: installed with uv sync --frozen");
    return { ...base, steps, reasons };
  }
  if (names.has("poetry.lock")) {
    steps.push(
      {
        kind: "install",
        command: "python -m pip install --quiet poetry",
        why: "Poetry, to install from poetry.lock",
      },
      {
        kind: "install",
        command: "POETRY_VIRTUALENVS_CREATE=false poetry install --no-interaction",
        why: "poetry.lock: `poetry install` installs the locked versions into the active environment",
      },
    );
    reasons.push("poetry.lock: installed with poetry install into the prepared environment");
    return { ...base, steps, reasons };
  }
  if (hasProject) {
    const target = project.testExtra === undefined ? "." : `.[${project.testExtra}]`;
    steps.push({
      kind: "install",
      command: `python -m pip install --quiet -e ${shellQuote(target)}`,
      why:
        project.testExtra === undefined
          ? "the project itself in editable mode, so tests import the working tree"
          : `the project in editable mode with its "${project.testExtra}" extra (the test tools)`,
    });
    reasons.push(
      project.testExtra === undefined
        ? "project manifest without a lock file: install the project itself in editable mode so tests import the working tree"
        : `the project declares a "${project.testExtra}" extra: installed too, for the test tools`,
    );
    if (project.testGroup !== undefined && project.testGroup.length > 0) {
      steps.push({
        kind: "install",
        command: `python -m pip install --quiet ${project.testGroup.map(shellQuote).join(" ")}`,
        why: `dependency group "${project.testGroupName}" (PEP 735), installed by name`,
      });
    }
  }
  for (const file of requirements) {
    steps.push({
      kind: "install",
      command: `python -m pip install --quiet -r ${shellQuote(file)}`,
      why: `${file}: pip requirements file, installed with pip -r`,
    });
    reasons.push(`${file}: installed with pip -r`);
  }
  if (!hasProject) steps.push(pathEntry);
  return { ...base, steps, reasons };
}

async function detectNode(context: Context): Promise<Detection | undefined> {
  const { names, network } = context;
  const base = {
    language: "node" as const,
    baseImage: defaultImages.node,
    setupEnv: { npm_config_cache: posix.join(context.environmentPath, "npm-cache") },
  };
  const offline = network === "offline";
  const offlineNote = offline
    ? "; offline, from the local cache only (recorded and skipped when it lacks a package)"
    : "";
  const step = (command: string, why: string): SetupStep =>
    offline
      ? { kind: "install", command, why: `${why}${offlineNote}`, optional: true }
      : { kind: "install", command, why };
  if (names.has("package-lock.json") || names.has("npm-shrinkwrap.json")) {
    const lock = names.has("package-lock.json") ? "package-lock.json" : "npm-shrinkwrap.json";
    const why = `${lock}: npm lock file, so \`npm ci\` installs exactly the locked tree`;
    return {
      ...base,
      steps: [step(`npm ci --no-audit --no-fund${offline ? " --offline" : ""}`, why)],
      reasons: [why],
    };
  }
  if (names.has("pnpm-lock.yaml")) {
    const why =
      "pnpm-lock.yaml: pnpm lock file; pnpm comes from corepack and installs with --frozen-lockfile";
    return {
      ...base,
      steps: [
        step("corepack enable", "pnpm through corepack"),
        step(`pnpm install --frozen-lockfile${offline ? " --offline" : ""}`, why),
      ],
      reasons: [why],
    };
  }
  if (names.has("yarn.lock")) {
    // Yarn 2+ ("berry") projects carry .yarnrc.yml and spell the frozen install differently.
    const berry = names.has(".yarnrc.yml");
    const why = berry
      ? "yarn.lock with .yarnrc.yml: Yarn 2+, installed with --immutable"
      : "yarn.lock: Yarn 1 lock file, installed with --frozen-lockfile";
    return {
      ...base,
      steps: [
        step("corepack enable", "yarn through corepack"),
        step(
          berry
            ? "yarn install --immutable"
            : `yarn install --frozen-lockfile${offline ? " --offline" : ""}`,
          why,
        ),
      ],
      reasons: [why],
    };
  }
  if (names.has("package.json")) {
    const manifest = (await readRepositoryFile(context.repository, "package.json")) ?? "";
    const hasDependencies = /"(dev)?[dD]ependencies"\s*:\s*\{\s*"/.test(manifest);
    const why = hasDependencies
      ? "package.json without a lock file: `npm install` resolves the declared ranges (not reproducible across time; a lock file would pin them)"
      : "package.json declares no dependencies: nothing to install";
    return {
      ...base,
      steps: hasDependencies
        ? [step(`npm install --no-audit --no-fund${offline ? " --offline" : ""}`, why)]
        : [],
      reasons: [why],
    };
  }
  return undefined;
}

async function detectGo(context: Context): Promise<Detection | undefined> {
  if (!context.names.has("go.mod")) return undefined;
  const goMod = (await readRepositoryFile(context.repository, "go.mod")) ?? "";
  const version = /^go\s+(\d+\.\d+)/m.exec(goMod)?.[1];
  const cache = posix.join(context.environmentPath, "go");
  const offline = context.network === "offline";
  const why = `go.mod: a Go module; \`go mod download\` fetches the modules pinned by go.sum into the environment's module cache${
    version === undefined ? "" : `; image matches its \`go ${version}\` directive`
  }`;
  return {
    language: "go",
    baseImage: version === undefined ? defaultImages.go : `golang:${version}-bookworm`,
    steps: [
      offline
        ? {
            kind: "install",
            command: "GOPROXY=off go mod download",
            why: `${why}; offline, only modules already in the cache (recorded and skipped otherwise)`,
            optional: true,
          }
        : { kind: "install", command: "go mod download", why },
    ],
    reasons: [why],
    // Runs read modules from the prepared cache and never try to download a toolchain or module.
    runEnv: {
      GOMODCACHE: posix.join(cache, "pkg", "mod"),
      GOPROXY: "off",
      GOTOOLCHAIN: "local",
    },
    setupEnv: { GOPATH: cache, GOMODCACHE: posix.join(cache, "pkg", "mod"), GOTOOLCHAIN: "local" },
  };
}

async function detectRust(context: Context): Promise<Detection | undefined> {
  const { names } = context;
  if (!names.has("Cargo.toml")) return undefined;
  const locked = names.has("Cargo.lock");
  const why = locked
    ? "Cargo.toml with Cargo.lock: `cargo fetch --locked` downloads the locked crates"
    : "Cargo.toml: `cargo fetch` downloads the crates (no Cargo.lock, so versions are resolved now)";
  const offline = context.network === "offline";
  return {
    language: "rust",
    baseImage: defaultImages.rust,
    steps: [
      offline
        ? {
            kind: "install",
            command: `cargo fetch --offline${locked ? " --locked" : ""}`,
            why: `${why}; offline, only crates already in the cache (recorded and skipped otherwise)`,
            optional: true,
          }
        : { kind: "install", command: locked ? "cargo fetch --locked" : "cargo fetch", why },
    ],
    reasons: [why],
    setupEnv: { CARGO_HOME: posix.join(context.environmentPath, "cargo") },
    runEnv: { CARGO_NET_OFFLINE: "true" },
  };
}

async function detectJava(context: Context): Promise<Detection | undefined> {
  const { names } = context;
  const offline = context.network === "offline";
  const repository = posix.join(context.environmentPath, "m2");
  if (names.has("pom.xml")) {
    const maven = names.has("mvnw") ? "./mvnw" : "mvn";
    const why = `pom.xml: a Maven project; dependency:go-offline downloads what later offline builds need${
      names.has("mvnw") ? " (through the project's wrapper, mvnw)" : ""
    }`;
    return {
      language: "java",
      baseImage: defaultImages.java,
      steps: [
        offline
          ? {
              kind: "install",
              command: `${maven} -B -q -o -Dmaven.repo.local=${repository} dependency:go-offline`,
              why: `${why}; offline, from the local repository only (recorded and skipped otherwise)`,
              optional: true,
            }
          : {
              kind: "install",
              command: `${maven} -B -q -Dmaven.repo.local=${repository} dependency:go-offline`,
              why,
            },
      ],
      reasons: [why],
      runEnv: { MAVEN_ARGS: `-o -Dmaven.repo.local=${repository}` },
    };
  }
  const gradleFile = ["build.gradle.kts", "build.gradle"].find((name) => names.has(name));
  if (gradleFile === undefined) return undefined;
  const gradle = names.has("gradlew") ? "./gradlew" : "gradle";
  const why = `${gradleFile}: a Gradle project; resolving \`dependencies\` downloads them into the cache${
    names.has("gradlew") ? " (through the project's wrapper, gradlew)" : ""
  }`;
  return {
    language: "java",
    baseImage: "gradle:8-jdk17",
    steps: [
      offline
        ? {
            kind: "install",
            command: `${gradle} --no-daemon -q --offline dependencies`,
            why: `${why}; offline, from the cache only (recorded and skipped otherwise)`,
            optional: true,
          }
        : { kind: "install", command: `${gradle} --no-daemon -q dependencies`, why },
    ],
    reasons: [why],
    setupEnv: { GRADLE_USER_HOME: posix.join(context.environmentPath, "gradle") },
  };
}

async function detectRuby(context: Context): Promise<Detection | undefined> {
  const { names } = context;
  if (!names.has("Gemfile")) return undefined;
  const locked = names.has("Gemfile.lock");
  const why = locked
    ? "Gemfile with Gemfile.lock: bundle install in deployment mode installs exactly the locked gems"
    : "Gemfile: bundle install resolves and installs the gems";
  const offline = context.network === "offline";
  const bundlePath = posix.join(context.environmentPath, "bundle");
  return {
    language: "ruby",
    baseImage: defaultImages.ruby,
    steps: [
      offline
        ? {
            kind: "install",
            command: "bundle install --local",
            why: `${why}; offline, from gems already installed (recorded and skipped otherwise)`,
            optional: true,
          }
        : {
            kind: "install",
            command: locked ? "BUNDLE_DEPLOYMENT=true bundle install" : "bundle install",
            why,
          },
    ],
    reasons: [why],
    runEnv: { BUNDLE_PATH: bundlePath },
    setupEnv: { BUNDLE_PATH: bundlePath },
  };
}
