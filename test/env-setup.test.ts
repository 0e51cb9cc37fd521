import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InputError } from "../src/core/errors.js";
import { detectSetup, type SetupPlan } from "../src/env/setup/detect.js";

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-env-setup-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The install steps of a plan (without the toolchain check and the environment itself). */
function installs(plan: SetupPlan): string[] {
  return plan.steps.filter((step) => step.kind === "install").map((step) => step.command);
}

/** A fixture folder holding exactly the given files. */
async function fixture(name: string, files: Record<string, string>): Promise<string> {
  const folder = join(scratch, name);
  await mkdir(folder, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    await writeFile(join(folder, path), content);
  }
  return folder;
}

const cases: {
  name: string;
  files: Record<string, string>;
  language: string;
  baseImage: string;
  commands: string[];
  reasonMentions: string;
}[] = [
  {
    name: "npm-lock",
    files: { "package.json": '{"dependencies":{"a":"1"}}', "package-lock.json": "{}" },
    language: "node",
    baseImage: "node:20-bookworm-slim",
    commands: ["npm ci --no-audit --no-fund"],
    reasonMentions: "package-lock.json",
  },
  {
    name: "pnpm",
    files: { "package.json": "{}", "pnpm-lock.yaml": "lockfileVersion: 9\n" },
    language: "node",
    baseImage: "node:20-bookworm-slim",
    commands: ["corepack enable", "pnpm install --frozen-lockfile"],
    reasonMentions: "pnpm-lock.yaml",
  },
  {
    name: "yarn-classic",
    files: { "package.json": "{}", "yarn.lock": "# yarn lockfile v1\n" },
    language: "node",
    baseImage: "node:20-bookworm-slim",
    commands: ["corepack enable", "yarn install --frozen-lockfile"],
    reasonMentions: "yarn.lock",
  },
  {
    name: "yarn-berry",
    files: {
      "package.json": "{}",
      "yarn.lock": "__metadata:\n",
      ".yarnrc.yml": "nodeLinker: node-modules\n",
    },
    language: "node",
    baseImage: "node:20-bookworm-slim",
    commands: ["corepack enable", "yarn install --immutable"],
    reasonMentions: ".yarnrc.yml",
  },
  {
    name: "plain-package-json",
    files: { "package.json": '{"devDependencies":{"vitest":"4"}}' },
    language: "node",
    baseImage: "node:20-bookworm-slim",
    commands: ["npm install --no-audit --no-fund"],
    reasonMentions: "without a lock file",
  },
  {
    name: "package-json-no-deps",
    files: { "package.json": '{"name":"x","scripts":{"test":"node --test"}}' },
    language: "node",
    baseImage: "node:20-bookworm-slim",
    commands: [],
    reasonMentions: "no dependencies",
  },
  {
    name: "uv",
    files: { "pyproject.toml": "[project]\nname='x'\n", "uv.lock": "version = 1\n" },
    language: "python",
    baseImage: "python:3.12-slim",
    commands: [
      "python -m pip install --quiet uv",
      "UV_PROJECT_ENVIRONMENT=/skillsmith-env uv sync --frozen --inexact",
    ],
    reasonMentions: "uv.lock",
  },
  {
    name: "poetry",
    files: { "pyproject.toml": "[tool.poetry]\nname='x'\n", "poetry.lock": "" },
    language: "python",
    baseImage: "python:3.12-slim",
    commands: [
      "python -m pip install --quiet poetry",
      "POETRY_VIRTUALENVS_CREATE=false poetry install --no-interaction",
    ],
    reasonMentions: "poetry.lock",
  },
  {
    name: "pyproject-with-test-extra",
    files: {
      "pyproject.toml":
        "[project]\nname = 'x'\n\n[project.optional-dependencies]\ndocs = ['sphinx']\ntest = ['pytest']\n\n[tool.black]\nline-length = 100\n",
    },
    language: "python",
    baseImage: "python:3.12-slim",
    commands: ["python -m pip install --quiet -e '.[test]'"],
    reasonMentions: '"test" extra',
  },
  {
    name: "pyproject-extra-elsewhere",
    // `test =` appears, but in another table: it is not an extra.
    files: { "pyproject.toml": "[project]\nname = 'x'\n\n[tool.something]\ntest = 1\n" },
    language: "python",
    baseImage: "python:3.12-slim",
    commands: ["python -m pip install --quiet -e ."],
    reasonMentions: "editable",
  },
  {
    name: "requirements",
    files: {
      "requirements-dev.txt": "pytest\n",
      "requirements.txt": "requests\n",
    },
    language: "python",
    baseImage: "python:3.12-slim",
    commands: [
      "python -m pip install --quiet -r requirements.txt",
      "python -m pip install --quiet -r requirements-dev.txt",
      "printf '%s\\n' /workspace/requirements > \"$(python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')\"/skillsmith-repository.pth",
    ],
    reasonMentions: "requirements.txt",
  },
  {
    name: "go",
    files: { "go.mod": "module example.com/x\n\ngo 1.21\n", "go.sum": "" },
    language: "go",
    baseImage: "golang:1.21-bookworm",
    commands: ["go mod download"],
    reasonMentions: "go 1.21",
  },
  {
    name: "rust",
    files: { "Cargo.toml": "[package]\nname='x'\n", "Cargo.lock": "" },
    language: "rust",
    baseImage: "rust:1-slim-bookworm",
    commands: ["cargo fetch --locked"],
    reasonMentions: "Cargo.lock",
  },
  {
    name: "maven",
    files: { "pom.xml": "<project/>" },
    language: "java",
    baseImage: "maven:3.9-eclipse-temurin-17",
    commands: ["mvn -B -q -Dmaven.repo.local=/skillsmith-env/m2 dependency:go-offline"],
    reasonMentions: "pom.xml",
  },
  {
    name: "gradle-kts-wrapper",
    files: { "build.gradle.kts": "plugins {}\n", gradlew: "#!/bin/sh\n" },
    language: "java",
    baseImage: "gradle:8-jdk17",
    commands: ["./gradlew --no-daemon -q dependencies"],
    reasonMentions: "build.gradle.kts",
  },
  {
    name: "gradle",
    files: { "build.gradle": "apply plugin: 'java'\n" },
    language: "java",
    baseImage: "gradle:8-jdk17",
    commands: ["gradle --no-daemon -q dependencies"],
    reasonMentions: "build.gradle",
  },
  {
    name: "ruby",
    files: { Gemfile: "source 'https://rubygems.org'\n", "Gemfile.lock": "" },
    language: "ruby",
    baseImage: "ruby:3.3-slim-bookworm",
    commands: ["BUNDLE_DEPLOYMENT=true bundle install"],
    reasonMentions: "Gemfile.lock",
  },
];

describe("detectSetup", () => {
  for (const testCase of cases) {
    it(`detects ${testCase.name}`, async () => {
      const plan = await detectSetup(await fixture(testCase.name, testCase.files));
      expect(plan.origin).toBe("detected");
      expect(plan.language).toBe(testCase.language);
      expect(plan.baseImage).toBe(testCase.baseImage);
      expect(installs(plan)).toEqual(testCase.commands);
      expect(plan.network).toBe("online");
      expect(plan.reasons.join("\n")).toContain(testCase.reasonMentions);
    });
  }

  it("lets explicit commands win, keeping the detected image", async () => {
    const folder = await fixture("explicit", {
      "requirements.txt": "requests\n",
      "package-lock.json": "{}",
    });
    const plan = await detectSetup(folder, { commands: ["make deps"] });
    expect(plan.origin).toBe("explicit");
    expect(installs(plan)).toEqual(["make deps"]);
    // A Python repository still gets its environment, so `pip` in the commands installs there.
    expect(plan.steps.some((step) => step.kind === "environment")).toBe(true);
    expect(plan.language).toBe("python");
    expect(plan.baseImage).toBe("python:3.12-slim");
    expect(plan.reasons[0]).toContain("explicit");
  });

  it("reports a secondary ecosystem it does not install", async () => {
    const folder = await fixture("mixed", {
      "pyproject.toml": "[project]\nname='x'\n",
      "package.json": '{"dependencies":{"a":"1"}}',
    });
    const plan = await detectSetup(folder);
    expect(plan.language).toBe("python");
    expect(installs(plan)).toEqual(["python -m pip install --quiet -e ."]);
    // An index lacking a dependency (a partial mirror) falls back to the offline install.
    const install = plan.steps.find(
      (step) => step.command === "python -m pip install --quiet -e .",
    );
    expect(install?.fallback?.command).toBe(
      "python -c 'import setuptools' && python -m pip install --no-index --no-build-isolation --no-deps -e .",
    );
    expect(install?.fallback?.fallback?.command).toMatch(/\.pth$/);
    expect(plan.reasons.some((reason) => reason.startsWith("also found a node project"))).toBe(
      true,
    );
  });

  it("installs nothing for a folder without manifests", async () => {
    const plan = await detectSetup(await fixture("bare", { "README.md": "# x\n" }));
    expect(plan.language).toBe("unknown");
    expect(plan.commands).toEqual([]);
    expect(plan.baseImage).toBe("debian:bookworm-slim");
  });
});

describe("detectSetup offline (dependencies must already be present)", () => {
  it("makes a src-layout project importable: editable install without isolation, else a path entry", async () => {
    const folder = await fixture("offline-src", {
      "pyproject.toml":
        "[build-system]\nrequires = ['flit_core >=3.12']\nbuild-backend = 'flit_core.buildapi'\n\n[project]\nname = 'tinypkg'\ndynamic = ['version']\n",
      "requirements.txt": "pytest\n",
    });
    await mkdir(join(folder, "src", "tinypkg"), { recursive: true });
    await writeFile(join(folder, "src", "tinypkg", "__init__.py"), "");
    const plan = await detectSetup(folder, {
      network: "offline",
      workspaceMountPath: "/workspace/tinypkg",
    });
    expect(plan.network).toBe("offline");
    const [editable, requirements] = plan.steps.filter((step) => step.kind === "install");
    // Only a backend that is importable is used, and pip never looks for an index or deps.
    expect(editable?.command).toBe(
      "python -c 'import flit_core' && python -m pip install --no-index --no-build-isolation --no-deps -e .",
    );
    expect(editable?.fallback?.command).toBe(
      "printf '%s\\n' /workspace/tinypkg/src > \"$(python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')\"/skillsmith-tinypkg.pth",
    );
    expect(requirements).toMatchObject({
      command: "python -m pip install --no-index -r requirements.txt",
      optional: true,
    });
    expect(plan.environment?.setupEnv).toMatchObject({ PIP_NO_INDEX: "1", PIP_RETRIES: "0" });
    // Runs (no network) get pip settings that fail fast and build with what is installed.
    expect(plan.environment?.runEnv).toMatchObject({
      VIRTUAL_ENV: "/skillsmith-env",
      PIP_NO_INDEX: "1",
      PIP_NO_BUILD_ISOLATION: "0",
    });
    expect(plan.environment?.binPaths).toEqual(["/skillsmith-env/bin"]);
    const venv = plan.steps.find((step) => step.kind === "environment");
    expect(venv?.command).toContain(
      "/usr/bin/python3 -m venv --system-site-packages --without-pip /skillsmith-env",
    );
  });

  it("uses setuptools for a bare setup.py and the root for a flat layout", async () => {
    const folder = await fixture("offline-flat", {
      "setup.py": "from setuptools import setup\nsetup(name='flatpkg', version='1.0')\n",
    });
    const plan = await detectSetup(folder, { network: "offline", workspaceMountPath: "/w/flat" });
    const [editable] = plan.steps.filter((step) => step.kind === "install");
    expect(editable?.command).toContain("python -c 'import setuptools'");
    expect(editable?.fallback?.command).toContain("printf '%s\\n' /w/flat >");
    expect(plan.python?.name).toBe("flatpkg");
  });

  it("installs node, go, rust, maven and ruby dependencies offline only as optional steps", async () => {
    const expectations: [string, Record<string, string>, string][] = [
      [
        "off-npm",
        { "package.json": "{}", "package-lock.json": "{}" },
        "npm ci --no-audit --no-fund --offline",
      ],
      ["off-go", { "go.mod": "module x\n\ngo 1.21\n" }, "GOPROXY=off go mod download"],
      [
        "off-rust",
        { "Cargo.toml": "[package]\n", "Cargo.lock": "" },
        "cargo fetch --offline --locked",
      ],
      [
        "off-maven",
        { "pom.xml": "<project/>" },
        "mvn -B -q -o -Dmaven.repo.local=/skillsmith-env/m2 dependency:go-offline",
      ],
      ["off-ruby", { Gemfile: "", "Gemfile.lock": "" }, "bundle install --local"],
    ];
    for (const [name, files, command] of expectations) {
      const plan = await detectSetup(await fixture(name, files), { network: "offline" });
      const install = plan.steps.filter((step) => step.kind === "install");
      expect(
        install.map((step) => step.command),
        name,
      ).toEqual([command]);
      expect(
        install.every((step) => step.optional === true),
        name,
      ).toBe(true);
    }
  });

  it("gives Go runs the prepared module cache and no network", async () => {
    const plan = await detectSetup(await fixture("go-env", { "go.mod": "module x\n" }));
    expect(plan.environment?.runEnv).toEqual({
      GOMODCACHE: "/skillsmith-env/go/pkg/mod",
      GOPROXY: "off",
      GOTOOLCHAIN: "local",
    });
    expect(plan.environment?.setupEnv.GOPATH).toBe("/skillsmith-env/go");
  });
});

describe("detectSetup toolchains", () => {
  it("prepares Python for Python verifiers of a repository without manifests", async () => {
    const plan = await detectSetup(await fixture("verifier-python", { "README.md": "x\n" }), {
      verifierNeedsPython: true,
    });
    expect(plan.language).toBe("unknown");
    expect(plan.toolchain.programs).toEqual(["python3"]);
    expect(plan.steps.map((step) => step.kind)).toEqual(["toolchain", "environment"]);
    expect(plan.environment?.binPaths).toEqual(["/skillsmith-env/bin"]);
  });

  it("installs a missing toolchain from Debian only in an image built online", async () => {
    const folder = await fixture("toolchain-go", { "go.mod": "module x\n" });
    const image = await detectSetup(folder, { target: "image", network: "online" });
    expect(image.steps[0]?.command).toBe(
      "command -v go >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-go; }",
    );
    const host = await detectSetup(folder, { target: "host", network: "online" });
    expect(host.steps[0]).toMatchObject({ kind: "toolchain", optional: true });
    expect(host.steps[0]?.command).not.toContain("apt-get");
  });

  it("reads a damaged pyproject.toml as absent instead of failing", async () => {
    const plan = await detectSetup(
      await fixture("bad-toml", { "pyproject.toml": "[project\nname=" }),
      {
        network: "offline",
      },
    );
    expect(plan.language).toBe("python");
    expect(plan.reasons.join("\n")).toContain("does not parse as TOML");
  });

  it("refuses a manifest that is there but unreadable instead of reading it as empty", async () => {
    // As root EACCES cannot be provoked: a folder named like the manifest gives EISDIR. Read as
    // empty (the old behaviour) it planned a Go module without a version, or a bare setup.py.
    for (const manifest of ["go.mod", "setup.py"]) {
      const folder = await fixture(`unreadable-${manifest}`, {});
      await mkdir(join(folder, manifest));
      const failure = await detectSetup(folder, { network: "offline" }).catch((error) => error);
      expect(failure).toBeInstanceOf(InputError);
      expect((failure as InputError).code).toBe("core.file-unreadable");
      expect((failure as Error).message).toContain(join(folder, manifest));
    }
  });
});
