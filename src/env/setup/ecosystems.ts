import { posix } from "node:path";
import { npmCache } from "./install-caches.js";
import { type Context, type Detection, defaultImages, type SetupStep } from "./plan.js";
import { readRepositoryFile } from "./python.js";

/**
 * Detectors of the ecosystems after Python: node, go, rust, java, ruby. Each reads the
 * repository's manifests and lock files and returns its steps, or undefined when the
 * ecosystem is absent; `detectSetup` (detect.ts) picks the primary one.
 */

export async function detectNode(context: Context): Promise<Detection | undefined> {
  const { names, network } = context;
  const base = {
    language: "node" as const,
    baseImage: defaultImages.node,
    // A verifier that installs at test time (`npm ci` in a fixture) is served, offline, from
    // the cache setup's install fills (install-caches.ts).
    setupEnv: npmCache.setupEnv(posix.join(context.environmentPath, npmCache.folder)),
    runEnv: npmCache.runEnv(posix.join(context.environmentPath, npmCache.folder)),
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

export async function detectGo(context: Context): Promise<Detection | undefined> {
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

export async function detectRust(context: Context): Promise<Detection | undefined> {
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

export async function detectJava(context: Context): Promise<Detection | undefined> {
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

export async function detectRuby(context: Context): Promise<Detection | undefined> {
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
