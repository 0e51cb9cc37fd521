/**
 * HumanEval end to end through `skillsmith synth pool / run / optimise`, against the scripted
 * model server over real HTTP, hidden checks in real bubblewrap with Debian's python3. The
 * scripted solver returns the canonical solution for some task ids and a wrong body for the
 * others, so the scores are known by hand. Evaluator-only fields carry planted secrets; the
 * recorded requests — every role's, embedding inputs included — are searched for them. The
 * recorded requests also show the temperatures (solver and synthesiser 0, critic and editor 0.2),
 * the critic's evidence, and the protocol's numbers in the manifests.
 */
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UnsafeSandbox } from "../src/env/index.js";
import type { Script, ScriptRule } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { defaultSplitSeed, HumanEvalTaskFamily, readPool } from "../src/synth/index.js";
import { usableBubblewrap } from "./support/sandboxes.js";
import {
  costRow,
  criticBlamingTheSkill,
  type HumanEvalRecord,
  hasDebianPython,
  hasHumanEval,
  humanEvalRecords,
  runSynthCli,
} from "./support/synth.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const cleanups = cleanupsAfterEach();
const temporaryDirectory = () => temporaryDirectoryIn(cleanups, "skillsmith-humaneval-");
const bubblewrap = await usableBubblewrap();

const secrets = {
  canonical: "zq-planted-canonical-6121",
  test: "zq-planted-test-6122",
  entry: "zq_planted_entry_6123",
};
/** The first eight tasks; the scripted solver solves these four and answers the rest wrongly. */
const ids = Array.from({ length: 8 }, (_, index) => `HumanEval/${index}`);
const solved = new Set(["HumanEval/0", "HumanEval/2", "HumanEval/5", "HumanEval/7"]);

const escapeRegex = (text: string) => text.replace(/[()[\]|.*+?^$\\{}]/g, "\\$&");

/**
 * The eight tasks with a secret planted in every evaluator-only field: a comment in the
 * canonical solution, a comment and a constant in the test, and — for the tasks the solver
 * fails anyway (a planted entry point cannot be found) — the entry point itself.
 */
function planted(records: readonly HumanEvalRecord[]): HumanEvalRecord[] {
  return records.map((record) => ({
    ...record,
    canonical_solution: `${record.canonical_solution}    # ${secrets.canonical}\n`,
    test: `${record.test}\n# ${secrets.test}\nPLANTED = "${secrets.test}"\n`,
    entry_point: solved.has(record.task_id) ? record.entry_point : secrets.entry,
  }));
}

const skillText = `---
name: complete-the-function
description: Guidance for completing one Python function from its docstring.
---

## When to use
For this task only.

## Approach
1. Read the docstring's examples.

## Pitfalls
- Empty input.

## Checks
- Run the examples.
`;

/** The script: the canonical (unplanted) solution for solved ids, a wrong body for the rest. */
function scriptFor(records: readonly HumanEvalRecord[]): Script {
  const rules: ScriptRule[] = [
    { match: { system: "You write a temporary agent skill" }, reply: { text: skillText } },
    criticBlamingTheSkill(ids, "the skill did not stress the docstring's examples"),
    {
      match: { system: "You are the editor" },
      reply: {
        text: JSON.stringify({
          rationale: "point at the examples",
          operations: [
            {
              op: "replace",
              category: "input",
              id: "read-target",
              text: "Read the prompt's docstring and every example in it first.",
            },
          ],
        }),
      },
    },
  ];
  for (const record of records) {
    const answer = solved.has(record.task_id)
      ? `${record.prompt}${record.canonical_solution}`
      : `def ${record.entry_point}(*args, **kwargs):\n    return None\n`;
    const target = `# Task\\n\\nprompt:\\n[\\s\\S]*def ${escapeRegex(record.entry_point)}\\(`;
    const reply = { text: `\`\`\`python\n${answer}\`\`\`` };
    rules.push(
      // ReAct: first a probe run in the sandbox, then (seeing its output) the answer.
      {
        match: { system: "reason-act loop", toolResult: `probe ${record.entry_point}\\b` },
        reply,
      },
      {
        match: { system: "reason-act loop", lastUserMessage: target },
        reply: {
          text: "Thought: run a probe first.",
          toolCalls: [
            { name: "run_python", input: { code: `print("probe ${record.entry_point}")` } },
          ],
        },
      },
      { match: { system: "The task is a Python prompt", lastUserMessage: target }, reply },
    );
  }
  return { rules, embeddings: { dimensions: 1024 }, fallback: { text: "unexpected request" } };
}

const roleOf = (request: ScriptedServer["requests"][number]): string => {
  if (request.api === "openai-embeddings") return "embedder";
  if (request.system.includes("You write a temporary agent skill")) return "synthesiser";
  if (request.system.includes("You are the critic")) return "critic";
  if (request.system.includes("You are the editor")) return "editor";
  if (request.system.includes("reason-act loop")) return "react";
  if (request.system.includes("The task is a Python prompt")) return "solver";
  return "unknown";
};

const temperatureOf = (request: ScriptedServer["requests"][number]): unknown =>
  (request.body as { temperature?: unknown }).temperature;

describe.skipIf(!hasHumanEval || !hasDebianPython || bubblewrap === undefined)(
  "synth on HumanEval, scripted model, bubblewrap (needs ../shared/fixtures/humaneval, /usr/bin/python3, bwrap)",
  () => {
    it("pool, run and optimise end to end; nothing evaluator-only reaches any request", async () => {
      const records = (await humanEvalRecords()).filter((record) => ids.includes(record.task_id));
      expect(records).toHaveLength(8);
      const cwd = await temporaryDirectory();
      const dataset = join(cwd, "planted.jsonl");
      const datasetText = `${planted(records)
        .map((record) => JSON.stringify(record))
        .join("\n")}\n`;
      await writeFile(dataset, datasetText);
      const server = await startScriptedServer({ script: scriptFor(records) });
      cleanups.push(() => server.close());
      const env = {
        ANTHROPIC_API_KEY: "test-key",
        ANTHROPIC_BASE_URL: server.url,
        OPENAI_API_KEY: "test-key",
        OPENAI_BASE_URL: `${server.url}/v1`,
      };
      const family = `humaneval:${dataset}`;
      const common = ["--family", family, "--model", "anthropic:claude-haiku-4-5"];

      // The split, computed here from the family itself (the CLI must agree with it).
      const loaded = new HumanEvalTaskFamily({ path: dataset, sandbox: new UnsafeSandbox() });
      const tasks = await loaded.loadTasks();
      const train = loaded.split(tasks, "train", defaultSplitSeed).map((task) => task.id);
      const test = loaded.split(tasks, "test", defaultSplitSeed).map((task) => task.id);
      expect([train.length, test.length]).toEqual([4, 4]);
      const share = (split: readonly string[]) =>
        split.filter((id) => solved.has(id)).length / split.length;

      // 1. The pool: zero-shot on train.
      const pool = await runSynthCli(
        ["synth", "pool", "--split", "train", "--json", ...common],
        env,
        cwd,
      );
      expect(pool.code).toBe(0);
      const poolSummary = JSON.parse(pool.stdout) as Record<string, unknown>;
      expect(poolSummary).toMatchObject({
        family: "humaneval",
        added: 4,
        splitSeed: defaultSplitSeed,
        trainShare: 0.5,
        meanScoreAdded: share(train),
      });
      const entries = await readPool(String(poolSummary.pool));
      expect(entries.map((entry) => entry.taskId).sort()).toEqual([...train].sort());
      for (const entry of entries) {
        expect(entry).toMatchObject({ schema: 2, splitSeed: defaultSplitSeed, trainShare: 0.5 });
        expect(entry.outcome.score).toBe(solved.has(entry.taskId) ? 1 : 0);
        expect(Object.keys(entry.visible)).toEqual(["prompt"]);
      }

      // 2. Every method on the test split, retrieval by (scripted) embeddings.
      const logPath = join(cwd, "run.jsonl");
      const run = await runSynthCli(
        [
          "synth",
          "run",
          "--split",
          "test",
          "--embedding-model",
          "openai:text-embedding-3-small",
          "--log",
          logPath,
          ...common,
        ],
        env,
        cwd,
      );
      expect(run.code).toBe(0);
      console.info(`synth run on HumanEval (scripted):\n${run.stdout}`);
      const expected = share(test).toFixed(3);
      for (const method of ["zero-shot", "rag", "static-skill", "synth", "react", "best-of-n"])
        expect(
          run.stdout
            .split("\n")
            .find((line) => line.startsWith(method.padEnd(12)))
            ?.split(/\s+/)[1],
        ).toBe(expected);
      expect(run.stdout).toContain(
        "top-k 3, split seed 20260101 (train share 0.5), pool 4 tasks : 4 run",
      );
      // Priced at claude-haiku-4-5's list price ($1 in / $5 out per million tokens).
      expect(costRow(run.stdout, "zero-shot").line).toMatch(/\$0\.\d{4}$/);
      const manifest = JSON.parse(await readFile(join(cwd, "run.manifest.json"), "utf8")) as Record<
        string,
        unknown
      >;
      expect(manifest).toMatchObject({
        format: "skillsmith-synth-run/1",
        familySettings: {
          dataset,
          datasetSha256: createHash("sha256").update(datasetText).digest("hex"),
          tasks: 8,
          python: "/usr/bin/python3",
          taskTimeoutMs: 10_000,
          sandbox: "local",
        },
        report: {
          settings: {
            topK: 3,
            slots: { maxSlotsPerCategory: 8, maxSlotCharacters: 1_200, maxSlotsPerPatch: 4 },
            temperatures: { solver: 0, synthesiser: 0, critic: 0.2, editor: 0.2 },
            optimisation: {
              epochs: 3,
              sampleShare: 0.25,
              caseRatio: {
                regression: 3,
                improvement: 2,
                "persistent-success": 1,
                "persistent-failure": 1,
              },
            },
            split: { seed: defaultSplitSeed, trainShare: 0.5, poolToTestRatio: "1:1" },
          },
          poolTasks: 4,
        },
      });
      const logged = (await readFile(logPath, "utf8"))
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { method: string; feedback?: string; checks: unknown });
      expect(logged.find((record) => record.method === "zero-shot")).toMatchObject({
        checks: [{ name: "hidden check", status: expect.any(String) }],
        feedback: expect.any(String),
      });

      // A pool built on another split holds test tasks of this one: refused.
      const otherTest = loaded.split(tasks, "test", 5).map((task) => task.id);
      expect(otherTest.some((id) => train.includes(id))).toBe(true);
      await expect(
        runSynthCli(
          ["synth", "run", "--split", "test", "--split-seed", "5", "--method", "rag", ...common],
          env,
          cwd,
        ),
      ).rejects.toThrow(/holds attempts on \d+ task\(s\) of the test split \(split seed 5\)/);

      // 3. MPO for one epoch over the whole training split; then SkillOpt, and its run.
      const optimise = await runSynthCli(
        ["synth", "optimise", "--epochs", "1", "--sample", "1", "--seed", "3", "--json", ...common],
        env,
        cwd,
      );
      expect(optimise.code).toBe(0);
      const report = JSON.parse(optimise.stdout) as {
        settings: Record<string, unknown>;
        familySettings: Record<string, unknown>;
        reportPath: string;
        epochs: {
          transitions: Record<string, number>;
          quotas: Record<string, number>;
          cases: unknown[];
          criticInput: { characters: number; limits: { casesCharacters: number } };
          patch?: { status: string };
        }[];
      };
      expect(report.settings).toMatchObject({
        optimisation: { epochs: 1, sampleShare: 1, seed: 3 },
        temperatures: { critic: 0.2, editor: 0.2 },
      });
      expect(report.familySettings).toMatchObject({ python: "/usr/bin/python3" });
      const [epoch] = report.epochs;
      // Zero-shot and synth give the same answers: the solved train tasks persist as successes,
      // the others as failures. Fewer than 7 cases exist, so all 4 are drawn.
      const successes = train.filter((id) => solved.has(id)).length;
      expect(epoch?.transitions).toEqual({
        regression: 0,
        improvement: 0,
        "persistent-success": successes,
        "persistent-failure": 4 - successes,
      });
      expect(epoch?.cases).toHaveLength(4);
      expect(epoch?.criticInput.limits.casesCharacters).toBe(48_000);
      expect(epoch?.patch?.status).toBe("rejected-no-gain");
      expect(JSON.parse(await readFile(report.reportPath, "utf8"))).toMatchObject({
        format: "skillsmith-synth-optimisation/1",
        settings: { format: "skillsmith-synth-settings/1", optimisation: { epochs: 1 } },
      });
      const skillopt = await runSynthCli(
        ["synth", "optimise", "--target", "skillopt", "--epochs", "1", "--sample", "1", ...common],
        env,
        cwd,
      );
      expect(skillopt.code).toBe(0);
      const skilloptRun = await runSynthCli(
        ["synth", "run", "--method", "skillopt", "--json", ...common],
        env,
        cwd,
      );
      expect(
        (JSON.parse(skilloptRun.stdout) as { results: { method: string; meanScore: number }[] })
          .results,
      ).toEqual([
        expect.objectContaining({ method: "zero-shot", meanScore: share(test) }),
        expect.objectContaining({ method: "skillopt", meanScore: share(test) }),
      ]);

      // The critic saw the evidence the protocol lists: signals, retrieved text, skills, answers.
      const critic = server.requests.find((request) => roleOf(request) === "critic");
      const criticPrompt = critic?.lastUserMessage ?? "";
      expect(criticPrompt).toContain("Evaluation signals: score ");
      expect(criticPrompt).toMatch(/feedback: (the hidden check passed|the answer did not load)/);
      expect(criticPrompt).toContain("Retrieved evidence:\n## Attempt 1: HumanEval/");
      expect(criticPrompt).toContain("## Approach\n1. Read the docstring's examples.");
      expect(criticPrompt).toContain("Solver answer:\n");
      expect(critic?.system).toContain("evaluation signals");

      // Every role was exercised, so the searches below cover all of their prompts.
      const roles = new Set(server.requests.map(roleOf));
      expect([...roles].sort()).toEqual(
        ["critic", "editor", "embedder", "react", "solver", "synthesiser"].sort(),
      );
      const hiddenTexts = records.flatMap((record) => [
        record.test.trim(),
        record.canonical_solution.trim().split("\n").at(-1) ?? "",
      ]);
      for (const request of server.requests) {
        const body = JSON.stringify(request.body);
        for (const secret of Object.values(secrets)) expect(body).not.toContain(secret);
        expect(body).not.toContain("def check(candidate)");
        expect(body).not.toContain("METADATA");
        // The tests' text, whole; the canonical solutions are legitimately the solver's answers.
        for (const text of hiddenTexts.filter((_, index) => index % 2 === 0))
          expect(body).not.toContain(JSON.stringify(text).slice(1, -1));
      }
      for (const file of [String(poolSummary.pool), logPath])
        for (const secret of Object.values(secrets))
          expect(await readFile(file, "utf8")).not.toContain(secret);

      // Temperatures as sent: solver and synthesiser 0 (Best-of-N samples at its 0.8, 4 per
      // task), critic and editor 0.2.
      const byRole = (role: string) =>
        server.requests.filter((request) => roleOf(request) === role);
      for (const role of ["synthesiser", "react"])
        for (const request of byRole(role)) expect(temperatureOf(request)).toBe(0);
      for (const role of ["critic", "editor"]) {
        expect(byRole(role).length).toBeGreaterThan(0);
        for (const request of byRole(role)) expect(temperatureOf(request)).toBe(0.2);
      }
      const solverTemperatures = byRole("solver").map(temperatureOf);
      expect(solverTemperatures.filter((value) => value === 0.8)).toHaveLength(4 * test.length);
      expect(solverTemperatures.every((value) => value === 0 || value === 0.8)).toBe(true);
    }, 240_000);
  },
);
