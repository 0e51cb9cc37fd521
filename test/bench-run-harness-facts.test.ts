/**
 * A harness registered by a program owns its facts: the run path asks its registration for the
 * default model, the pricing provider, the variables of its model client and the command that
 * prints its version — nothing is known by a harness's name. Before, a harness registered by a
 * user was priced as OpenAI, got no endpoint and recorded no version.
 */
import { chmod, mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerHarness, unregisterHarness } from "../src/agents/registry.js";
import { NoneHarness } from "../src/agents/replay.js";
import type { AgentModel, AgentRunRequest } from "../src/agents/types.js";
import { endpointFromEnvironment, modelSpecOf } from "../src/bench/run/model-endpoint.js";
import type { RunSuiteOptions } from "../src/bench/run/options.js";
import { agentVersions } from "../src/bench/run/plan.js";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { runProcess } from "../src/core/process.js";
import { removeRunRoot, writeTinySuite } from "./support/suites.js";

const NAME = "facts-test-agent";
const BINARY = "facts-test-agent-cli";
let root: string;
let savedPath: string | undefined;
/** The model each run of the test harness was given. */
const models: AgentModel[] = [];
const TOKENS = { inputTokens: 2_000_000, cachedInputTokens: 0, outputTokens: 500_000 };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-harness-facts-"));
  // The harness's CLI: prints its version, found on PATH as any agent CLI is.
  const bin = join(root, "bin");
  await mkdir(bin);
  await writeFile(join(bin, BINARY), "#!/bin/sh\necho 'facts-agent 9.9.9'\n");
  await chmod(join(bin, BINARY), 0o755);
  savedPath = process.env.PATH;
  process.env.PATH = `${bin}${delimiter}${process.env.PATH ?? ""}`;
  registerHarness(
    NAME,
    () => ({
      specificationVersion: "v1",
      name: NAME,
      async run(request: AgentRunRequest) {
        models.push(request.model);
        const trajectory = await new NoneHarness().run(request);
        // Tokens and no cost, as Codex reports them: the run prices them.
        return { ...trajectory, usage: { ...TOKENS } };
      },
    }),
    {
      facts: {
        defaultModel: "facts-model",
        pricingProvider: "anthropic",
        keyVariables: () => ({ baseUrl: "FACTS_BASE_URL", apiKey: "FACTS_API_KEY" }),
        versionCommand: { binary: BINARY, args: ["--version"] },
      },
    },
  );
});

afterAll(async () => {
  unregisterHarness(NAME);
  process.env.PATH = savedPath;
  await removeRunRoot(root);
});

const configuration = { id: "facts", agent: NAME, limits: { timeoutSeconds: 30 } };

/** Where the harnesses of the skill-folder tests read skills. */
const FOLDER = ".folders-agent/skills";

/** Per harness: the repository paths under a skill folder its runs found in the git history. */
const seenHistory = new Map<string, string[]>();

/**
 * Registers `name`, a harness reading skills from `folder`: each run records, per arm, every
 * folder under `folder` anywhere in its workspace (those holding the skill under test, "# Alpha",
 * by the skill's name), and writes the result file.
 */
function registerFolderAgent(name: string, folder: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  registerHarness(
    name,
    () => ({
      specificationVersion: "v1",
      name,
      async run(request: AgentRunRequest) {
        const found: string[] = [];
        for (const top of ["", "pkg"]) {
          const skills = join(request.workspace, top, folder);
          for (const entry of await readdir(skills).catch(() => [])) {
            const text = await readFile(join(skills, entry, "SKILL.md"), "utf8").catch(() => "");
            found.push(text.includes("# Alpha") ? entry : join(top, entry));
          }
        }
        seen.set(request.arm ?? "", found.sort());
        const history = await runProcess("git", ["log", "--all", "--name-only", "--format="], {
          cwd: request.workspace,
        });
        const paths = history.stdout.split("\n").filter((line) => line.includes("/skills/"));
        seenHistory.set(name, [...(seenHistory.get(name) ?? []), ...paths]);
        // The agent's own work, so the stored change is not empty.
        await writeFile(join(request.workspace, "result-r1.txt"), "good\n");
        return new NoneHarness().run(request);
      },
    }),
    { facts: { skillFolders: [folder] } },
  );
  return seen;
}

/**
 * The tiny suite with one configuration running `agent`, written under `folder`; its repository
 * ships `repositoryFiles`.
 */
function writeFactsSuite(
  folder: string,
  agent: string,
  repositoryFiles: Readonly<Record<string, string>> = {},
): Promise<string> {
  return writeTinySuite(folder, {
    repositoryFiles,
    suiteYaml: `format: skillsmith-suite/1\nname: facts\nconfigurations:\n  - id: facts\n    agent: ${agent}\n    limits: { timeoutSeconds: 30 }\n`,
    skillMarkdown:
      "---\nname: alpha\ndescription: Writes result files. Use when a task asks for a result file.\n---\n\n# Alpha\n\nWrite good.\n",
    checkScript: () =>
      'echo \'<testsuite name="r"><testcase classname="r" name="x"/></testsuite>\' > junit.xml\n',
  });
}

/** `runSuite` of requirement r1 in the unsafe sandbox, without the check, plus `extra`. */
function runFirstRequirement(suite: string, runDir: string, extra: Partial<RunSuiteOptions> = {}) {
  return runSuite({
    suite,
    runDir,
    sandbox: "unsafe",
    cacheDir: join(root, "cache"),
    check: false,
    selection: { requirements: ["r1"] },
    ...extra,
  });
}

describe("a registered harness's facts", () => {
  it("name its default model, its client's variables and its version command", async () => {
    expect(modelSpecOf(configuration)).toBe("facts-model");
    const endpoint = endpointFromEnvironment({
      FACTS_BASE_URL: "http://127.0.0.1:9/v1",
      FACTS_API_KEY: "sk-facts-1",
      OPENAI_API_KEY: "sk-not-this-one",
    })(configuration);
    expect(endpoint).toEqual({ baseUrl: "http://127.0.0.1:9/v1", apiKey: "sk-facts-1" });
    expect(await agentVersions([configuration])).toEqual({ [BINARY]: "facts-agent 9.9.9" });
    // A harness registered without facts talks to no endpoint and records no version.
    registerHarness("facts-less-agent", () => new NoneHarness());
    try {
      const bare = { id: "bare", agent: "facts-less-agent", limits: { timeoutSeconds: 30 } };
      expect(endpointFromEnvironment({ OPENAI_API_KEY: "sk-x" })(bare)).toBeUndefined();
      expect(await agentVersions([bare])).toEqual({});
      expect(modelSpecOf(bare)).toBe("facts-less-agent");
    } finally {
      unregisterHarness("facts-less-agent");
    }
  });

  it("reach a run: priced at its provider, given its endpoint, its version recorded", async () => {
    const suite = await writeFactsSuite(root, NAME);
    const runDir = join(root, "run");
    // $4 / $40 per million tokens, for the model at the anthropic provider only.
    const prices = { "anthropic:facts-model": { input: 4, output: 40 } };
    const summary = await runFirstRequirement(suite, runDir, {
      prices,
      modelEndpoint: endpointFromEnvironment({
        FACTS_BASE_URL: "http://127.0.0.1:9/v1",
        FACTS_API_KEY: "sk-facts-2",
      }),
    });
    expect(summary.failed).toEqual([]);
    expect(summary.executed).toBe(2);
    for (const model of models.slice(-2)) {
      expect(model).toMatchObject({ spec: "facts-model", baseUrl: "http://127.0.0.1:9/v1" });
    }
    const store = ResultsStore.openReadOnly(runDir);
    const results = store.results();
    store.close();
    // By hand: 2 M input tokens at $4 and 0.5 M output tokens at $40.
    for (const result of results) expect(result.usage.costUsd).toBeCloseTo(2 * 4 + 0.5 * 40, 10);
    const manifest = JSON.parse(await readFile(join(runDir, "manifest.json"), "utf8")) as {
      versions: { agents: Record<string, string> };
    };
    expect(manifest.versions.agents).toEqual({ [BINARY]: "facts-agent 9.9.9" });
    for (const result of results) {
      const agent = result.fingerprint?.inputs.agent as { version?: unknown } | undefined;
      expect(agent?.version).toBe("facts-agent 9.9.9");
    }
  });

  it("install the skill where its registration says it reads skills, in the skill's arm only", async () => {
    const name = "folders-test-agent";
    const seen = registerFolderAgent(name, FOLDER);
    try {
      await mkdir(join(root, "folders"));
      const suite = await writeFactsSuite(join(root, "folders"), name);
      const runDir = join(root, "folders", "run");
      const summary = await runFirstRequirement(suite, runDir);
      expect(summary.failed).toEqual([]);
      expect(seen.get("with")).toEqual(["alpha"]);
      expect(seen.get("without")).toEqual([]);
      const store = ResultsStore.openReadOnly(runDir);
      const results = store.results();
      store.close();
      // The installed copy was removed before the change was captured: only the agent's file.
      for (const result of results) {
        expect(result.patch?.diff).toContain("result-r1.txt");
        expect(result.patch?.diff).not.toContain(".folders-agent");
      }
    } finally {
      unregisterHarness(name);
    }
  });

  it("clear a repository's own skills from its registered folder, as .claude/skills are", async () => {
    // The attack: a repository ships skills where the registered harness reads them (at the top
    // and in a subfolder, and committed, so `git checkout` would bring them back); the arm
    // without skills must not see them, or the comparison measures the repository's skills.
    const name = "shipped-folders-agent";
    const seen = registerFolderAgent(name, FOLDER);
    const own = "---\nname: own\ndescription: The repository's own skill.\n---\n\n# Own\n";
    try {
      await mkdir(join(root, "shipped"));
      const suite = await writeFactsSuite(join(root, "shipped"), name, {
        [`${FOLDER}/own/SKILL.md`]: own,
        [`pkg/${FOLDER}/own/SKILL.md`]: own,
        ".claude/skills/own/SKILL.md": own,
      });
      const summary = await runFirstRequirement(suite, join(root, "shipped", "run"));
      expect(summary.failed).toEqual([]);
      expect(seen.get("without")).toEqual([]);
      expect(seen.get("with")).toEqual(["alpha"]);
      expect(seenHistory.get(name)).toEqual([]);
    } finally {
      unregisterHarness(name);
    }
  });

  it.each([["../outside"], ["/etc/skills"], ["a/./b"], [""], ["a//b"]])(
    "refuse a skill folder outside the workspace: %j",
    (folder) => {
      expect(() =>
        registerHarness("bad-folders-agent", () => new NoneHarness(), {
          facts: { skillFolders: [folder] },
        }),
      ).toThrow(/must be a relative path inside the workspace/);
    },
  );
});
