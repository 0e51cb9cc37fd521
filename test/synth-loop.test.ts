/**
 * The synthesis loop end to end against the scripted model server over real HTTP, with hidden
 * tests run by real pytest: no hidden data reaches any prompt; MPO keeps a patch that raises the
 * score and rejects one that lowers it, an oversized one and one breaking the slot limits; the
 * CLI prints the method comparison and cost table for the built-in family.
 */
import { existsSync, readdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UnsupportedError } from "../src/core/errors.js";
import type { Script, ScriptRule } from "../src/model/scripted/script.js";
import { startScriptedServer } from "../src/model/scripted/server.js";
import {
  buildPool,
  defaultSplitSeed,
  LibraryStore,
  type MethodResult,
  methods,
  optimiseLibrary,
  readPool,
  runMethod,
  type SlotLibrary,
} from "../src/synth/index.js";
import {
  costRow,
  criticBlamingTheSkill,
  hasPytest,
  runSynthCli,
  type ShippedTask,
  shipped,
  startBuiltinFamily,
  writeShippedFamily,
} from "./support/synth.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const cleanups = cleanupsAfterEach();
const temporaryDirectory = () => temporaryDirectoryIn(cleanups, "skillsmith-synth-test-");

const secret = "zq-planted-secret-4417";

/** A small family folder of shipped tasks; with `plantSecret`, every hidden test carries it. */
async function familyFolder(ids: readonly string[], plantSecret: boolean): Promise<string> {
  // In a constant, a comment and a failing assertion's message, so it would show up in the
  // test source, a traceback and a JUnit failure message alike.
  const planted = (task: ShippedTask) =>
    `${task.tests}\n# ${secret}\nMARKER = "${secret}"\n\ndef test_extra():\n    assert ${task.entryPoint} is not None and MARKER.startswith("zq"), "${secret}"\n    raise AssertionError("${secret}")\n`;
  return writeShippedFamily(await temporaryDirectory(), ids, plantSecret ? planted : undefined);
}

const skillSystem = "You write a temporary agent skill";
const magicWord = "USE-REFERENCE-IMPLEMENTATION";

function skillReply(name: string, hint: string): string {
  return `---\nname: ${name}\ndescription: Guidance for writing the target function.\n---\n\n## When to use\nFor this task only.\n\n## Approach\n1. ${hint}\n\n## Pitfalls\n- Handle empty input.\n\n## Checks\n- Try a small example.\n`;
}

/**
 * The script: the synthesiser writes a skill carrying the magic word only when its system prompt
 * holds the `emit-magic` slot; the solver answers each task correctly only when the magic word
 * is in its prompt, and with a stub otherwise. So the score depends on the slot library alone.
 */
async function scriptFor(
  ids: readonly string[],
  editorReplies: readonly string[],
): Promise<Script> {
  const { tasks, references } = await shipped();
  const rules: ScriptRule[] = [
    {
      match: { system: `${skillSystem}[\\s\\S]*EMIT-MAGIC` },
      reply: {
        text: skillReply("magic-skill", `${magicWord}.`),
        usage: { inputTokens: 200, outputTokens: 50 },
      },
    },
    {
      match: { system: skillSystem },
      reply: {
        text: skillReply("plain-skill", "Think about the task."),
        usage: { inputTokens: 200, outputTokens: 50 },
      },
    },
    criticBlamingTheSkill(ids, "the skill gave no usable guidance"),
    ...editorReplies.map((text) => ({
      match: { system: "You are the editor" },
      reply: { text },
      times: 1,
    })),
  ];
  for (const id of ids) {
    const task = tasks.find((each) => each.id === id);
    if (task === undefined) throw new Error(`no shipped task ${id}`);
    const target = `signature:\\n${task.signature.replace(/[()[\]|.*+?^$\\{}]/g, "\\$&")}`;
    rules.push({
      match: { lastUserMessage: `${magicWord}[\\s\\S]*${target}` },
      reply: {
        text: `\`\`\`python\n${references[id]}\`\`\``,
        usage: { inputTokens: 100, outputTokens: 10 },
      },
    });
    rules.push({
      match: { lastUserMessage: target },
      reply: {
        text: `\`\`\`python\n${task.signature}:\n    raise NotImplementedError\n\`\`\``,
        usage: { inputTokens: 100, outputTokens: 10 },
      },
    });
  }
  return { rules, fallback: { text: "unexpected request" } };
}

async function setUp(
  ids: readonly string[],
  editorReplies: readonly string[],
  plantSecret = false,
) {
  return startBuiltinFamily(
    cleanups,
    await scriptFor(ids, editorReplies),
    await familyFolder(ids, plantSecret),
    await temporaryDirectory(),
  );
}

const addMagic = JSON.stringify({
  rationale: "the skill must tell the solver which implementation to use",
  operations: [
    {
      op: "add",
      category: "input",
      id: "emit-magic",
      text: "EMIT-MAGIC: always name the implementation strategy explicitly.",
    },
  ],
});

const magicLibrary: SlotLibrary = {
  version: "v1",
  input: [{ id: "emit-magic", text: "EMIT-MAGIC: always name the implementation strategy." }],
  output: [{ id: "steps", text: "Give concrete steps." }],
};

describe.skipIf(!hasPytest)(
  "hidden data never reaches a prompt (needs python3 with pytest)",
  () => {
    it("keeps a planted secret out of every request across pool, run and optimise", async () => {
      const ids = ["roman-to-int", "digit-sum", "chunk-list", "is-prime"];
      const { server, model, family, tasks, directory } = await setUp(ids, [addMagic], true);
      // The secret really is in the hidden tests the evaluator runs.
      for (const task of tasks) expect(task.hidden.tests).toContain(secret);

      const train = family.split(tasks, "train", defaultSplitSeed);
      const test = family.split(tasks, "test", defaultSplitSeed);
      const poolPath = join(directory, "pool.jsonl");
      await buildPool({ family, model, tasks: train, split: "train", path: poolPath });
      const pool = await readPool(poolPath);
      expect(pool).toHaveLength(train.length);
      const store = new LibraryStore(join(directory, "store"));
      const library = await store.load("v1");
      const results: MethodResult[] = [];
      for (const method of methods)
        results.push(await runMethod({ family, model, tasks: test, pool, method, library }));
      const report = await optimiseLibrary({
        family,
        model,
        trainTasks: train,
        pool,
        store,
        epochs: 1,
        sampleShare: 1,
        seed: 3,
      });

      // Every role was exercised, so the check below covers their prompts.
      const systems = server.requests.map((request) => request.system);
      expect(systems.some((system) => system.includes(skillSystem))).toBe(true);
      expect(systems.some((system) => system.includes("You are the critic"))).toBe(true);
      expect(systems.some((system) => system.includes("You are the editor"))).toBe(true);
      expect(results.map((result) => result.method)).toEqual([...methods]);
      expect(report.epochs).toHaveLength(1);
      // The hidden tests failed (the planted test always fails), so failure messages existed.
      expect(pool.every((entry) => entry.outcome.passed < entry.outcome.total)).toBe(true);

      for (const request of server.requests)
        expect(JSON.stringify(request.body)).not.toContain(secret);
      expect(await readFile(poolPath, "utf8")).not.toContain(secret);
      // Pools, runs and optimises four tasks in sandboxes: 79 s at load 30.
    }, 300_000);
  },
);

describe.skipIf(!hasPytest)("synthesis fallback (needs python3 with pytest)", () => {
  it("records an invalid skill, counts the fallback and runs the solver without it", async () => {
    const { tasks, references } = await shipped();
    const task = tasks.find((each) => each.id === "digit-sum");
    const {
      server,
      model,
      family,
      tasks: familyTasks,
      directory,
    } = await startBuiltinFamily(
      cleanups,
      {
        rules: [
          // No frontmatter and no sections: the validator must refuse it.
          { match: { system: skillSystem }, reply: { text: "Just be careful." } },
        ],
        fallback: { text: `\`\`\`python\n${references["digit-sum"]}\`\`\`` },
      },
      await familyFolder(["digit-sum"], false),
      await temporaryDirectory(),
    );
    expect(task).toBeDefined();
    const result = await runMethod({
      family,
      model,
      tasks: familyTasks,
      pool: [],
      method: "synth",
      library: await new LibraryStore(join(directory, "store")).load("v1"),
    });
    expect(result.fallbacks).toBe(1);
    const [record] = result.records;
    expect(record?.fallback).toBe(true);
    expect(record?.skill?.valid).toBe(false);
    expect(record?.skill?.markdown).toBe("Just be careful.\n");
    expect(record?.skill?.problems.join("\n")).toContain(
      'missing or misplaced section "## When to use"',
    );
    expect(record?.score).toBe(1);
    const solverRequest = server.requests.find((request) =>
      request.system.includes("careful Python programmer"),
    );
    expect(solverRequest?.lastUserMessage).toContain("signature:\ndef digit_sum(");
    expect(solverRequest?.lastUserMessage).not.toContain("Skill for this task");
    expect(solverRequest?.lastUserMessage).not.toContain("Just be careful.");
  });
});

describe.skipIf(!hasPytest)("meta-prompt optimisation (needs python3 with pytest)", () => {
  it("keeps a patch that raises the score, stores it with its diff, and the new version runs", async () => {
    const ids = ["roman-to-int", "digit-sum"];
    const { model, family, tasks, directory } = await setUp(ids, [addMagic]);
    const pool = await (async () => {
      const path = join(directory, "pool.jsonl");
      await buildPool({ family, model, tasks, split: "train", path });
      return readPool(path);
    })();
    const store = new LibraryStore(join(directory, "store"));
    const report = await optimiseLibrary({
      family,
      model,
      trainTasks: tasks,
      pool,
      store,
      epochs: 1,
      sampleShare: 1,
    });
    const [epoch] = report.epochs;
    expect(epoch?.reference).toBe("zero-shot");
    // Zero-shot stubs and plain skills both score 0 on both tasks: two persistent failures.
    expect(epoch?.transitions).toEqual({
      regression: 0,
      improvement: 0,
      "persistent-success": 0,
      "persistent-failure": 2,
    });
    // 3:2:1:1 asks for one persistent failure; the empty kinds' six go to the one kind that
    // has cases, so both are drawn.
    expect(epoch?.cases).toHaveLength(2);
    expect(epoch?.quotas).toEqual({
      regression: 0,
      improvement: 0,
      "persistent-success": 0,
      "persistent-failure": 2,
    });
    expect(epoch?.patch?.status).toBe("accepted");
    expect(epoch?.patch?.scores).toEqual({ base: 0, candidate: 1, tasks: expect.any(Array) });
    expect(epoch?.patch?.diff).toContain(
      "+ [input/emit-magic] EMIT-MAGIC: always name the implementation strategy explicitly.",
    );
    expect(report.finalVersion).toBe("v2");
    expect(await store.current()).toBe("v2");
    expect(existsSync(join(store.directory, "libraries", "v2.json"))).toBe(true);
    expect(await readFile(join(store.directory, "patches", "0001.diff"), "utf8")).toContain(
      "rationale: the skill must tell the solver",
    );
    // Any stored version is usable for a run: v2 solves both tasks, v1 neither.
    const v2 = await runMethod({
      family,
      model,
      tasks,
      pool,
      method: "synth",
      library: await store.load("v2"),
    });
    const v1 = await runMethod({
      family,
      model,
      tasks,
      pool,
      method: "synth",
      library: await store.load("v1"),
    });
    expect([v1.meanScore, v2.meanScore]).toEqual([0, 1]);
    // Per-role cost: the critic and the editor were each called once.
    expect(report.usage.critic?.calls).toBe(1);
    expect(report.usage.editor?.calls).toBe(1);
  });

  it("rejects a patch that lowers the score and keeps the library", async () => {
    const ids = ["roman-to-int", "digit-sum"];
    const deleteMagic = JSON.stringify({
      rationale: "simplify",
      operations: [{ op: "delete", category: "input", id: "emit-magic" }],
    });
    const { model, family, tasks, directory } = await setUp(ids, [deleteMagic]);
    const store = new LibraryStore(join(directory, "store"));
    await store.save(magicLibrary);
    const path = join(directory, "pool.jsonl");
    await buildPool({ family, model, tasks, split: "train", path });
    const report = await optimiseLibrary({
      family,
      model,
      trainTasks: tasks,
      pool: await readPool(path),
      store,
      epochs: 1,
      sampleShare: 1,
    });
    const [epoch] = report.epochs;
    // Zero-shot 0 -> magic library 1 on both tasks: two improvements.
    expect(epoch?.transitions.improvement).toBe(2);
    expect(epoch?.currentScore).toBe(1);
    expect(epoch?.patch?.status).toBe("rejected-no-gain");
    expect(epoch?.patch?.scores).toMatchObject({ base: 1, candidate: 0 });
    expect(report.finalVersion).toBe("v1");
    expect(await store.current()).toBe("v1");
    expect(existsSync(join(store.directory, "libraries", "v2.json"))).toBe(false);
    expect((await store.patches()).map((patch) => patch.status)).toEqual(["rejected-no-gain"]);
  });

  it("rejects an oversized patch and one breaking the slot limits, with the reason recorded", async () => {
    const ids = ["digit-sum"];
    const fiveSlots = JSON.stringify({
      rationale: "rewrite everything",
      operations: ["a", "b", "c", "d", "e"].map((id) => ({
        op: "add",
        category: "output",
        id: `new-${id}`,
        text: "more",
      })),
    });
    const tooLong = JSON.stringify({
      rationale: "say more",
      operations: [
        { op: "replace", category: "input", id: "read-target", text: "x".repeat(1_201) },
      ],
    });
    const neutral = JSON.stringify({
      rationale: "reword",
      operations: [
        { op: "replace", category: "input", id: "read-target", text: "Read carefully." },
      ],
    });
    // After these three the editor's rule is used up and it answers with no JSON at all.
    const { server, model, family, tasks, directory } = await setUp(ids, [
      fiveSlots,
      tooLong,
      neutral,
    ]);
    const path = join(directory, "pool.jsonl");
    await buildPool({ family, model, tasks, split: "train", path });
    const store = new LibraryStore(join(directory, "store"));
    const report = await optimiseLibrary({
      family,
      model,
      trainTasks: tasks,
      pool: await readPool(path),
      store,
      epochs: 4,
      sampleShare: 1,
    });
    const patches = await store.patches();
    expect(patches.map((patch) => patch.status)).toEqual([
      "rejected-invalid",
      "rejected-invalid",
      "rejected-no-gain",
      "rejected-invalid",
    ]);
    expect(patches[0]?.reason).toBe(
      "the patch touches 5 slots (output/new-a, output/new-b, output/new-c, output/new-d, output/new-e); at most 4 are allowed",
    );
    expect(patches[1]?.reason).toMatch(/input slot "read-target": 1201 characters, at most 1200/);
    // Equal scores (0 and 0) are not "strictly better".
    expect(patches[2]?.scores).toMatchObject({ base: 0, candidate: 0 });
    expect(patches[2]?.diff).toContain("+ [input/read-target] Read carefully.");
    expect(patches[3]?.reason).toMatch(/^the editor gave no valid patch: /);
    expect(report.finalVersion).toBe("v1");
    // An invalid patch is never evaluated: each epoch runs the previous (zero-shot) and the
    // current library on the single task, and only epoch 3 adds a candidate run: 2+2+3+2 solver
    // calls besides the pool's one.
    const solverCalls = server.requests.filter((request) =>
      request.system.includes("careful Python programmer"),
    );
    expect(solverCalls).toHaveLength(1 + 9);
  });
});

describe.skipIf(!hasPytest)("skillsmith synth (CLI) (needs python3 with pytest)", () => {
  it("builds a pool, then prints the method comparison and cost table for the built-in family", async () => {
    const { tasks } = await shipped();
    const ids = tasks.map((task) => task.id);
    const server = await startScriptedServer({ script: await scriptFor(ids, [addMagic]) });
    cleanups.push(() => server.close());
    const cwd = await temporaryDirectory();
    const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url };
    const common = ["--model", "anthropic:claude-haiku-4-5", "--limit", "2", "--unsafe-no-sandbox"];

    const pool = await runSynthCli(
      ["synth", "pool", "--split", "train", "--json", ...common],
      env,
      cwd,
    );
    expect(pool.code).toBe(0);
    const summary = JSON.parse(pool.stdout) as { added: number; skipped: number; pool: string };
    expect(summary).toMatchObject({ added: 2, skipped: 0 });
    expect(pool.stderr).toMatch(/\[pool\] 2\/2/);
    // Resumable: a second build adds nothing.
    const again = await runSynthCli(
      ["synth", "pool", "--split", "train", "--json", ...common],
      env,
      cwd,
    );
    expect(JSON.parse(again.stdout)).toMatchObject({ added: 0, skipped: 2 });
    // With a call cache, a fresh pool file is rebuilt without asking the model again.
    const cacheFlags = ["--cache", join(cwd, "calls.sqlite"), "--json", ...common];
    await runSynthCli(["synth", "pool", "--out", join(cwd, "a.jsonl"), ...cacheFlags], env, cwd);
    const requestsBefore = server.requests.length;
    const cached = await runSynthCli(
      ["synth", "pool", "--out", join(cwd, "b.jsonl"), ...cacheFlags],
      env,
      cwd,
    );
    expect(JSON.parse(cached.stdout)).toMatchObject({ added: 2 });
    expect(server.requests.length).toBe(requestsBefore);

    const logPath = join(cwd, "run.jsonl");
    const run = await runSynthCli(
      ["synth", "run", "--split", "test", "--log", logPath, ...common],
      env,
      cwd,
    );
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n");
    // SkillOpt needs an optimised library first; the default run says so and skips it.
    for (const method of methods.filter((each) => each !== "skillopt"))
      expect(lines.some((line) => line.startsWith(method.padEnd(12)))).toBe(true);
    expect(lines.some((line) => line.startsWith("skillopt"))).toBe(false);
    expect(run.stderr).toContain("skillopt skipped: no SkillOpt optimisation");
    expect(run.stdout).toContain("rel. cost");
    // Scripted usage: solver 100 in / 10 out, synthesiser 200 / 50 per call, 2 tasks.
    // zero-shot 2·(100 + 2·10) = 240; rag 240 → 1.00; synth 240 + 2·(200 + 2·50) = 840 → 3.50;
    // static-skill: one synthesis for the family, 240 + 300 = 540 → 2.25.
    const costLine = (label: string) => lines.find((line) => line.startsWith(label)) ?? "";
    const relative = (label: string) => costRow(run.stdout, label).relative;
    expect(relative("zero-shot")).toBe("1.00x");
    expect(relative("rag")).toBe("1.00x");
    expect(relative("synth")).toBe("3.50x");
    expect(relative("static-skill")).toBe("2.25x");
    expect(costLine("synth")).toBeTruthy();
    expect(run.stderr).toMatch(/\[synth\] 2\/2/);
    // The run log keeps every synthesised skill, and the retrieval choice.
    const records = (await readFile(logPath, "utf8"))
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as {
            method: string;
            skill?: { markdown: string };
            retrieval?: { method: string };
          },
      );
    const synthRecords = records.filter((record) => record.method === "synth");
    expect(synthRecords).toHaveLength(2);
    for (const record of synthRecords) {
      expect(record.skill?.markdown).toContain("## Approach");
      expect(record.retrieval?.method).toBe("bm25");
    }

    const optimise = await runSynthCli(
      ["synth", "optimise", "--epochs", "1", "--sample", "1", "--seed", "5", ...common],
      env,
      cwd,
    );
    expect(optimise.code).toBe(0);
    expect(optimise.stdout).toContain("library v1 -> v2");
    expect(optimise.stdout).toMatch(
      /patch 1 accepted: mean score 1\.000 > 0\.000 on the same 2 tasks/,
    );
    expect(optimise.stdout).toContain("optimisation total");
    expect(existsSync(join(cwd, ".skillsmith/synth/builtin/libraries/v2.json"))).toBe(true);

    // The optimised version is usable by name; the solver's answers depend on it.
    const [withV1, withV2] = await Promise.all(
      ["v1", "v2"].map(async (version) => {
        const result = await runSynthCli(
          ["synth", "run", "--method", "synth", "--library", version, "--json", ...common],
          env,
          cwd,
        );
        return JSON.parse(result.stdout) as {
          results: { method: string; meanScore: number; libraryVersion?: string }[];
        };
      }),
    );
    expect(withV1?.results.find((result) => result.method === "synth")).toMatchObject({
      meanScore: 0,
      libraryVersion: "v1",
    });
    expect(withV2?.results.find((result) => result.method === "synth")).toMatchObject({
      meanScore: 1,
      libraryVersion: "v2",
    });
    // Without --log the skills still land in a run log under the store.
    expect(readdirSync(join(cwd, ".skillsmith/synth/builtin/runs")).length).toBeGreaterThan(0);
    // Pools and compares every built-in task in sandboxes: 87 s at load 30.
  }, 300_000);

  it("rejects an unknown library version and a missing pool as usage errors", async () => {
    const cwd = await temporaryDirectory();
    const env = { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" };
    const common = ["--model", "anthropic:claude-haiku-4-5", "--unsafe-no-sandbox"];
    await expect(
      runSynthCli(["synth", "run", "--method", "synth", ...common], env, cwd),
    ).rejects.toThrow(/holds no builtin attempts: run "skillsmith synth pool/);
    // Anthropic has no embeddings API: refused before any model call.
    await expect(
      runSynthCli(
        ["synth", "run", "--embedding-model", "anthropic:claude-haiku-4-5", ...common],
        env,
        cwd,
      ),
    ).rejects.toThrow(UnsupportedError);
    await writeFile(join(cwd, "pool.jsonl"), "");
    await expect(
      runSynthCli(
        ["synth", "run", "--method", "zero-shot", "--library", "v7", ...common],
        env,
        cwd,
      ),
    ).rejects.toThrow(/library version v7 is not stored/);
  });
});
