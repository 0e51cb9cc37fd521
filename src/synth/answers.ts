/** What every solver does with text: pull the code out of an answer, render its context block. */
import type { SolverContext } from "./family.js";

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
