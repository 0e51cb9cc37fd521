/**
 * The built-in task family: small Python function-writing tasks shipped in
 * `examples/synth/builtin/tasks.yaml`. Visible: instruction, signature, entry point, libraries.
 * Evaluator-only: the hidden pytest file, run through the verifier runner in a sandbox.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { InputError } from "../core/errors.js";
import { parseInput } from "../core/parse.js";
import { packageRoot } from "../core/paths.js";
import { readYamlValue } from "../core/yaml.js";
import { runVerifier, type SandboxV1 } from "../env/index.js";
import type { ModelClient } from "../model/index.js";
import { extractCode, renderSolverContext } from "./answers.js";
import { reactSystemV1, selfCheckSystemV1 } from "./baseline-prompts.js";
import {
  type AttemptScore,
  attemptScoreOf,
  type FamilyTask,
  renderVisible,
  ScoreMemo,
  type SelfCheckResult,
  type Split,
  scoreDistinctOutputs,
  seededSplit,
  type TaskFamilyV1,
  type VisibleTask,
} from "./family.js";
import { passShareOfChecks } from "./python-exec.js";
import { type FamilyReactSettings, PythonSolvers } from "./react.js";
import { defaultTrainShare, roleTemperatures } from "./settings.js";

export { extractCode, renderSolverContext };

export const defaultBuiltinDirectory = (): string =>
  join(packageRoot(), "examples", "synth", "builtin");

/** Train share of the split; 1:1 pool-to-test by default. */
export const trainShare = defaultTrainShare;
export const defaultSplitSeed = 20_260_101;

const taskSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/),
  instruction: z.string().min(1),
  signature: z.string().min(1),
  entryPoint: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
  libraries: z.array(z.string()),
  tests: z.string().min(1),
});
const fileSchema = z.strictObject({
  family: z.string(),
  version: z.number().int(),
  tasks: z.array(taskSchema).min(1),
});

export interface BuiltinFamilyOptions {
  /** Folder holding `tasks.yaml`; the shipped family by default. */
  readonly directory?: string;
  readonly sandbox: SandboxV1;
  /** Per-attempt verifier limit; default 60 s. */
  readonly timeoutMs?: number;
  /** Model calls a ReAct solver may make (the last one is offered no tool); default 6. */
  readonly reactSteps?: number;
}

/**
 * Verdicts per (sandbox kind, hidden tests, answer), shared by every family instance of the
 * process: runs and optimisation epochs repeat the same answers often, and each pytest start
 * costs a second or more. Bounded so a long session cannot grow it without limit.
 */
const scoreMemo = new ScoreMemo();

export class BuiltinTaskFamily extends PythonSolvers implements TaskFamilyV1 {
  readonly specificationVersion = "v1" as const;
  readonly name = "builtin";
  readonly description =
    "Small Python function-writing tasks: an instruction and a signature; hidden pytest tests score the function.";
  readonly visibleFields = ["instruction", "signature", "entryPoint", "libraries"] as const;
  readonly hiddenFields = ["tests"] as const;
  private readonly directory: string;

  constructor(private readonly options: BuiltinFamilyOptions) {
    super();
    this.directory = options.directory ?? defaultBuiltinDirectory();
  }

  async loadTasks(): Promise<readonly FamilyTask[]> {
    const file = join(this.directory, "tasks.yaml");
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (cause) {
      throw new InputError(
        "synth.family-unreadable",
        "cannot read the task file",
        { file },
        { cause },
      );
    }
    const read = readYamlValue(text);
    if (!read.ok)
      throw new InputError("synth.family-syntax", `not valid YAML: ${read.error.message}`, {
        file,
        ...(read.error.line === undefined ? {} : { line: read.error.line }),
      });
    const parsed = parseInput(fileSchema, read.value.value, {
      code: "synth.family-invalid",
      location: { file },
      lineOf: read.value.lineOf,
      describe: (problem) =>
        `${problem.message} (each task needs id, instruction, signature, entryPoint, libraries, tests)`,
    });
    const seen = new Set<string>();
    return parsed.tasks.map((task, index) => {
      if (seen.has(task.id))
        throw new InputError("synth.family-duplicate", `duplicate task id "${task.id}"`, {
          file,
          field: `tasks.${index}.id`,
        });
      seen.add(task.id);
      return {
        id: task.id,
        fields: {
          instruction: task.instruction,
          signature: task.signature,
          entryPoint: task.entryPoint,
          libraries:
            task.libraries.length === 0
              ? "(standard library builtins only)"
              : task.libraries.join(", "),
        },
        hidden: { tests: task.tests },
      };
    });
  }

  split(tasks: readonly FamilyTask[], split: Split, seed: number): readonly FamilyTask[] {
    return seededSplit(tasks, split, seed, { trainShare });
  }

  protected readonly solverPrompt = "solver-v1.system.md";

  protected reactSettings(): FamilyReactSettings {
    return {
      sandbox: this.options.sandbox,
      system: reactSystemV1,
      reactSteps: this.options.reactSteps,
    };
  }

  /**
   * Best-of-N selection: the solver writes assert lines from the visible task (one call), and
   * each candidate is scored by the share of them it passes, run in the sandbox. Hidden tests
   * play no part.
   */
  async selfCheck(
    model: ModelClient,
    task: VisibleTask,
    outputs: readonly string[],
    signal?: AbortSignal,
  ): Promise<SelfCheckResult> {
    const result = await model.generateText({
      role: "solver",
      system: selfCheckSystemV1,
      prompt: `# Task\n\n${renderVisible(task)}\n\nWrite the assert lines now.`,
      temperature: roleTemperatures.solver,
      ...(signal === undefined ? {} : { abortSignal: signal }),
    });
    const checks = result.text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line.startsWith("assert"))
      .join("\n");
    const scores = await scoreDistinctOutputs(outputs, (output) =>
      passShareOfChecks(this.options.sandbox, output, checks, signal),
    );
    return {
      scores,
      criterion: `self-written asserts (${checks === "" ? 0 : checks.split("\n").length})`,
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      calls: 1,
    };
  }

  /**
   * Hidden tests are deterministic, so one verdict per (tests, answer) is enough: methods that
   * produce the same code for a task share the pytest run (see `scoreMemo`).
   */
  async score(task: FamilyTask, output: string, signal?: AbortSignal): Promise<AttemptScore> {
    return scoreMemo.score([this.options.sandbox.kind, task.hidden.tests ?? "", output], () =>
      this.scoreUncached(task, output, signal),
    );
  }

  private async scoreUncached(
    task: FamilyTask,
    output: string,
    signal?: AbortSignal,
  ): Promise<AttemptScore> {
    const tests = task.hidden.tests;
    if (tests === undefined)
      throw new InputError("synth.family-no-tests", `task "${task.id}" has no hidden tests`, {
        field: "tests",
      });
    const workspace = await mkdtemp(join(tmpdir(), "skillsmith-synth-"));
    try {
      await writeFile(join(workspace, "solution.py"), output);
      const result = await runVerifier({
        sandbox: this.options.sandbox,
        workspace,
        workspaceMountPath: "/workspace/task",
        verifier: {
          name: `${this.name}/${task.id}`,
          files: [{ path: "test_hidden.py", content: tests }],
          command: [
            "python3",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--junitxml=report.xml",
            "test_hidden.py",
          ],
          resultsFile: "report.xml",
          // Hidden tests need no plugins; autoloading them triples pytest's start-up time.
          env: { PYTHONDONTWRITEBYTECODE: "1", PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1" },
          timeoutMs: this.options.timeoutMs ?? 60_000,
        },
        ...(signal === undefined ? {} : { signal }),
      });
      return attemptScoreOf(result);
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  }
}
