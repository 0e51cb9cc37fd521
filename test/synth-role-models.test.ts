/**
 * A model per synthesis role, end to end: `skillsmith synth pool / run / optimise` with a
 * different `--solver-model`, `--synth-model`, `--critic-model` and `--editor-model` (and a
 * fifth `--model` no role should use), against the scripted model server over real HTTP, hidden
 * tests run by real pytest. The script answers each role only under that role's model id, so a
 * request sent with the wrong model gets the fallback and scores 0; the recorded requests are
 * then checked one by one. The editor's requests must carry the run summary and the latest slot
 * diff: the first epoch's patch is accepted, so the second epoch's diff is a real one.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Script, ScriptRule } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import {
  criticBlamingTheSkill,
  hasPytest,
  runSynthCli,
  shipped,
  writeShippedFamily,
} from "./support/synth.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const cleanups = cleanupsAfterEach();
const temporaryDirectory = () => temporaryDirectoryIn(cleanups, "skillsmith-synth-roles-");

/** Each role's model id, and the list price of each ($ per million tokens in / out). */
const models = {
  solver: { id: "claude-haiku-4-5", price: { input: 1, output: 5 } },
  synthesiser: { id: "claude-sonnet-4-5", price: { input: 3, output: 15 } },
  critic: { id: "claude-opus-4-1", price: { input: 15, output: 75 } },
  editor: { id: "claude-opus-4-5", price: { input: 5, output: 25 } },
} as const;
type Role = keyof typeof models;
/** `--model`: what every role would use without its own flag; no request may carry it. */
const runModel = "claude-sonnet-4";

const skillSystem = "You write a temporary agent skill";
const magicWord = "USE-THE-REFERENCE";
const exact = (id: string) => `^${id.replace(/[.-]/g, "\\$&")}$`;

function skillReply(hint: string): string {
  return `---\nname: role-skill\ndescription: Guidance for writing the target function.\n---\n\n## When to use\nFor this task only.\n\n## Approach\n1. ${hint}\n\n## Pitfalls\n- Empty input.\n\n## Checks\n- A small example.\n`;
}

const addMagic = {
  rationale: "the skill must name the reference strategy",
  operations: [
    { op: "add", category: "input", id: "emit-magic", text: "EMIT-MAGIC: name the strategy." },
  ],
};
const rewordRead = {
  rationale: "read the signature first",
  operations: [
    { op: "replace", category: "input", id: "read-target", text: "Read the signature first." },
  ],
};

/**
 * The synthesiser writes the magic word only when its system prompt holds the `emit-magic` slot;
 * the solver answers correctly only when the magic word reaches it. Every rule names its role's
 * model, so the score also says whether each request went to the right model.
 */
async function scriptFor(ids: readonly string[]): Promise<Script> {
  const { tasks, references } = await shipped();
  const usage = { inputTokens: 1000, outputTokens: 100 };
  const rules: ScriptRule[] = [
    {
      match: { model: exact(models.synthesiser.id), system: `${skillSystem}[\\s\\S]*EMIT-MAGIC` },
      reply: { text: skillReply(`${magicWord}.`), usage },
    },
    {
      match: { model: exact(models.synthesiser.id), system: skillSystem },
      reply: { text: skillReply("Think about the task."), usage },
    },
    criticBlamingTheSkill(ids, "the skill gave no usable guidance", {
      match: { model: exact(models.critic.id) },
      usage,
    }),
    {
      match: { model: exact(models.editor.id), system: "You are the editor" },
      reply: { text: JSON.stringify(addMagic), usage },
      times: 1,
    },
    {
      match: { model: exact(models.editor.id), system: "You are the editor" },
      reply: { text: JSON.stringify(rewordRead), usage },
    },
  ];
  for (const id of ids) {
    const task = tasks.find((each) => each.id === id);
    if (task === undefined) throw new Error(`no shipped task ${id}`);
    const target = `signature:\\n${task.signature.replace(/[()[\]|.*+?^$\\{}]/g, "\\$&")}`;
    const solver = exact(models.solver.id);
    rules.push(
      {
        match: { model: solver, lastUserMessage: `${magicWord}[\\s\\S]*${target}` },
        reply: { text: `\`\`\`python\n${references[id]}\`\`\``, usage },
      },
      {
        match: { model: solver, lastUserMessage: target },
        reply: {
          text: `\`\`\`python\n${task.signature}:\n    raise NotImplementedError\n\`\`\``,
          usage,
        },
      },
    );
  }
  return { rules, fallback: { text: "unexpected request" } };
}

const roleOf = (request: ScriptedServer["requests"][number]): Role | "unknown" => {
  if (request.system.includes(skillSystem)) return "synthesiser";
  if (request.system.includes("You are the critic")) return "critic";
  if (request.system.includes("You are the editor")) return "editor";
  if (request.system.includes("careful Python programmer")) return "solver";
  return "unknown";
};

interface CostRowJson {
  label: string;
  usage: Partial<Record<Role, { inputTokens: number; outputTokens: number }>>;
  estimatedUsdByRole?: Partial<Record<Role, number>>;
}

/** Each role's dollars in a cost row equal its tokens at its own model's list price. */
function expectPricedPerRole(row: CostRowJson | undefined, roles: readonly Role[]): void {
  expect(row).toBeDefined();
  for (const role of roles) {
    const tokens = row?.usage[role];
    expect(tokens, `${row?.label}: ${role} tokens`).toBeDefined();
    const { input, output } = models[role].price;
    const dollars =
      ((tokens?.inputTokens ?? 0) * input + (tokens?.outputTokens ?? 0) * output) / 1e6;
    expect(row?.estimatedUsdByRole?.[role], `${row?.label}: ${role} dollars`).toBeCloseTo(
      dollars,
      9,
    );
  }
}

describe.skipIf(!hasPytest)("synth with a model per role (needs python3 with pytest)", () => {
  it("sends each role's requests with its own model and records them in the manifest and cost table", async () => {
    // One training task and one test task: every role is still asked, in seconds of pytest.
    const ids = ["digit-sum", "is-prime"];
    const familyDir = await writeShippedFamily(await temporaryDirectory(), ids);
    const server = await startScriptedServer({ script: await scriptFor(ids) });
    cleanups.push(() => server.close());
    const cwd = await temporaryDirectory();
    const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url };
    const common = [
      "--family-dir",
      familyDir,
      "--unsafe-no-sandbox",
      "--model",
      `anthropic:${runModel}`,
      "--solver-model",
      `anthropic:${models.solver.id}`,
      "--synth-model",
      `anthropic:${models.synthesiser.id}`,
      "--critic-model",
      `anthropic:${models.critic.id}`,
      "--editor-model",
      `anthropic:${models.editor.id}`,
    ];

    const pool = await runSynthCli(
      ["synth", "pool", "--split", "train", "--json", ...common],
      env,
      cwd,
    );
    expect(pool.code).toBe(0);
    const logPath = join(cwd, "run.jsonl");
    const run = await runSynthCli(
      [
        "synth",
        "run",
        "--split",
        "test",
        "--method",
        "synth",
        "--log",
        logPath,
        "--json",
        ...common,
      ],
      env,
      cwd,
    );
    expect(run.code).toBe(0);
    const optimise = await runSynthCli(
      ["synth", "optimise", "--epochs", "2", "--sample", "1", "--seed", "3", "--json", ...common],
      env,
      cwd,
    );
    expect(optimise.code).toBe(0);

    // 1. Every request went out under its role's model; all four roles were asked.
    const asked = new Map<string, Set<string>>();
    for (const request of server.requests) {
      const role = roleOf(request);
      expect(role, `a request nobody should send: ${request.system.slice(0, 80)}`).not.toBe(
        "unknown",
      );
      if (role === "unknown") continue;
      expect(request.model, `${role} request`).toBe(models[role].id);
      asked.set(role, (asked.get(role) ?? new Set()).add(request.model));
    }
    expect([...asked.keys()].sort()).toEqual(["critic", "editor", "solver", "synthesiser"]);
    expect(server.requests.some((request) => request.model === runModel)).toBe(false);

    // 2. The run's manifest and cost table name and price each role's model.
    const expectedSpecs = {
      solver: `anthropic:${models.solver.id}`,
      synthesiser: `anthropic:${models.synthesiser.id}`,
      critic: `anthropic:${models.critic.id}`,
      editor: `anthropic:${models.editor.id}`,
    };
    const manifest = JSON.parse(await readFile(join(cwd, "run.manifest.json"), "utf8")) as {
      roleModels: Record<Role, { spec: string; from: string }>;
      report: { models: Record<Role, string>; cost: CostRowJson[] };
    };
    for (const role of Object.keys(models) as Role[])
      expect(manifest.roleModels[role]).toEqual({ spec: expectedSpecs[role], from: "flag" });
    expect(manifest.report.models).toEqual(expectedSpecs);
    const runReport = JSON.parse(run.stdout) as {
      models: Record<Role, string>;
      cost: CostRowJson[];
      results: { method: string; meanScore: number }[];
    };
    expect(runReport.models).toEqual(expectedSpecs);
    expectPricedPerRole(
      runReport.cost.find((row) => row.label === "synth"),
      ["solver", "synthesiser"],
    );

    // 3. The optimisation: the report's models and cost rows, critic and editor at their prices.
    const report = JSON.parse(optimise.stdout) as {
      models: Record<Role, string>;
      cost: CostRowJson[];
      epochs: { patch?: { status: string } }[];
      reportPath: string;
    };
    expect(report.models).toEqual(expectedSpecs);
    expectPricedPerRole(
      report.cost.find((row) => row.label === "optimisation total"),
      ["solver", "synthesiser", "critic", "editor"],
    );
    expect(JSON.parse(await readFile(report.reportPath, "utf8"))).toMatchObject({
      models: expectedSpecs,
    });
    // The magic slot lifts the score (so every solver and synthesiser answer came from the right
    // model); the second patch keeps it and gains nothing.
    expect(report.epochs.map((epoch) => epoch.patch?.status)).toEqual([
      "accepted",
      "rejected-no-gain",
    ]);

    // 4. The editor read the run summary and the latest slot diff, beside the attributions.
    const editorPrompts = server.requests
      .filter((request) => roleOf(request) === "editor")
      .map((request) => request.lastUserMessage);
    expect(editorPrompts).toHaveLength(2);
    const [first, second] = editorPrompts as [string, string];
    expect(first).toContain("# Run summary\n\nEpoch 1: 1 training tasks.");
    expect(first).toContain("Previous run (zero-shot): mean score 0.000.");
    expect(first).toContain("(the previous run was the zero-shot solver, without synthesis)");
    expect(second).toContain("# Run summary\n\nEpoch 2: 1 training tasks.");
    expect(second).toContain("Previous run (v1): mean score 0.000.");
    expect(second).toContain("(library v2): mean score 1.000.");
    // The diff v1 → v2: the slot the first patch added.
    const diff = second.slice(
      second.indexOf("# Latest slot diff"),
      second.indexOf("# Critic attributions"),
    );
    expect(diff).toContain("emit-magic");
    expect(diff).toContain("EMIT-MAGIC: name the strategy.");
    expect(second).toContain('"explanation": "the skill gave no usable guidance"');
  }, 300_000);
});
