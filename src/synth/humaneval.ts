/**
 * HumanEval (164 Python tasks, github.com/openai/human-eval) as a task family:
 * `--family humaneval:<file or folder>`. Target-visible: `prompt` only (imports, helpers and the
 * function's signature and docstring). Evaluator-only: `canonical_solution`, `test` (a
 * `check(candidate)` function) and `entry_point`. The split is seeded (half to train, so the
 * pool is as large as the test split); the answer is scored by the hidden check in the sandbox
 * (`humaneval-harness.ts`), one task at a time with a time limit; the mean score is pass@1.
 */
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { z } from "zod";
import { InputError, InternalError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";
import { parseInput } from "../core/parse.js";
import type { SandboxV1 } from "../env/index.js";
import type { ModelClient } from "../model/index.js";
import {
  type AttemptScore,
  type FamilyTask,
  ScoreMemo,
  type SelfCheckResult,
  type Split,
  scoreDistinctOutputs,
  seededSplit,
  type TaskFamilyV1,
  type VisibleTask,
} from "./family.js";
import {
  defaultHumanEvalMemoryBytes,
  defaultHumanEvalPython,
  defaultHumanEvalTaskTimeoutMs,
  type HumanEvalCheck,
  type HumanEvalOutcome,
  runHumanEvalChecks,
} from "./humaneval-harness.js";
import { promptText } from "./prompts.js";
import { passShareOfChecks } from "./python-exec.js";
import { type FamilyReactSettings, PythonSolvers } from "./react.js";
import { defaultTrainShare } from "./settings.js";

export interface HumanEvalFamilyOptions {
  /** `HumanEval.jsonl`, `HumanEval.jsonl.gz`, or a folder holding one of them. */
  readonly path: string;
  readonly sandbox: SandboxV1;
  /** The interpreter of the hidden checks and the solver's own scripts; `/usr/bin/python3`. */
  readonly python?: string;
  readonly taskTimeoutMs?: number;
  readonly memoryBytes?: number;
  /**
   * More host folders answers must not read (the dataset's own folder is always hidden), e.g.
   * the synthesis store with earlier runs' answers.
   */
  readonly hiddenPaths?: readonly string[];
  /** Model calls a ReAct solver may make; default 6. */
  readonly reactSteps?: number;
}

const recordSchema = z.object({
  task_id: z.string().min(1),
  prompt: z.string().min(1),
  canonical_solution: z.string(),
  test: z.string().min(1),
  entry_point: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
});

/** The dataset file a path names: itself, or `HumanEval.jsonl(.gz)` inside a folder. */
async function datasetFile(path: string): Promise<string> {
  // Missing is the user's "no such file"; there but unreadable (a link loop) is its own error.
  const found = await unlessMissing(path, stat(path));
  if (found === undefined)
    throw new InputError("synth.humaneval-missing", "no such file or folder", { file: path });
  if (!found.isDirectory()) return path;
  for (const name of ["HumanEval.jsonl.gz", "HumanEval.jsonl"]) {
    const candidate = join(path, name);
    if ((await unlessMissing(candidate, stat(candidate)))?.isFile() === true) return candidate;
  }
  throw new InputError(
    "synth.humaneval-missing",
    "the folder holds neither HumanEval.jsonl.gz nor HumanEval.jsonl",
    { file: path },
  );
}

/**
 * Doctest examples of the prompt (`>>> call` followed by the expected value) as assert lines:
 * a visible-only check for choosing among Best-of-N samples. Multi-line examples are skipped.
 */
export function doctestAsserts(prompt: string): string[] {
  const lines = prompt.split("\n").map((line) => line.trim());
  const asserts: string[] = [];
  lines.forEach((line, index) => {
    if (!line.startsWith(">>> ")) return;
    const expected = lines[index + 1] ?? "";
    if (expected === "" || expected.startsWith(">>>") || expected.startsWith("...")) return;
    const following = lines[index + 2] ?? "";
    if (following !== "" && !following.startsWith(">>>") && !following.startsWith('"""')) return;
    asserts.push(`assert (${line.slice(4)}) == (${expected})`);
  });
  return asserts;
}

/** The prompt and the answer as one module: a completion continues the prompt, a module follows it. */
export function moduleOf(prompt: string, answer: string): string {
  const first = answer.split("\n").find((line) => line.trim() !== "") ?? "";
  return /^\s/.test(first) ? `${prompt}${answer}` : `${prompt}\n\n${answer}`;
}

/**
 * Verdicts per (sandbox kind, interpreter, limit, task, answer), shared by every HumanEval family
 * of the process: runs and optimisation epochs repeat the same answers often.
 */
const scoreMemo = new ScoreMemo();

export class HumanEvalTaskFamily extends PythonSolvers implements TaskFamilyV1 {
  readonly specificationVersion = "v1" as const;
  readonly name = "humaneval";
  readonly description =
    "HumanEval: complete the Python function at the end of a prompt (signature and docstring); a hidden check function scores it (pass@1).";
  readonly visibleFields = ["prompt"] as const;
  readonly hiddenFields = ["canonical_solution", "test", "entry_point"] as const;
  readonly trainShare = defaultTrainShare;
  private file: string | undefined;
  private digest: string | undefined;
  private count = 0;

  constructor(private readonly options: HumanEvalFamilyOptions) {
    super();
  }

  /** What a run manifest records about the family: dataset, its hash, interpreter, limits. */
  get settings(): Readonly<Record<string, string | number>> {
    return {
      dataset: this.file ?? this.options.path,
      ...(this.digest === undefined ? {} : { datasetSha256: this.digest, tasks: this.count }),
      python: this.python,
      taskTimeoutMs: this.taskTimeoutMs,
      memoryBytes: this.options.memoryBytes ?? defaultHumanEvalMemoryBytes,
      sandbox: this.options.sandbox.kind,
    };
  }

  private get python(): string {
    return this.options.python ?? defaultHumanEvalPython;
  }

  private get taskTimeoutMs(): number {
    return this.options.taskTimeoutMs ?? defaultHumanEvalTaskTimeoutMs;
  }

  /**
   * The dataset's folder, so the tests cannot be read from disk (a copy beside it included), or
   * the file itself when it lies in the root; and the caller's paths.
   */
  private get hiddenPaths(): string[] {
    const file = this.file ?? this.options.path;
    const folder = dirname(file);
    return [folder === "/" ? file : folder, ...(this.options.hiddenPaths ?? [])];
  }

  async loadTasks(): Promise<readonly FamilyTask[]> {
    const file = await datasetFile(this.options.path);
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (cause) {
      throw new InputError(
        "synth.humaneval-unreadable",
        "cannot read the dataset",
        { file },
        {
          cause,
        },
      );
    }
    let text: string;
    try {
      text = (file.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8");
    } catch (cause) {
      throw new InputError("synth.humaneval-gzip", "not a valid gzip file", { file }, { cause });
    }
    const tasks: FamilyTask[] = [];
    const seen = new Set<string>();
    for (const [index, line] of text.split("\n").entries()) {
      if (line.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (cause) {
        throw new InputError(
          "synth.humaneval-syntax",
          "not valid JSON",
          { file, line: index + 1 },
          {
            cause,
          },
        );
      }
      const record = parseInput(recordSchema, value, {
        code: "synth.humaneval-record",
        location: { file, line: index + 1 },
        describe: (problem) =>
          `${problem.message} (each line needs task_id, prompt, canonical_solution, test, entry_point)`,
      });
      if (seen.has(record.task_id))
        throw new InputError("synth.humaneval-duplicate", `duplicate task_id "${record.task_id}"`, {
          file,
          line: index + 1,
          field: "task_id",
        });
      seen.add(record.task_id);
      tasks.push({
        id: record.task_id,
        fields: { prompt: record.prompt },
        hidden: {
          canonical_solution: record.canonical_solution,
          test: record.test,
          entry_point: record.entry_point,
        },
      });
    }
    if (tasks.length === 0)
      throw new InputError("synth.humaneval-empty", "the dataset holds no tasks", { file });
    this.file = file;
    this.digest = createHash("sha256").update(bytes).digest("hex");
    this.count = tasks.length;
    return tasks;
  }

  /** Seeded: tasks sorted by id, shuffled, half (rounded up) to train. */
  split(tasks: readonly FamilyTask[], split: Split, seed: number): readonly FamilyTask[] {
    return seededSplit(tasks, split, seed, { trainShare: this.trainShare });
  }

  protected readonly solverPrompt = "humaneval-solver-v1.system.md";

  /** The solver's scripts run with the dataset hidden from them. */
  protected reactSettings(): FamilyReactSettings {
    return {
      sandbox: this.options.sandbox,
      system: promptText("humaneval-react-v1.system.md").trimEnd(),
      reactSteps: this.options.reactSteps,
      python: this.python,
      hiddenPaths: this.hiddenPaths,
    };
  }

  /**
   * Best-of-N selection from the visible prompt alone: the share of the docstring's examples
   * (`>>>` lines) each candidate module satisfies, run in the sandbox. No model call.
   */
  async selfCheck(
    _model: ModelClient,
    task: VisibleTask,
    outputs: readonly string[],
    signal?: AbortSignal,
  ): Promise<SelfCheckResult> {
    const prompt = task.fields.prompt ?? "";
    const checks = doctestAsserts(prompt).join("\n");
    const scores = await scoreDistinctOutputs(outputs, async (output) =>
      checks === ""
        ? 0
        : passShareOfChecks(this.options.sandbox, moduleOf(prompt, output), checks, signal, {
            python: this.python,
            hiddenPaths: this.hiddenPaths,
          }),
    );
    return {
      scores,
      criterion: `docstring examples (${checks === "" ? 0 : checks.split("\n").length})`,
      inputTokens: 0,
      outputTokens: 0,
      calls: 0,
    };
  }

  /** The hidden check on one answer (remembered: the check is deterministic). */
  async score(task: FamilyTask, output: string, signal?: AbortSignal): Promise<AttemptScore> {
    return scoreMemo.score(
      [
        this.options.sandbox.kind,
        this.python,
        String(this.taskTimeoutMs),
        task.id,
        task.fields.prompt ?? "",
        task.hidden.test ?? "",
        task.hidden.entry_point ?? "",
        output,
      ],
      async () => {
        const [outcome] = await this.check([{ task, code: output }], signal);
        if (outcome === undefined)
          throw new InternalError("synth.humaneval-no-outcome", "the harness gave no outcome");
        return scoreOf(outcome);
      },
    );
  }

  /**
   * Check many answers in one sandboxed harness process (every process an answer starts is
   * killed before the next answer runs). For answers of one origin, e.g. the canonical solutions.
   */
  async check(
    answers: readonly { readonly task: FamilyTask; readonly code: string }[],
    signal?: AbortSignal,
  ): Promise<HumanEvalOutcome[]> {
    const items: HumanEvalCheck[] = answers.map(({ task, code }) => {
      const { test, entry_point: entryPoint } = task.hidden;
      if (test === undefined || entryPoint === undefined)
        throw new InputError(
          "synth.humaneval-hidden",
          `task "${task.id}" has no hidden test or entry point`,
          { field: test === undefined ? "test" : "entry_point" },
        );
      return { id: task.id, prompt: task.fields.prompt ?? "", test, entryPoint, code };
    });
    return runHumanEvalChecks(items, {
      sandbox: this.options.sandbox,
      python: this.python,
      taskTimeoutMs: this.taskTimeoutMs,
      hiddenPaths: this.hiddenPaths,
      ...(this.options.memoryBytes === undefined ? {} : { memoryBytes: this.options.memoryBytes }),
      ...(signal === undefined ? {} : { signal }),
    });
  }
}

/** One HumanEval outcome as an attempt score: one check, the hidden `check` function. */
export function scoreOf(outcome: HumanEvalOutcome): AttemptScore {
  const passed = outcome.status === "pass" ? 1 : 0;
  return {
    score: passed,
    passed,
    total: 1,
    flags: [...outcome.flags],
    checks: [{ name: "hidden check", status: outcome.status }],
    feedback: outcome.feedback,
  };
}

/** `humaneval:<path>` → the path; undefined for other family names. */
export function humanEvalPathOf(family: string): string | undefined {
  if (!family.startsWith("humaneval:")) return undefined;
  return family.slice("humaneval:".length);
}
