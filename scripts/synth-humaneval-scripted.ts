/**
 * The README's HumanEval numbers, reproduced: the real `skillsmith synth` commands on all 164
 * tasks of `../shared/fixtures/humaneval`, hidden checks in bubblewrap, with the scripted model
 * server playing every model. The scripted solver returns the canonical solution for two task ids
 * in three (index mod 3 ≠ 0) and a wrong body for the rest, whatever the method; the synthesiser
 * writes a 2,000-character skill, the critic a seven-case critique, the editor a one-slot patch.
 * Input tokens are counted by the server as characters / 4 of each real request.
 *
 *   npx tsx scripts/synth-humaneval-scripted.ts [working folder]   (≈ 2 minutes on 2 cores)
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import { Command } from "commander";
import { registerSynth } from "../src/cli/commands/synth.js";
import type { ScriptRule } from "../src/model/scripted/script.js";
import { startScriptedServer } from "../src/model/scripted/server.js";

interface HumanEvalRecord {
  task_id: string;
  prompt: string;
  canonical_solution: string;
  entry_point: string;
}

const fixture = resolve(import.meta.dirname, "..", "..", "shared", "fixtures", "humaneval");
const records = gunzipSync(await readFile(join(fixture, "HumanEval.jsonl.gz")))
  .toString("utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as HumanEvalRecord);
const escapeRegex = (text: string) => text.replace(/[()[\]|.*+?^$\\{}]/g, "\\$&");
const fence = (code: string) => `\`\`\`python\n${code}\`\`\``;

const steps = Array.from(
  { length: 12 },
  (_, index) =>
    `${index + 1}. Step ${index + 1}: read the docstring and its examples carefully, name the input types, the return type and every edge case the text mentions, and decide how each is handled before writing code.`,
);
const skill = `---
name: complete-the-function
description: Guidance for completing one Python function from its docstring and examples.
---

## When to use
For this task only: completing the last function of the prompt.

## Approach
${steps.join("\n")}

## Pitfalls
- Empty input, negative numbers, ties and rounding.
- Returning the wrong type (a list where a tuple is asked, a float where an int is asked).

## Checks
- Run every example of the docstring against the function.
`;

const rules: ScriptRule[] = [
  { match: { system: "You write a temporary agent skill" }, reply: { text: skill } },
  {
    match: { system: "You are the critic" },
    reply: {
      text: JSON.stringify({
        attributions: records.slice(0, 7).map((record) => ({
          taskId: record.task_id,
          cause: "skill",
          slot: { category: "input", id: "read-target" },
          explanation: "the skill did not stress the docstring's examples enough for this task",
        })),
      }),
    },
  },
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
            text: "Read the prompt's docstring and every example in it first; list the input types, the return type and the edge cases.",
          },
        ],
      }),
    },
  },
];
records.forEach((record, index) => {
  const answer =
    index % 3 !== 0
      ? `${record.prompt}${record.canonical_solution}`
      : `${record.prompt}    return None\n`;
  // The target's own prompt text (entry point names repeat across tasks: `add`, `sum_squares`).
  const target = `# Task\\n\\nprompt:\\n[\\s\\S]*${escapeRegex(record.prompt.trim().slice(-120))}`;
  rules.push(
    {
      match: { system: "reason-act loop", toolResult: `probe ${escapeRegex(record.task_id)}\\b` },
      reply: { text: fence(answer) },
    },
    {
      match: { system: "reason-act loop", lastUserMessage: target },
      reply: {
        text: "Thought: run the prompt first.",
        toolCalls: [
          {
            name: "run_python",
            input: { code: `${record.prompt}    pass\nprint("probe ${record.task_id}")\n` },
          },
        ],
      },
    },
    {
      match: { system: "The task is a Python prompt", lastUserMessage: target },
      reply: { text: fence(answer) },
    },
  );
});

// Best-of-N passes a seed, which Anthropic's API does not take: the AI SDK warns on each call.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;
const server = await startScriptedServer({
  script: { rules, fallback: { text: "unexpected request" } },
});
const cwd = process.argv[2] ?? (await mkdtemp(join(tmpdir(), "skillsmith-humaneval-scripted-")));
const env = {
  ANTHROPIC_API_KEY: "scripted",
  ANTHROPIC_BASE_URL: server.url,
  PATH: process.env.PATH ?? "",
};

async function synth(argv: string[]): Promise<void> {
  let stdout = "";
  const program = new Command("skillsmith").exitOverride();
  registerSynth(program, {
    io: {
      stdout: (text) => {
        stdout += text;
      },
      stderr: () => {},
      cwd,
      env,
    },
    exit: () => {},
  });
  const started = performance.now();
  await program.parseAsync(["synth", ...argv], { from: "user" });
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  process.stdout.write(`$ skillsmith synth ${argv.join(" ")}   (${seconds} s)\n${stdout}\n`);
}

const family = ["--family", `humaneval:${fixture}`, "--model", "anthropic:claude-haiku-4-5"];
try {
  await synth(["pool", ...family, "--split", "train"]);
  await synth(["run", ...family, "--split", "test"]);
  await synth(["optimise", ...family]);
  await synth(["optimise", ...family, "--target", "skillopt"]);
  await synth(["run", ...family, "--split", "test", "--method", "skillopt"]);
} finally {
  await server.close();
}
process.stdout.write(`working folder: ${cwd}\n`);
