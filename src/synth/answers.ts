/**
 * What every solver does with text: pull the code out of an answer, render its context block,
 * and the one-shot solve both Python families share (they differ only in the system prompt).
 */
import type { ModelClient } from "../model/index.js";
import {
  renderVisible,
  type SolverAttempt,
  type SolverContext,
  type SolveSettings,
  type VisibleTask,
} from "./family.js";
import { fillPrompt, promptText } from "./prompts.js";
import { roleTemperatures } from "./settings.js";

/** Pull the code out of a model answer: the last ```python block, else any block, else all. */
export function extractCode(answer: string): string {
  const blocks = [...answer.matchAll(/```([a-zA-Z0-9_+-]*)[^\n]*\n([\s\S]*?)```/g)];
  const python = blocks.filter((block) => /^(python|py)?$/i.test(block[1] ?? ""));
  const chosen = python.at(-1) ?? blocks.at(-1);
  return `${(chosen?.[2] ?? answer).trim()}\n`;
}

/** The solver's context block: a skill, raw evidence, or nothing. */
export function renderSolverContext(context: SolverContext): string {
  const parts: string[] = [];
  if (context.skillMarkdown !== undefined)
    parts.push(
      `# Skill for this task\n\nFollow this skill, written for this task.\n\n<skill>\n${context.skillMarkdown.trimEnd()}\n</skill>\n\n`,
    );
  if (context.evidence !== undefined)
    parts.push(`# Related past attempts\n\n${context.evidence.trimEnd()}\n\n`);
  return parts.join("");
}

/** One solver call: the family's system prompt, the shared user prompt, the code of the answer. */
export async function solveOnce(
  model: ModelClient,
  systemPrompt: string,
  task: VisibleTask,
  context: SolverContext,
  signal: AbortSignal | undefined,
  settings: SolveSettings,
): Promise<SolverAttempt> {
  const result = await model.generateText({
    role: "solver",
    system: promptText(systemPrompt),
    prompt: fillPrompt(promptText("solver-v1.user.md"), {
      context: renderSolverContext(context),
      task: renderVisible(task),
    }),
    temperature: settings.temperature ?? roleTemperatures.solver,
    ...(settings.seed === undefined ? {} : { seed: settings.seed }),
    ...(signal === undefined ? {} : { abortSignal: signal }),
  });
  return {
    output: extractCode(result.text),
    inputTokens: result.usage.inputTokens,
    outputTokens: result.usage.outputTokens,
  };
}
