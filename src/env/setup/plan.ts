import type { InstallCacheRecord } from "./install-caches.js";
import type { PythonProject } from "./python.js";
import type { TestTimeInstall } from "./test-time-installs.js";

/**
 * The vocabulary of setup detection: what a plan is made of, the default image and toolchain
 * of each ecosystem, and what one ecosystem's detector gets and returns. Shared by `detect.ts`
 * (which merges the detections into a plan) and `ecosystems.ts` (the non-Python detectors).
 */

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
  /**
   * The package caches of the environment that serve the verifiers' test-time installs, and how
   * each install is served (absent when the verifiers install nothing at test time).
   */
  readonly caches?: readonly InstallCacheRecord[];
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
  /**
   * Install commands the verifiers run at test time (`findTestTimeInstalls`): setup fills the
   * environment's caches with what they install, so they are served offline (install-caches.ts).
   */
  readonly testTimeInstalls?: readonly TestTimeInstall[];
}

export const defaultImages: Readonly<Record<SetupLanguage, string>> = {
  python: "python:3.12-slim",
  node: "node:20-bookworm-slim",
  go: "golang:1.22-bookworm",
  rust: "rust:1-slim-bookworm",
  java: "maven:3.9-eclipse-temurin-17",
  ruby: "ruby:3.3-slim-bookworm",
  unknown: "debian:bookworm-slim",
};

export const toolchains: Readonly<Record<SetupLanguage, Toolchain>> = {
  python: { programs: ["python3"], debianPackages: ["python3", "python3-venv", "python3-pip"] },
  node: { programs: ["node", "npm"], debianPackages: ["nodejs", "npm"] },
  go: { programs: ["go"], debianPackages: ["golang-go"] },
  rust: { programs: ["cargo"], debianPackages: ["cargo"] },
  java: { programs: ["java", "mvn"], debianPackages: ["default-jdk-headless", "maven"] },
  ruby: { programs: ["ruby", "bundle"], debianPackages: ["ruby", "bundler"] },
  unknown: { programs: [], debianPackages: [] },
};

/** pip without prompts, version checks or long retries; offline it never looks for an index. */
export function pipEnvironment(network: SetupNetwork): Record<string, string> {
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

export interface Detection {
  readonly language: Exclude<SetupLanguage, "unknown">;
  readonly baseImage: string;
  readonly steps: readonly SetupStep[];
  readonly reasons: readonly string[];
  readonly runEnv?: Readonly<Record<string, string>>;
  readonly setupEnv?: Readonly<Record<string, string>>;
  readonly python?: PythonProject;
}

export interface Context {
  readonly repository: string;
  readonly names: ReadonlySet<string>;
  readonly network: SetupNetwork;
  readonly environmentPath: string;
  readonly workspaceMountPath: string;
  readonly interpreter: string;
}
