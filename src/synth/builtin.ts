/**
 * The built-in task family: small Python function-writing tasks shipped in
 * `examples/synth/builtin/tasks.yaml`. Visible: instruction, signature, entry point, libraries.
 * Evaluator-only: the hidden pytest file, run through the verifier runner in a sandbox.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { InputError } from "../core/errors.js";
import { packageRoot } from "../core/paths.js";
import { runVerifier, type SandboxV1 } from "../env/index.js";
import type { ModelClient } from "../model/index.js";
import { createSeededRandom } from "../stats/index.js";
import {
  type AttemptScore,
  type FamilyTask,
  renderVisible,
  type SolverAttempt,
  type SolverContext,
  type Split,
  type TaskFamilyV1,
  type VisibleTask,
} from "./family.js";
import { fillPrompt, promptText } from "./prompts.js";

export const defaultBuiltinDirectory = (): string =>
  join(packageRoot(), "examples", "synth", "builtin");

/** Train share of the split; 1:1 pool-to-test by default. */
export const trainShare = 0.5;
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
}

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

/**
 * Verdicts per (sandbox kind, hidden tests, answer), shared by every family instance of the
 * process: runs and optimisation epochs repeat the same answers often, and each pytest start
 * costs a second or more. Bounded so a long session cannot grow it without limit.
 */
const scoreMemo = new Map<string, Promise<AttemptScore>>();
const scoreMemoLimit = 10_000;

export class BuiltinTaskFamily implements TaskFamilyV1 {
  readonly specificationVersion = "v1" as const;
  readonly name = "builtin";
  readonly description =
    "Small Python function-writing tasks: an instruction and a signature; hidden pytest tests score the function.";
  readonly visibleFields = ["instruction", "signature", "entryPoint", "libraries"] as const;
  readonly hiddenFields = ["tests"] as const;
  private readonly directory: string;

  constructor(private readonly options: BuiltinFamilyOptions) {
    this.directory = options.directory ?? defaultBuiltinDirectory();
  }

  async loadTasks(): Promise<readonly FamilyTask[]> {
    const file = join(this.directory, "tasks.yaml");
    let value: unknown;
    try {
      value = parseYaml(await readFile(file, "utf8"));
    } catch (cause) {
      throw new InputError(
        "synth.family.unreadable",
        "cannot read or parse the task file",
        { file },
        {
          cause,
        },
      );
    }
    const parsed = fileSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InputError(
        "synth.family.invalid",
        `${issue?.message ?? "invalid"} (each task needs id, instruction, signature, entryPoint, libraries, tests)`,
        { file, ...(issue === undefined ? {} : { field: issue.path.join(".") }) },
      );
    }
    const seen = new Set<string>();
    return parsed.data.tasks.map((task, index) => {
      if (seen.has(task.id))
        throw new InputError("synth.family.duplicate", `duplicate task id "${task.id}"`, {
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
    const ordered = [...tasks].sort((left, right) => left.id.localeCompare(right.id));
    const random = createSeededRandom(seed);
    for (let index = ordered.length - 1; index > 0; index -= 1) {
      const other = random.nextBelow(index + 1);
      const swap = ordered[index];
      const with_ = ordered[other];
      if (swap === undefined || with_ === undefined) continue;
      ordered[index] = with_;
      ordered[other] = swap;
    }
    const trainCount = Math.ceil(ordered.length * trainShare);
    return split === "train" ? ordered.slice(0, trainCount) : ordered.slice(trainCount);
  }

  async solve(
    model: ModelClient,
    task: VisibleTask,
    context: SolverContext,
    signal?: AbortSignal,
  ): Promise<SolverAttempt> {
    const result = await model.generateText({
      role: "solver",
      system: promptText("solver-v1.system.md"),
      prompt: fillPrompt(promptText("solver-v1.user.md"), {
        context: renderSolverContext(context),
        task: renderVisible(task),
      }),
      temperature: 0,
      ...(signal === undefined ? {} : { abortSignal: signal }),
    });
    return {
      output: extractCode(result.text),
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
    };
  }

  /**
   * Hidden tests are deterministic, so one verdict per (tests, answer) is enough: methods that
   * produce the same code for a task share the pytest run (see `scoreMemo`).
   */
  async score(task: FamilyTask, output: string, signal?: AbortSignal): Promise<AttemptScore> {
    const key = createHash("sha256")
      .update(this.options.sandbox.kind)
      .update("\0")
      .update(task.hidden.tests ?? "")
      .update("\0")
      .update(output)
      .digest("hex");
    let pending = scoreMemo.get(key);
    if (pending === undefined) {
      if (scoreMemo.size >= scoreMemoLimit) scoreMemo.clear();
      pending = this.scoreUncached(task, output, signal);
      scoreMemo.set(key, pending);
      // A failed run (aborted, sandbox error) must not be remembered as the verdict.
      pending.catch(() => scoreMemo.delete(key));
    }
    return pending;
  }

  private async scoreUncached(
    task: FamilyTask,
    output: string,
    signal?: AbortSignal,
  ): Promise<AttemptScore> {
    const tests = task.hidden.tests;
    if (tests === undefined)
      throw new InputError("synth.family.no-tests", `task "${task.id}" has no hidden tests`, {
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
      return {
        score: result.passRatio,
        passed: result.passed,
        total: result.total,
        flags: [...result.flags],
        checks: result.checks.map((check) => ({ name: check.name, status: check.status })),
      };
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  }
}
