/**
 * The protocol-C baselines on the built-in family, against the scripted model server over real
 * HTTP with hidden tests run by real pytest: ReAct (think, run own code in the sandbox, observe,
 * answer), Best-of-N (N samples at temperature > 0, chosen by the solver's own asserts, never the
 * hidden tests), SkillOpt-like (the static skill's slot library optimised by the MPO loop on the
 * training split, then one skill applied unchanged to every test task). Costs are checked against
 * hand-computed (I + 2·O) / (I₀ + 2·O₀) from the scripted token counts.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Script, ScriptRule } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import {
  buildPool,
  compareMethods,
  LibraryStore,
  optimiseLibrary,
  readPool,
  relativeCost,
  runMethod,
} from "../src/synth/index.js";
import {
  hasPytest,
  runSynthCli,
  shipped,
  startBuiltinFamily,
  writeShippedFamily,
} from "./support/synth.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const cleanups = cleanupsAfterEach();
const temporaryDirectory = () => temporaryDirectoryIn(cleanups, "skillsmith-synth-baselines-");

const secret = "zq-baseline-secret-5521";

/**
 * A family folder of shipped tasks whose hidden tests all carry the secret, in a comment, a
 * constant and the message of one extra test that always fails (so failure output quotes it).
 * Each task then has one more hidden check than shipped, which the reference fails.
 */
async function familyFolder(ids: readonly string[]): Promise<string> {
  return writeShippedFamily(
    await temporaryDirectory(),
    ids,
    (task) =>
      `${task.tests}\n# ${secret}\nMARKER = "${secret}"\n\ndef test_extra():\n    raise AssertionError("${secret}")\n`,
  );
}

function escapeRegex(text: string): string {
  return text.replace(/[()[\]|.*+?^$\\{}]/g, "\\$&");
}

async function start(script: Script, ids: readonly string[]) {
  return startBuiltinFamily(cleanups, script, await familyFolder(ids), await temporaryDirectory());
}

function noSecretIn(server: ScriptedServer): void {
  expect(server.requests.length).toBeGreaterThan(0);
  for (const request of server.requests) expect(JSON.stringify(request.body)).not.toContain(secret);
}

const reactSystem = "reason-act loop";
const selfCheckSystem = "You write quick checks";

describe.skipIf(!hasPytest)("ReAct on the built-in family (needs python3 with pytest)", () => {
  it("thinks, runs its own script in an empty sandbox folder, observes and answers", async () => {
    const { references } = await shipped();
    const target = `signature:\\n${escapeRegex("def digit_sum(number: int) -> int")}`;
    const script: Script = {
      rules: [
        // Step 2: the observation shows an empty folder (only the script) and 42.
        {
          match: { system: reactSystem, toolResult: "\\['script\\.py'\\][\\s\\S]*42" },
          reply: {
            text: `Thought: the folder holds only my script.\n\`\`\`python\n${references["digit-sum"]}\`\`\``,
            usage: { inputTokens: 100, outputTokens: 10 },
          },
        },
        // Step 1: act.
        {
          match: { system: reactSystem, toolOffered: "run_python", lastUserMessage: target },
          reply: {
            text: "Thought: look around and check arithmetic.",
            toolCalls: [
              {
                name: "run_python",
                input: { code: 'import os\nprint(sorted(os.listdir(".")))\nprint(6 * 7)\n' },
              },
            ],
            usage: { inputTokens: 100, outputTokens: 10 },
          },
        },
        // The zero-shot solver: a stub.
        {
          match: { lastUserMessage: target },
          reply: {
            text: "```python\ndef digit_sum(number):\n    raise NotImplementedError\n```",
            usage: { inputTokens: 100, outputTokens: 10 },
          },
        },
      ],
      fallback: { text: "unexpected request" },
    };
    const { server, model, family, tasks } = await start(script, ["digit-sum"]);
    const zeroShot = await runMethod({
      family,
      model,
      tasks,
      pool: [],
      method: "zero-shot",
      library: await new LibraryStore("/nonexistent").load("v1"),
    });
    const react = await runMethod({
      family,
      model,
      tasks,
      pool: [],
      method: "react",
      library: await new LibraryStore("/nonexistent").load("v1"),
    });
    // Hidden: two shipped tests the reference passes, plus the planted one it fails.
    expect(react.records[0]).toMatchObject({ score: 2 / 3, passed: 2, total: 3 });
    expect(zeroShot.records[0]).toMatchObject({ score: 0, passed: 0, total: 3 });
    const steps = react.records[0]?.steps ?? [];
    expect(steps[0]).toBe("thought: Thought: look around and check arithmetic.");
    expect(steps[1]).toMatch(/^act: run_python/);
    expect(steps[2]).toContain("['script.py']\n42");
    // Two model calls, 100 in / 10 out each: (200 + 2·20) / (100 + 2·10) = 2.
    expect(react.usage.solver).toEqual({ inputTokens: 200, outputTokens: 20, calls: 2 });
    expect(relativeCost(react.usage, zeroShot.usage)).toBe(2);
    const reactCalls = server.requests.filter((request) => request.system.includes(reactSystem));
    expect(reactCalls).toHaveLength(2);
    expect(JSON.stringify(reactCalls[1]?.body)).toContain("run_python");
    noSecretIn(server);
  });
});

describe.skipIf(!hasPytest)("Best-of-N on the built-in family (needs python3 with pytest)", () => {
  it("samples N at temperature > 0, picks by the solver's own asserts, counts all N", async () => {
    const { references } = await shipped();
    const target = `signature:\\n${escapeRegex("def digit_sum(number: int) -> int")}`;
    const answer = (code: string) => ({
      text: `\`\`\`python\n${code}\`\`\``,
      usage: { inputTokens: 100, outputTokens: 10 },
    });
    const script: Script = {
      rules: [
        {
          match: { system: selfCheckSystem },
          reply: {
            text: "assert digit_sum(123) == 6\nassert digit_sum(0) == 0",
            usage: { inputTokens: 50, outputTokens: 20 },
          },
        },
        // Samples in order: a stub (0 of 2 asserts), `return 0` (1 of 2), the reference (2 of 2).
        {
          match: { lastUserMessage: target },
          times: 1,
          reply: answer("def digit_sum(number):\n    raise NotImplementedError\n"),
        },
        {
          match: { lastUserMessage: target },
          times: 1,
          reply: answer("def digit_sum(number):\n    return 0\n"),
        },
        { match: { lastUserMessage: target }, reply: answer(references["digit-sum"] ?? "") },
      ],
      fallback: { text: "unexpected request" },
    };
    const { server, model, family, tasks } = await start(script, ["digit-sum"]);
    const library = await new LibraryStore("/nonexistent").load("v1");
    const best = await runMethod({
      family,
      model,
      tasks,
      pool: [],
      method: "best-of-n",
      library,
      samples: 3,
      sampleTemperature: 0.7,
    });
    const zeroShot = await runMethod({
      family,
      model,
      tasks,
      pool: [],
      method: "zero-shot",
      library,
    });
    const record = best.records[0];
    expect(record?.bestOfN).toMatchObject({
      n: 3,
      temperature: 0.7,
      checkScores: [0, 0.5, 1],
      chosen: 2,
      criterion: "self-written asserts (2)",
    });
    expect(record?.score).toBe(2 / 3);
    expect(best.samples).toBe(3);
    // Every sample was asked at the sampling temperature; the self-check at 0.
    const solverBodies = server.requests
      .filter((request) => request.system.includes("careful Python programmer"))
      .map((request) => request.body as { temperature?: number });
    expect(solverBodies.slice(0, 3).map((body) => body.temperature)).toEqual([0.7, 0.7, 0.7]);
    // Cost: 3 samples (100 + 2·10) + the self-check (50 + 2·20) = 450; zero-shot 120 → 3.75.
    expect(best.usage.solver).toEqual({ inputTokens: 350, outputTokens: 50, calls: 4 });
    expect(relativeCost(best.usage, zeroShot.usage)).toBe(3.75);
    const report = compareMethods({ family: "builtin", split: "test", model: "m", taskCount: 1 }, [
      zeroShot,
      best,
    ]);
    expect(report.results.find((result) => result.method === "best-of-n")?.samples).toBe(3);
    expect(report.cost.find((row) => row.label === "best-of-n")?.relativeCost).toBe(3.75);
    noSecretIn(server);
  });
});

describe.skipIf(!hasPytest)(
  "SkillOpt-like on the built-in family (needs python3 with pytest)",
  () => {
    const skillSystem = "You write a temporary agent skill";
    const magicWord = "USE-REFERENCE-IMPLEMENTATION";
    const skill = (hint: string) =>
      `---\nname: family-skill\ndescription: Guidance for these tasks.\n---\n\n## When to use\nAlways.\n\n## Approach\n1. ${hint}\n\n## Pitfalls\n- Empty input.\n\n## Checks\n- Small example.\n`;

    /** As in synth-loop: the skill helps only when the library holds the `emit-magic` slot. */
    async function script(ids: readonly string[]): Promise<Script> {
      const { tasks, references } = await shipped();
      const rules: ScriptRule[] = [
        {
          match: { system: `${skillSystem}[\\s\\S]*EMIT-MAGIC` },
          reply: { text: skill(`${magicWord}.`), usage: { inputTokens: 200, outputTokens: 50 } },
        },
        {
          match: { system: skillSystem },
          reply: { text: skill("Think."), usage: { inputTokens: 200, outputTokens: 50 } },
        },
        {
          match: { system: "You are the critic" },
          reply: { text: JSON.stringify({ attributions: [] }) },
        },
        {
          match: { system: "You are the editor" },
          reply: {
            text: JSON.stringify({
              rationale: "the one skill must name the implementation",
              operations: [
                {
                  op: "add",
                  category: "input",
                  id: "emit-magic",
                  text: "EMIT-MAGIC: be explicit.",
                },
              ],
            }),
          },
        },
      ];
      for (const id of ids) {
        const task = tasks.find((each) => each.id === id);
        if (task === undefined) throw new Error(id);
        const target = `signature:\\n${escapeRegex(task.signature)}`;
        rules.push(
          {
            match: { lastUserMessage: `${magicWord}[\\s\\S]*${target}` },
            reply: {
              text: `\`\`\`python\n${references[id]}\`\`\``,
              usage: { inputTokens: 100, outputTokens: 10 },
            },
          },
          {
            match: { lastUserMessage: target },
            reply: {
              text: `\`\`\`python\n${task.signature}:\n    raise NotImplementedError\n\`\`\``,
              usage: { inputTokens: 100, outputTokens: 10 },
            },
          },
        );
      }
      return { rules, fallback: { text: "unexpected request" } };
    }

    it("optimises the static skill's library on train, then applies one skill unchanged to every test task", async () => {
      const trainIds = ["digit-sum"];
      const testIds = ["chunk-list", "is-prime"];
      const ids = [...trainIds, ...testIds];
      const { server, model, family, tasks, directory } = await start(await script(ids), ids);
      const train = tasks.filter((task) => trainIds.includes(task.id));
      const test = tasks.filter((task) => testIds.includes(task.id));
      const poolPath = join(directory, "pool.jsonl");
      await buildPool({ family, model, tasks: train, split: "train", path: poolPath });
      const pool = await readPool(poolPath);
      const store = new LibraryStore(join(directory, "skillopt"));
      const report = await optimiseLibrary({
        family,
        model,
        trainTasks: train,
        pool,
        store,
        target: "skillopt",
        epochs: 1,
        sampleShare: 1,
      });
      expect(report.target).toBe("skillopt");
      // Without the slot the one skill does not help (0 of 3); with it the reference passes 2 of
      // 3: the patch is kept.
      expect(report.epochs[0]?.patch).toMatchObject({
        status: "accepted",
        scores: { base: 0, candidate: 2 / 3 },
      });
      expect(report.finalVersion).toBe("v2");
      // The optimisation ran the static skill, never a per-task synthesis: one synthesiser call
      // per evaluated library (current and candidate).
      const synthesisCalls = () =>
        server.requests.filter((request) => request.system.includes(skillSystem)).length;
      expect(synthesisCalls()).toBe(2);

      const before = server.requests.length;
      const library = await store.load(await store.current());
      const skillopt = await runMethod({
        family,
        model,
        tasks: test,
        pool,
        method: "skillopt",
        library,
      });
      const zeroShot = await runMethod({
        family,
        model,
        tasks: test,
        pool,
        method: "zero-shot",
        library,
      });
      expect(skillopt.meanScore).toBe(2 / 3);
      expect(zeroShot.meanScore).toBe(0);
      expect(skillopt.libraryVersion).toBe("v2");
      // One skill for the whole split: one synthesis, the same markdown in every record.
      expect(synthesisCalls()).toBe(3);
      const markdowns = new Set(skillopt.records.map((record) => record.skill?.markdown));
      expect(markdowns.size).toBe(1);
      expect([...markdowns][0]).toContain(magicWord);
      const runRequests = server.requests.slice(before);
      expect(
        runRequests.filter((request) => request.lastUserMessage.includes(magicWord)),
      ).toHaveLength(2);
      // Cost: 2 · (100 + 2·10) + (200 + 2·50) = 540 against 240 → 2.25.
      expect(relativeCost(skillopt.usage, zeroShot.usage)).toBe(2.25);
      noSecretIn(server);
    });

    it("runs through the CLI: optimise --target skillopt, then run --method skillopt", async () => {
      const { tasks } = await shipped();
      const ids = tasks.map((task) => task.id);
      const server = await startScriptedServer({ script: await script(ids) });
      cleanups.push(() => server.close());
      const cwd = await temporaryDirectory();
      const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url };
      const common = [
        "--model",
        "anthropic:claude-haiku-4-5",
        "--limit",
        "1",
        "--unsafe-no-sandbox",
      ];
      const cli = (argv: string[]) => runSynthCli(argv, env, cwd);
      await cli(["synth", "pool", "--split", "train", ...common]);
      await expect(cli(["synth", "run", "--method", "skillopt", ...common])).rejects.toThrow(
        /no SkillOpt optimisation in .*skillopt: run "skillsmith synth optimise/,
      );
      const optimise = await cli([
        "synth",
        "optimise",
        "--target",
        "skillopt",
        "--epochs",
        "1",
        "--sample",
        "1",
        ...common,
      ]);
      expect(optimise.stdout).toMatch(/library v1 -> v2 \(target skillopt, store .*skillopt\)/);
      const run = await cli(["synth", "run", "--method", "skillopt", ...common]);
      const lines = run.stdout.split("\n");
      const row = lines.find((line) => line.startsWith("skillopt"));
      // Shipped tasks, no planted test: the reference passes everything.
      expect(row?.split(/\s+/).slice(1, 4)).toEqual(["1.000", "0", "v2"]);
      expect(lines.find((line) => line.startsWith("zero-shot"))?.split(/\s+/)[1]).toBe("0.000");
      // The MPO store for per-task synthesis is untouched.
      expect(
        await readFile(join(cwd, ".skillsmith/synth/builtin/current"), "utf8").catch(() => "none"),
      ).toBe("none");
      // Optimises and runs the built-in family through the CLI: 48 s at load 20.
    }, 300_000);
  },
);
