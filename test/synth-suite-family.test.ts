/**
 * A bench suite as a synthesis task family, end to end: the shipped quickstart suite (a git
 * bundle, pytest verifiers), the builtin coding agent over the scripted model server (real HTTP),
 * real workspaces and real pytest through the bench verifier runner. `synth pool` then
 * `synth run` through the CLI; a secret planted in every verifier test file never reaches any
 * request the model server recorded.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentHarnessV1, Trajectory } from "../src/agents/index.js";
import { packageRoot } from "../src/core/paths.js";
import { UnsafeSandbox } from "../src/env/index.js";
import { ModelClient } from "../src/model/index.js";
import type { Script, ScriptRule } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { defaultSplitSeed, SuiteTaskFamily, visibleView } from "../src/synth/index.js";
import { costRow, hasPytest, runSynthCli } from "./support/synth.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const hasGit = spawnSync("git", ["--version"], { stdio: "ignore" }).status === 0;

const cleanups = cleanupsAfterEach();
const temporaryDirectory = () => temporaryDirectoryIn(cleanups, "skillsmith-synth-suite-");

const quickstart = join(packageRoot(), "examples", "quickstart");
const secret = "zq-suite-secret-9931";
const magic = "USE-DECIMAL-QUANTIZE";

/**
 * The quickstart suite and its bundle copied side by side (skill.yaml names the bundle as
 * `../../../invoicer.bundle`); with `plantSecret` every verifier test file carries the secret on
 * a line that shows in each failing check's traceback, in a comment and in a constant.
 */
async function suiteCopy(plantSecret: boolean): Promise<string> {
  const root = await temporaryDirectory();
  await cp(join(quickstart, "suite"), join(root, "suite"), { recursive: true });
  await cp(join(quickstart, "invoicer.bundle"), join(root, "invoicer.bundle"));
  if (plantSecret)
    for (const skill of ["money-decimal", "iso-dates"]) {
      const requirements = join(root, "suite", "skills", skill, "requirements");
      for (const requirement of await readdir(requirements)) {
        const folder = join(requirements, requirement, "verifier");
        for (const file of await readdir(folder)) {
          if (!file.endsWith(".py")) continue;
          const path = join(folder, file);
          const text = await readFile(path, "utf8");
          await writeFile(
            path,
            `# ${secret}\nMARKER = "${secret}"\n${text.replaceAll("    f = load()", `    f = load()  # ${secret}`)}`,
          );
        }
      }
    }
  return join(root, "suite");
}

/** The four money-decimal requirements the tests use: two train, two test (default seed). */
const train = ["money-decimal/r02-tax", "money-decimal/r04-discount"];
const test = ["money-decimal/r01-line-total", "money-decimal/r05-parse"];
const moduleOf: Record<string, { file: string; entry: string }> = {
  "money-decimal/r01-line-total": { file: "invoicer/totals.py", entry: "line_total" },
  "money-decimal/r02-tax": { file: "invoicer/tax.py", entry: "add_tax" },
  "money-decimal/r04-discount": { file: "invoicer/discount.py", entry: "apply_discount" },
  "money-decimal/r05-parse": { file: "invoicer/parsing.py", entry: "parse_amount" },
};

const skillSystem = "You write a temporary agent skill";

/**
 * The scripted model. The agent writes the requirement's module in one `write_file` call: the
 * recorded with-skill answer (Decimal, correct: 4 of 4 checks, checked by hand) when the magic
 * word is in its prompt, else a stub raising NotImplementedError (0 of 4); after the tool result
 * it says "Done.". The synthesiser always writes a skill carrying the magic word.
 * Usage: agent write call 300 in / 40 out, done call 350 / 5, synthesiser 200 / 50.
 */
async function script(): Promise<Script> {
  const rules: ScriptRule[] = [
    {
      match: { toolResult: "^wrote " },
      reply: { text: "Done.", usage: { inputTokens: 350, outputTokens: 5 } },
    },
    {
      match: { system: skillSystem },
      reply: {
        text: `---\nname: money-skill\ndescription: Exact money arithmetic for this requirement.\n---\n\n## When to use\nMoney amounts.\n\n## Approach\n1. ${magic}: use decimal.Decimal and quantize.\n\n## Pitfalls\n- Never use float.\n\n## Checks\n- Try a half cent.\n`,
        usage: { inputTokens: 200, outputTokens: 50 },
      },
    },
  ];
  for (const [id, { file, entry }] of Object.entries(moduleOf)) {
    const requirement = id.split("/")[1] ?? "";
    const right = await readFile(
      join(quickstart, "recorded", "money-decimal", requirement, "with", file),
      "utf8",
    );
    const stub = `def ${entry}(*args, **kwargs):\n    raise NotImplementedError\n`;
    const fileRegex = file.replaceAll(".", "\\.");
    for (const [pattern, content] of [
      [`${magic}[\\s\\S]*${fileRegex}`, right],
      [fileRegex, stub],
    ] as const)
      rules.push({
        match: { lastUserMessage: pattern },
        reply: {
          toolCalls: [{ name: "write_file", input: { path: file, content } }],
          usage: { inputTokens: 300, outputTokens: 40 },
        },
      });
  }
  return { rules, fallback: { text: "unexpected request" } };
}

describe("the suite family's tasks (needs git)", () => {
  it.skipIf(!hasGit)(
    "makes one task per requirement with the visible sections, the verifier evaluator-only, and a per-skill split",
    async () => {
      const directory = await suiteCopy(true);
      const family = new SuiteTaskFamily({ directory, sandbox: new UnsafeSandbox() });
      const tasks = await family.loadTasks();
      expect(family.name).toBe("suite-quickstart");
      expect(tasks).toHaveLength(20);
      const task = tasks.find((each) => each.id === "money-decimal/r01-line-total");
      // From requirement.md by hand: the file operation and the four acceptance criteria.
      expect(task?.fields.fileOperations).toBe("- invoicer/totals.py");
      expect(task?.fields.acceptanceCriteria?.split("\n")).toHaveLength(4);
      expect(task?.fields.acceptanceCriteria).toContain('`line_total(3, "19.99")` is `"59.97"`.');
      expect(task?.fields.requirement).toContain("Half cents round up");
      expect(task?.hidden.verifier).toContain(secret);
      if (task === undefined) return;
      const visible = visibleView(family, task);
      expect(Object.keys(visible.fields)).toEqual([
        "background",
        "requirement",
        "fileOperations",
        "acceptanceCriteria",
      ]);
      expect(JSON.stringify(visible)).not.toContain(secret);
      // Five of each skill's ten requirements train, five test; disjoint; fixed for the seed.
      const trainIds = family.split(tasks, "train", defaultSplitSeed).map((each) => each.id);
      const testIds = family.split(tasks, "test", defaultSplitSeed).map((each) => each.id);
      expect(trainIds).toHaveLength(10);
      expect(trainIds.filter((id) => id.startsWith("money-decimal/"))).toHaveLength(5);
      expect(testIds.filter((id) => id.startsWith("iso-dates/"))).toHaveLength(5);
      expect(trainIds.filter((id) => testIds.includes(id))).toEqual([]);
      expect(family.split(tasks, "train", defaultSplitSeed).map((each) => each.id)).toEqual(
        trainIds,
      );
      for (const id of train) expect(trainIds).toContain(id);
      for (const id of test) expect(testIds).toContain(id);
    },
  );
});

describe("the suite family against an agent that rigs its workspace's git (needs git)", () => {
  it.skipIf(!hasGit)(
    "captures the change without running the workspace's git configuration on the host",
    async () => {
      const directory = await suiteCopy(false);
      const marker = join(await temporaryDirectory(), "fsmonitor-ran");
      // The attack: any agent with a shell can set its workspace's fsmonitor to a command, which
      // a host `git add` / `git status` in that workspace would run (checked with git 2.39).
      const harness: AgentHarnessV1 = {
        specificationVersion: "v1",
        name: "git-rigger",
        async run(request): Promise<Trajectory> {
          execFileSync("git", ["config", "core.fsmonitor", `touch ${marker}`], {
            cwd: request.workspace,
          });
          await writeFile(join(request.workspace, "invoicer", "totals.py"), "ANSWER = 1\n");
          return {
            format: "skillsmith-trajectory/1",
            harness: "git-rigger",
            events: [],
            skillsShown: [],
            skillsShownSource: "none",
            skillActivated: false,
            usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 },
            wallTimeMs: 1,
            status: "completed",
            rawLog: "",
          };
        },
      };
      const family = new SuiteTaskFamily({ directory, sandbox: new UnsafeSandbox(), harness });
      const tasks = await family.loadTasks();
      const task = tasks.find((each) => each.id === "money-decimal/r01-line-total");
      if (task === undefined) throw new Error("the quickstart suite has no r01-line-total");
      // The harness above never calls the model; the client is only handed through.
      const model = new ModelClient({ spec: "openai:gpt-test", env: { OPENAI_API_KEY: "unused" } });
      const attempt = await family.solve(model, visibleView(family, task), {});
      expect(existsSync(marker)).toBe(false);
      expect(attempt.output).toContain("+++ b/invoicer/totals.py");
      expect(attempt.output).toContain("+ANSWER = 1");
      // The workspace's `.git` is not part of the change.
      expect(attempt.output).not.toContain("fsmonitor");
    },
  );
});

describe.skipIf(!hasPytest || !hasGit)("synth on a bench suite (needs git and pytest)", () => {
  let server: ScriptedServer;

  it("builds a pool and compares methods with the builtin agent; the verifier's secret reaches no request", async () => {
    server = await startScriptedServer({ script: await script() });
    cleanups.push(() => server.close());
    const directory = await suiteCopy(true);
    const cwd = await temporaryDirectory();
    const env = {
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: server.url,
      SKILLSMITH_CACHE_DIR: join(cwd, "cache"),
    };
    const common = [
      "--family",
      `suite:${directory}`,
      "--model",
      "anthropic:claude-haiku-4-5",
      "--unsafe-no-sandbox",
    ];

    const pool = await runSynthCli(
      ["synth", "pool", "--split", "train", "--tasks", train.join(","), "--json", ...common],
      env,
      cwd,
    );
    expect(pool.code).toBe(0);
    expect(JSON.parse(pool.stdout)).toMatchObject({
      family: "suite-quickstart",
      added: 2,
      // Zero-shot answers are the stubs: 0 of 4 checks each.
      meanScoreAdded: 0,
    });
    const poolPath = join(cwd, ".skillsmith/synth/suite-quickstart/pool.jsonl");
    const entries = (await readFile(poolPath, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { solverOutput: string; outcome: { total: number } });
    // The pool keeps the agent's diff: the stub module as a new file.
    expect(entries[0]?.solverOutput).toMatch(/^diff --git a\/invoicer\/\S+\.py b\/invoicer\//);
    expect(entries[0]?.solverOutput).toContain("+    raise NotImplementedError");
    expect(entries.map((entry) => entry.outcome.total)).toEqual([4, 4]);

    const logPath = join(cwd, "run.jsonl");
    const run = await runSynthCli(
      [
        "synth",
        "run",
        "--split",
        "test",
        "--tasks",
        test.join(","),
        "--samples",
        "2",
        "--log",
        logPath,
        ...common,
      ],
      env,
      cwd,
    );
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n");
    const scoreOf = (method: string) =>
      lines.find((line) => line.startsWith(method.padEnd(12)))?.split(/\s+/)[1];
    // Stubs score 0, the Decimal answers (given a skill with the magic word) score 1.
    expect(scoreOf("zero-shot")).toBe("0.000");
    expect(scoreOf("rag")).toBe("0.000");
    expect(scoreOf("static-skill")).toBe("1.000");
    expect(scoreOf("synth")).toBe("1.000");
    expect(scoreOf("react")).toBe("0.000");
    expect(scoreOf("best-of-n")).toBe("0.000");
    expect(run.stdout).toContain("N = 2 samples per task");
    // Cost by hand: one agent attempt = (300 + 2·40) + (350 + 2·5) = 740, so zero-shot = 1,480
    // for two tasks. synth adds 2 · (200 + 2·50) = 600 → 2,080 / 1,480 = 1.41; static-skill one
    // synthesis, 1,780 / 1,480 = 1.20; Best-of-N two attempts per task (its self-check is free
    // here: File Operations paths) → 2.00; rag and react 1.00.
    const relative = (label: string) => costRow(run.stdout, label).relative;
    expect(relative("zero-shot")).toBe("1.00x");
    expect(relative("rag")).toBe("1.00x");
    expect(relative("synth")).toBe("1.41x");
    expect(relative("static-skill")).toBe("1.20x");
    expect(relative("best-of-n")).toBe("2.00x");
    expect(relative("react")).toBe("1.00x");

    const records = (await readFile(logPath, "utf8"))
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as {
            method: string;
            retrieval?: { method: string; hits: { taskId: string }[] };
            bestOfN?: { n: number; criterion: string; checkScores: number[] };
            steps?: string[];
          },
      );
    const synthRecords = records.filter((record) => record.method === "synth");
    expect(synthRecords).toHaveLength(2);
    for (const record of synthRecords) {
      expect(record.retrieval?.method).toBe("bm25");
      expect(record.retrieval?.hits.map((hit) => hit.taskId).sort()).toEqual([...train].sort());
    }
    const best = records.filter((record) => record.method === "best-of-n");
    expect(best.map((record) => record.bestOfN?.n)).toEqual([2, 2]);
    // Both samples write the one File Operations path: both check scores are 1.
    expect(best[0]?.bestOfN?.checkScores).toEqual([1, 1]);
    expect(records.find((record) => record.method === "react")?.steps?.[1]).toMatch(
      /^act: write_file/,
    );

    // The agent saw the requirement's visible sections, acceptance criteria included.
    const agentRequests = server.requests.filter((request) =>
      request.system.includes("You are a coding agent"),
    );
    expect(agentRequests.length).toBeGreaterThan(0);
    expect(
      agentRequests.some((request) => request.lastUserMessage.includes("## Acceptance Criteria")),
    ).toBe(true);
    expect(
      agentRequests.some((request) => request.lastUserMessage.includes("reason-act loop")),
    ).toBe(true);
    // Failing checks existed (their tracebacks quote the secret), and yet no request has it.
    for (const request of server.requests)
      expect(JSON.stringify(request.body)).not.toContain(secret);
    expect(await readFile(poolPath, "utf8")).not.toContain(secret);
    expect(await readFile(logPath, "utf8")).not.toContain(secret);
  });
});
