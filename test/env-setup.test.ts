import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectSetup } from "../src/env/setup/detect.js";

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-env-setup-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

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
    commands: ["pip install --quiet uv", "uv sync --frozen"],
    reasonMentions: "uv.lock",
  },
  {
    name: "poetry",
    files: { "pyproject.toml": "[tool.poetry]\nname='x'\n", "poetry.lock": "" },
    language: "python",
    baseImage: "python:3.12-slim",
    commands: [
      "pip install --quiet poetry",
      "poetry config virtualenvs.in-project true",
      "poetry install --no-interaction",
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
    commands: ["pip install --quiet -e '.[test]'"],
    reasonMentions: '"test" extra',
  },
  {
    name: "pyproject-extra-elsewhere",
    // `test =` appears, but in another table: it is not an extra.
    files: { "pyproject.toml": "[project]\nname = 'x'\n\n[tool.something]\ntest = 1\n" },
    language: "python",
    baseImage: "python:3.12-slim",
    commands: ["pip install --quiet -e ."],
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
      "pip install --quiet -r requirements.txt",
      "pip install --quiet -r requirements-dev.txt",
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
    commands: ["mvn -B -q dependency:go-offline"],
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
    commands: ["bundle config set --local deployment true", "bundle install"],
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
      expect(plan.commands).toEqual(testCase.commands);
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
    expect(plan.commands).toEqual(["make deps"]);
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
    expect(plan.commands).toEqual(["pip install --quiet -e ."]);
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
