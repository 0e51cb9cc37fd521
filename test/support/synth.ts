/**
 * Shared set-up of the synthesis tests: pytest detection, the shipped built-in tasks, and
 * `skillsmith synth` run in-process with its cost table read back.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { Command } from "commander";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { registerSynth } from "../../src/cli/commands/synth.js";
import type { CommandContext } from "../../src/cli/context.js";
import { UnsafeSandbox } from "../../src/env/index.js";
import { ModelClient } from "../../src/model/client.js";
import type { Script, ScriptMatch, ScriptRule } from "../../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../../src/model/scripted/server.js";
import {
  BuiltinTaskFamily,
  defaultBuiltinDirectory,
  type FamilyTask,
} from "../../src/synth/index.js";
import type { Cleanup } from "./temporary.js";

/** HumanEval as shipped in `../shared` (read-only, never copied into the project). */
export const humanEvalFixture = join(
  import.meta.dirname,
  "..",
  "..",
  "..",
  "shared",
  "fixtures",
  "humaneval",
  "HumanEval.jsonl.gz",
);
export const hasHumanEval = existsSync(humanEvalFixture);

/** The HumanEval family's interpreter: Debian's, whatever the PATH finds first. */
export const hasDebianPython = existsSync("/usr/bin/python3");

/** The fixture's records as the file holds them (test code may read the evaluator-only fields). */
export interface HumanEvalRecord {
  task_id: string;
  prompt: string;
  canonical_solution: string;
  test: string;
  entry_point: string;
}

export async function humanEvalRecords(): Promise<HumanEvalRecord[]> {
  return gunzipSync(await readFile(humanEvalFixture))
    .toString("utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as HumanEvalRecord);
}

/** Scoring runs the hidden tests with real pytest; without it those tests cannot run. */
export { hasPytest } from "./tool-probes.js";

export interface ShippedTask {
  id: string;
  signature: string;
  entryPoint: string;
  tests: string;
  [field: string]: unknown;
}

/** The built-in family's tasks and reference solutions as shipped, read straight from YAML. */
export async function shipped(): Promise<{
  tasks: ShippedTask[];
  references: Record<string, string>;
}> {
  const directory = defaultBuiltinDirectory();
  const file = parseYaml(await readFile(join(directory, "tasks.yaml"), "utf8")) as {
    tasks: ShippedTask[];
  };
  const references = parseYaml(
    await readFile(join(directory, "references.yaml"), "utf8"),
  ) as Record<string, string>;
  return { tasks: file.tasks, references };
}

/**
 * A built-in family folder at `directory` holding the shipped tasks `ids`, each task's hidden
 * tests replaced by `tests(task)` when given (to plant a secret).
 */
export async function writeShippedFamily(
  directory: string,
  ids: readonly string[],
  tests?: (task: ShippedTask) => string,
): Promise<string> {
  const { tasks } = await shipped();
  const chosen = ids.map((id) => {
    const task = tasks.find((each) => each.id === id);
    if (task === undefined) throw new Error(`no shipped task ${id}`);
    return tests === undefined ? task : { ...task, tests: tests(task) };
  });
  await writeFile(
    join(directory, "tasks.yaml"),
    stringifyYaml({ family: "builtin", version: 1, tasks: chosen }),
  );
  return directory;
}

/**
 * The scripted model server on `script` (closed by `cleanups`), a model client on it that never
 * retries, working in `directory`, and the built-in family of `familyDirectory` with its tasks.
 */
export async function startBuiltinFamily(
  cleanups: Cleanup[],
  script: Script,
  familyDirectory: string,
  directory: string,
): Promise<{
  server: ScriptedServer;
  model: ModelClient;
  family: BuiltinTaskFamily;
  tasks: readonly FamilyTask[];
  directory: string;
}> {
  const server = await startScriptedServer({ script });
  cleanups.push(() => server.close());
  const model = new ModelClient({
    spec: "anthropic:claude-haiku-4-5",
    env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url },
    cwd: directory,
    retry: { maxRetries: 0 },
  });
  const family = new BuiltinTaskFamily({
    sandbox: new UnsafeSandbox(),
    directory: familyDirectory,
  });
  return { server, model, family, tasks: await family.loadTasks(), directory };
}

/** `skillsmith synth …` through the real command in-process; `code` is the highest exit asked. */
export async function runSynthCli(
  argv: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  let code = 0;
  const context: CommandContext = {
    io: {
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stderr += text;
      },
      cwd,
      env,
    },
    exit: (value) => {
      code = Math.max(code, value);
    },
  };
  const program = new Command("skillsmith").exitOverride();
  registerSynth(program, context);
  await program.parseAsync(argv, { from: "user" });
  return { code, stdout, stderr };
}

/**
 * The row of `synth run`'s cost table (the lines from the "rel. cost" header on) starting with
 * `label`, and its relative cost ("1.41x": the one cell of that form; an "est. USD" column may
 * follow it).
 */
export function costRow(
  stdout: string,
  label: string,
): { line: string | undefined; relative: string | undefined } {
  const lines = stdout.split("\n");
  const line = lines
    .slice(lines.findIndex((each) => each.includes("rel. cost")))
    .find((each) => each.startsWith(label));
  return {
    line,
    relative: line
      ?.trim()
      .split(/\s+/)
      .find((cell) => /^(\d+\.\d{2}x|n\/a)$/.test(cell)),
  };
}

/**
 * The scripted critic: it blames the skill's `read-target` input slot for every task in `ids`
 * (with `explanation`), so the editor is asked to change that slot. `match` narrows the rule
 * (e.g. to the critic's model); the critic's system prompt is always matched.
 */
export function criticBlamingTheSkill(
  ids: readonly string[],
  explanation: string,
  options: {
    match?: Omit<ScriptMatch, "system">;
    usage?: { inputTokens: number; outputTokens: number };
  } = {},
): ScriptRule {
  return {
    match: { ...options.match, system: "You are the critic" },
    reply: {
      text: JSON.stringify({
        attributions: ids.map((taskId) => ({
          taskId,
          cause: "skill",
          slot: { category: "input", id: "read-target" },
          explanation,
        })),
      }),
      ...(options.usage === undefined ? {} : { usage: options.usage }),
    },
  };
}
