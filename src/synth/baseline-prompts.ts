/**
 * Prompt texts of the baselines and of the suite family, version 1, from `prompts/synth/`.
 * The files end with the newline the formatter keeps; the prompts themselves end without one
 * (the preamble with a blank line), so recorded calls stay byte-identical.
 */
import { promptText } from "./prompts.js";

function prompt(name: string): string {
  return promptText(name).trimEnd();
}

/** Built-in family, ReAct: the solver reasons, runs its own code, observes, then answers. */
export const reactSystemV1 = prompt("react-v1.system.md");

export const reactToolDescriptionV1 = prompt("react-v1.tool.md");

/** Best-of-N, built-in family: the solver writes checks from the visible task only. */
export const selfCheckSystemV1 = prompt("self-check-v1.system.md");

/** Suite family: how the coding agent is told what to do. */
export const suiteTaskV1 = prompt("suite-task-v1.user.md");

/** Suite family, ReAct: the agent's own tool loop, asked to reason before each action. */
export const suiteReactPreambleV1 = `${prompt("suite-react-v1.preamble.md")}\n\n`;
