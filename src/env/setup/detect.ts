import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

export type SetupLanguage = "python" | "node" | "go" | "rust" | "java" | "ruby" | "unknown";

/** What to install before agents run, and why: the AutoDocker step of the evaluation protocol. */
export interface SetupPlan {
  readonly language: SetupLanguage;
  /** A language-appropriate image for container sandboxes. */
  readonly baseImage: string;
  /** Shell commands run in the repository root, in order, with network access. */
  readonly commands: readonly string[];
  /** One line per decision: which file led to which choice and why. */
  readonly reasons: readonly string[];
  /** `explicit` when the caller's commands were used, `detected` otherwise. */
  readonly origin: "explicit" | "detected";
}

export interface DetectSetupOptions {
  /** Explicit setup commands always win over detection (an empty list means "install nothing"). */
  readonly commands?: readonly string[];
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

interface Detection {
  readonly language: Exclude<SetupLanguage, "unknown">;
  readonly baseImage: string;
  readonly commands: readonly string[];
  readonly reasons: readonly string[];
}

/**
 * Decide the language, base image and install commands for a checked-out repository from the
 * manifests and lock files in its root folder. When several ecosystems are present, the first
 * in the order python, node, go, rust, java, ruby is the primary one (its image is chosen and its
 * install runs); the others are reported in `reasons` but not installed, because one base image
 * carries one toolchain. Pass explicit `commands` to override.
 */
export async function detectSetup(
  repository: string,
  options: DetectSetupOptions = {},
): Promise<SetupPlan> {
  const names = new Set(await readdir(repository).catch(() => [] as string[]));
  const detections: Detection[] = [];
  for (const detect of [detectPython, detectNode, detectGo, detectRust, detectJava, detectRuby]) {
    const found = await detect(repository, names);
    if (found !== undefined) detections.push(found);
  }
  const [primary, ...others] = detections;
  const otherReasons = others.map(
    (other) =>
      `also found a ${other.language} project (${other.reasons[0] ?? "manifest"}); not installed because the primary language is ${primary?.language ?? "unknown"} and its image carries one toolchain`,
  );
  if (options.commands !== undefined) {
    return {
      language: primary?.language ?? "unknown",
      baseImage: primary?.baseImage ?? defaultImages.unknown,
      commands: [...options.commands],
      reasons: [
        `explicit setup commands given (${options.commands.length}); detection is not used for the install step`,
        ...(primary === undefined
          ? ["no manifest found: using a plain Debian image"]
          : [`image chosen from detection: ${primary.reasons[0] ?? primary.language}`]),
        ...otherReasons,
      ],
      origin: "explicit",
    };
  }
  if (primary === undefined) {
    return {
      language: "unknown",
      baseImage: defaultImages.unknown,
      commands: [],
      reasons: [
        "no known manifest or lock file in the repository root: nothing to install, plain Debian image",
      ],
      origin: "detected",
    };
  }
  return {
    language: primary.language,
    baseImage: primary.baseImage,
    commands: primary.commands,
    reasons: [...primary.reasons, ...otherReasons],
    origin: "detected",
  };
}

async function detectPython(
  repository: string,
  names: ReadonlySet<string>,
): Promise<Detection | undefined> {
  const requirements = [...names]
    .filter((name) => /^requirements.*\.txt$/.test(name))
    // requirements.txt first, then the others alphabetically, so runtime deps go in before extras.
    .sort((left, right) =>
      left === "requirements.txt" ? -1 : right === "requirements.txt" ? 1 : left < right ? -1 : 1,
    );
  const hasPyproject = names.has("pyproject.toml");
  const base = { language: "python" as const, baseImage: defaultImages.python };
  if (names.has("uv.lock")) {
    return {
      ...base,
      commands: ["pip install --quiet uv", "uv sync --frozen"],
      reasons: [
        "uv.lock: a uv lock file pins exact versions, so `uv sync --frozen` installs them without re-resolving",
      ],
    };
  }
  if (names.has("poetry.lock")) {
    return {
      ...base,
      commands: [
        "pip install --quiet poetry",
        "poetry config virtualenvs.in-project true",
        "poetry install --no-interaction",
      ],
      reasons: [
        "poetry.lock: a Poetry lock file; `poetry install` installs the locked versions (virtualenv kept inside the workspace so every copy carries it)",
      ],
    };
  }
  if (hasPyproject) {
    const pyproject = await readFile(join(repository, "pyproject.toml"), "utf8").catch(() => "");
    const commands = ["pip install --quiet -e ."];
    const reasons = [
      "pyproject.toml without a lock file: install the project itself in editable mode so tests import the working tree",
    ];
    const extras =
      /^\s*\[project\.optional-dependencies\]\s*$([\s\S]*?)(?=^\s*\[|(?![\s\S]))/m.exec(
        pyproject,
      )?.[1];
    const extra = extras === undefined ? undefined : /^\s*(test|tests|dev)\s*=/m.exec(extras)?.[1];
    if (extra !== undefined) {
      commands[0] = `pip install --quiet -e '.[${extra}]'`;
      reasons.push(`pyproject.toml declares a "${extra}" extra: installed too, for the test tools`);
    }
    for (const file of requirements) {
      commands.push(`pip install --quiet -r ${file}`);
      reasons.push(`${file}: installed as well`);
    }
    return { ...base, commands, reasons };
  }
  if (requirements.length > 0) {
    return {
      ...base,
      commands: requirements.map((file) => `pip install --quiet -r ${file}`),
      reasons: requirements.map((file) => `${file}: pip requirements file, installed with pip -r`),
    };
  }
  if (names.has("setup.py")) {
    return {
      ...base,
      commands: ["pip install --quiet -e ."],
      reasons: ["setup.py: a setuptools project, installed in editable mode"],
    };
  }
  return undefined;
}

async function detectNode(
  repository: string,
  names: ReadonlySet<string>,
): Promise<Detection | undefined> {
  const base = { language: "node" as const, baseImage: defaultImages.node };
  if (names.has("package-lock.json") || names.has("npm-shrinkwrap.json")) {
    const lock = names.has("package-lock.json") ? "package-lock.json" : "npm-shrinkwrap.json";
    return {
      ...base,
      commands: ["npm ci --no-audit --no-fund"],
      reasons: [`${lock}: npm lock file, so \`npm ci\` installs exactly the locked tree`],
    };
  }
  if (names.has("pnpm-lock.yaml")) {
    return {
      ...base,
      commands: ["corepack enable", "pnpm install --frozen-lockfile"],
      reasons: [
        "pnpm-lock.yaml: pnpm lock file; pnpm comes from corepack and installs with --frozen-lockfile",
      ],
    };
  }
  if (names.has("yarn.lock")) {
    // Yarn 2+ ("berry") projects carry .yarnrc.yml and spell the frozen install differently.
    const berry = names.has(".yarnrc.yml");
    return {
      ...base,
      commands: [
        "corepack enable",
        berry ? "yarn install --immutable" : "yarn install --frozen-lockfile",
      ],
      reasons: [
        berry
          ? "yarn.lock with .yarnrc.yml: Yarn 2+, installed with --immutable"
          : "yarn.lock: Yarn 1 lock file, installed with --frozen-lockfile",
      ],
    };
  }
  if (names.has("package.json")) {
    const manifest = await readFile(join(repository, "package.json"), "utf8").catch(() => "");
    const hasDependencies = /"(dev)?[dD]ependencies"\s*:\s*\{\s*"/.test(manifest);
    return {
      ...base,
      commands: hasDependencies ? ["npm install --no-audit --no-fund"] : [],
      reasons: [
        hasDependencies
          ? "package.json without a lock file: `npm install` resolves the declared ranges (not reproducible across time; a lock file would pin them)"
          : "package.json declares no dependencies: nothing to install",
      ],
    };
  }
  return undefined;
}

async function detectGo(
  repository: string,
  names: ReadonlySet<string>,
): Promise<Detection | undefined> {
  if (!names.has("go.mod")) return undefined;
  const goMod = await readFile(join(repository, "go.mod"), "utf8").catch(() => "");
  const version = /^go\s+(\d+\.\d+)/m.exec(goMod)?.[1];
  return {
    language: "go",
    baseImage: version === undefined ? defaultImages.go : `golang:${version}-bookworm`,
    commands: ["go mod download"],
    reasons: [
      `go.mod: a Go module; \`go mod download\` fetches the modules pinned by go.sum${
        version === undefined ? "" : `; image matches its \`go ${version}\` directive`
      }`,
    ],
  };
}

async function detectRust(
  _repository: string,
  names: ReadonlySet<string>,
): Promise<Detection | undefined> {
  if (!names.has("Cargo.toml")) return undefined;
  return {
    language: "rust",
    baseImage: defaultImages.rust,
    commands: [names.has("Cargo.lock") ? "cargo fetch --locked" : "cargo fetch"],
    reasons: [
      names.has("Cargo.lock")
        ? "Cargo.toml with Cargo.lock: `cargo fetch --locked` downloads the locked crates"
        : "Cargo.toml: `cargo fetch` downloads the crates (no Cargo.lock, so versions are resolved now)",
    ],
  };
}

async function detectJava(
  _repository: string,
  names: ReadonlySet<string>,
): Promise<Detection | undefined> {
  if (names.has("pom.xml")) {
    return {
      language: "java",
      baseImage: defaultImages.java,
      commands: [
        names.has("mvnw")
          ? "./mvnw -B -q dependency:go-offline"
          : "mvn -B -q dependency:go-offline",
      ],
      reasons: [
        `pom.xml: a Maven project; dependency:go-offline downloads what later offline builds need${
          names.has("mvnw") ? " (through the project's wrapper, mvnw)" : ""
        }`,
      ],
    };
  }
  const gradleFile = ["build.gradle.kts", "build.gradle"].find((name) => names.has(name));
  if (gradleFile === undefined) return undefined;
  return {
    language: "java",
    baseImage: "gradle:8-jdk17",
    commands: [
      names.has("gradlew")
        ? "./gradlew --no-daemon -q dependencies"
        : "gradle --no-daemon -q dependencies",
    ],
    reasons: [
      `${gradleFile}: a Gradle project; resolving \`dependencies\` downloads them into the cache${
        names.has("gradlew") ? " (through the project's wrapper, gradlew)" : ""
      }`,
    ],
  };
}

async function detectRuby(
  _repository: string,
  names: ReadonlySet<string>,
): Promise<Detection | undefined> {
  if (!names.has("Gemfile")) return undefined;
  return {
    language: "ruby",
    baseImage: defaultImages.ruby,
    commands: names.has("Gemfile.lock")
      ? ["bundle config set --local deployment true", "bundle install"]
      : ["bundle install"],
    reasons: [
      names.has("Gemfile.lock")
        ? "Gemfile with Gemfile.lock: bundle install in deployment mode installs exactly the locked gems"
        : "Gemfile: bundle install resolves and installs the gems",
    ],
  };
}
