/**
 * The ReAct baseline for Python families: think, act (run a script of the solver's own through
 * `run_python`, in the sandbox, in an empty folder), observe, repeat; the final step is offered
 * no tool, so the loop ends with an answer. Hidden tests are never on the machine the tool runs on.
 */
import { jsonSchema, type ModelMessage, type ToolSet } from "ai";
import { definedFields } from "../core/defined.js";
import type { SandboxV1 } from "../env/index.js";
import type { ModelClient } from "../model/index.js";
import { extractCode, renderSolverContext, solveOnce } from "./answers.js";
import { reactToolDescriptionV1 } from "./baseline-prompts.js";
import {
  renderVisible,
  type SolverAttempt,
  type SolverContext,
  type SolveSettings,
  type VisibleTask,
} from "./family.js";
import { fillPrompt, promptText } from "./prompts.js";
import { runPythonFiles } from "./python-exec.js";
import { roleTemperatures } from "./settings.js";

/**
 * The `run_python` tool offered to the ReAct solver: declared only, run by us in the sandbox. A
 * plain object typed as the tool set rather than `tool({...})`: the helper's inferred type does
 * not fit `ToolSet` under `exactOptionalPropertyTypes`, and nothing here needs its inference.
 */
const reactTools: ToolSet = {
  run_python: {
    description: reactToolDescriptionV1,
    inputSchema: jsonSchema<{ code: string }>({
      type: "object",
      properties: { code: { type: "string", description: "the complete Python 3 script" } },
      required: ["code"],
      additionalProperties: false,
    }),
  },
};

export interface PythonReactOptions {
  readonly model: ModelClient;
  readonly sandbox: SandboxV1;
  readonly system: string;
  /** The first user message: the solver context and the visible task. */
  readonly prompt: string;
  /** Model calls the loop may make (the last one is offered no tool); default 6. */
  readonly steps?: number;
  /** The interpreter `run_python` uses (default: `python3` on the sandbox's PATH). */
  readonly python?: string;
  /** Host folders the solver's scripts must not read (the dataset with the hidden tests). */
  readonly hiddenPaths?: readonly string[];
  readonly signal?: AbortSignal;
}

export async function solvePythonReact(options: PythonReactOptions): Promise<SolverAttempt> {
  const { model, signal } = options;
  const limit = Math.max(1, options.steps ?? 6);
  const messages: ModelMessage[] = [{ role: "user", content: options.prompt }];
  const steps: string[] = [];
  let inputTokens = 0;
  let outputTokens = 0;
  let calls = 0;
  let answer = "";
  for (let step = 1; step <= limit; step += 1) {
    const last = step === limit;
    const result = await model.generateText({
      role: "solver",
      system: options.system,
      messages,
      ...(last ? {} : { tools: reactTools }),
      temperature: roleTemperatures.solver,
      ...(signal === undefined ? {} : { abortSignal: signal }),
    });
    calls += 1;
    inputTokens += result.usage.inputTokens;
    outputTokens += result.usage.outputTokens;
    answer = result.text;
    const runs = result.toolCalls.filter((call) => call.toolName === "run_python");
    if (runs.length === 0) break;
    if (result.text.trim() !== "") steps.push(`thought: ${result.text.trim()}`);
    messages.push({
      role: "assistant",
      content: [
        ...(result.text === "" ? [] : [{ type: "text" as const, text: result.text }]),
        ...result.toolCalls.map((call) => ({
          type: "tool-call" as const,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.input,
        })),
      ],
    });
    const observations = [];
    for (const call of result.toolCalls) {
      const code = (call.input as { code?: unknown } | null)?.code;
      let observation: string;
      if (call.toolName !== "run_python" || typeof code !== "string")
        observation = `error: unknown tool ${call.toolName} or missing "code"`;
      else {
        const run = await runPythonFiles(options.sandbox, { "script.py": code }, "script.py", {
          timeoutMs: 20_000,
          ...definedFields({ python: options.python, hiddenPaths: options.hiddenPaths, signal }),
        });
        observation = `exit code: ${run.timedOut ? "timed out" : String(run.exitCode)}
stdout:
${run.stdout}
stderr:
${run.stderr}`;
        steps.push(`act: run_python (${code.length} characters)`, `observe: ${observation}`);
      }
      observations.push({
        type: "tool-result" as const,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: { type: "text" as const, value: observation },
      });
    }
    messages.push({ role: "tool", content: observations });
  }
  return { output: extractCode(answer), inputTokens, outputTokens, calls, steps };
}

/** What a Python family fixes about its ReAct solver; the task and context come per call. */
export interface FamilyReactSettings {
  readonly sandbox: SandboxV1;
  readonly system: string;
  readonly reactSteps?: number | undefined;
  readonly python?: string | undefined;
  readonly hiddenPaths?: readonly string[] | undefined;
}

/**
 * A Python family's ReAct baseline on one visible task: the first user message is the solver
 * prompt (`solver-v1.user.md`) over the solver context and the visible task, as for `solve`.
 */
export function solveVisibleTaskReact(
  model: ModelClient,
  settings: FamilyReactSettings,
  task: VisibleTask,
  context: SolverContext,
  signal?: AbortSignal,
): Promise<SolverAttempt> {
  return solvePythonReact({
    model,
    sandbox: settings.sandbox,
    system: settings.system,
    prompt: fillPrompt(promptText("solver-v1.user.md"), {
      context: renderSolverContext(context),
      task: renderVisible(task),
    }),
    ...definedFields({
      steps: settings.reactSteps,
      python: settings.python,
      hiddenPaths: settings.hiddenPaths,
      signal,
    }),
  });
}

/**
 * The solvers every Python family shares: one answer from its solver prompt (`solve`), and the
 * ReAct loop over its sandbox (`solveReact`). A family names its prompt and its ReAct settings.
 */
export abstract class PythonSolvers {
  /** The solver's system prompt file under `prompts/synth/`. */
  protected abstract readonly solverPrompt: string;
  protected abstract reactSettings(): FamilyReactSettings;

  async solve(
    model: ModelClient,
    task: VisibleTask,
    context: SolverContext,
    signal?: AbortSignal,
    settings: SolveSettings = {},
  ): Promise<SolverAttempt> {
    return solveOnce(model, this.solverPrompt, task, context, signal, settings);
  }

  /** ReAct: the solver runs scripts of its own in the sandbox before answering. */
  async solveReact(
    model: ModelClient,
    task: VisibleTask,
    context: SolverContext,
    signal?: AbortSignal,
  ): Promise<SolverAttempt> {
    return solveVisibleTaskReact(model, this.reactSettings(), task, context, signal);
  }
}
