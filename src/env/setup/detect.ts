import { readdir } from "node:fs/promises";
import { basename, posix } from "node:path";
import { unlessMissing } from "../../core/fs.js";
import { detectGo, detectJava, detectNode, detectRuby, detectRust } from "./ecosystems.js";
import { planInstallCaches } from "./install-caches.js";
import {
  type Context,
  DEFAULT_PYTHON,
  type Detection,
  type DetectSetupOptions,
  defaultImages,
  PREPARED_ENVIRONMENT_PATH,
  pipEnvironment,
  type SetupLanguage,
  type SetupNetwork,
  type SetupPlan,
  type SetupStep,
  type Toolchain,
  toolchains,
} from "./plan.js";
import { inspectPythonProject, type PythonProject, shellQuote } from "./python.js";

// The plan's types and defaults live in plan.ts, the non-Python detectors in ecosystems.ts;
// they are re-exported here because callers across src/ and test/ import them from this module.
export {
  DEFAULT_PYTHON,
  type DetectSetupOptions,
  type EnvironmentLayout,
  PREPARED_ENVIRONMENT_PATH,
  type SetupLanguage,
  type SetupNetwork,
  type SetupPlan,
  type SetupStep,
  SYSTEM_PATH,
  type Toolchain,
} from "./plan.js";

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
      // No configuration file either (a user's or an image's pip.conf may name a find-links
      // folder or an index): what pip installs in a run comes from the environment alone.
      PIP_CONFIG_FILE: "/dev/null",
      PIP_RETRIES: "0",
      PIP_TIMEOUT: "5",
      // pip reads PIP_NO_BUILD_ISOLATION as the value of `build_isolation`: 0 turns it off.
      PIP_NO_BUILD_ISOLATION: "0",
    });
  }
  // Caches for the verifiers' own installs come last: setup's install of the repository may
  // already fill them (npm), and a package that cannot be fetched leaves the rest usable.
  const caches = await planInstallCaches(options.testTimeInstalls ?? [], {
    repository,
    network,
    environmentPath: context.environmentPath,
    primaryLanguage: language,
  });
  steps.push(...caches.steps);
  Object.assign(setupEnv, caches.setupEnv);
  Object.assign(runEnv, caches.runEnv);
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
    ...(caches.records.length === 0 ? {} : { caches: caches.records }),
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
    const backend = project.backendModule ?? "setuptools";
    steps.push({
      kind: "install",
      command: `python -m pip install --quiet -e ${shellQuote(target)}`,
      why:
        project.testExtra === undefined
          ? "the project itself in editable mode, so tests import the working tree"
          : `the project in editable mode with its "${project.testExtra}" extra (the test tools)`,
      // An index that lacks a dependency (a partial mirror) fails the install: what an offline
      // setup does then, recorded as a fallback in the setup log, instead of no environment.
      fallback: {
        kind: "install",
        command: `python -c ${shellQuote(`import ${backend}`)} && python -m pip install --no-index --no-build-isolation --no-deps -e .`,
        why: `the online install failed (its output is above): the editable install offline, with the build backend present (${project.buildBackend ?? backend}) and without dependencies`,
        timeoutSeconds: 300,
        fallback: pathEntry,
      },
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
        // A partial mirror that lacks one of them (pypa/packaging's `pretend`) fails the group
        // as a whole: the rest are still worth installing, and the log names what was not.
        fallback: {
          kind: "install",
          command: `for requirement in ${project.testGroup.map(shellQuote).join(" ")}; do python -m pip install --quiet "$requirement" || echo "not installed: $requirement" >&2; done`,
          why: `the group's install failed (its output is above): each of its packages on its own, so those the index has are installed`,
        },
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
