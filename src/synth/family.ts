/**
 * Task families: where synthesis tasks come from, which of their fields a solver may see, and
 * how an attempt is scored. The visible/hidden split is enforced by construction: retrieval,
 * synthesis and the solver accept only a `VisibleTask`, and `visibleView` is the one way to
 * make one (a brand field that no other module can name).
 */
import { createHash } from "node:crypto";
import type { ModelClient } from "../model/index.js";
import { createSeededRandom } from "../stats/index.js";

declare const visibleBrand: unique symbol;

/** The target-visible part of a task: what retrieval, the synthesiser and the solver may see. */
export interface VisibleTask {
  readonly id: string;
  readonly family: string;
  /** Only the family's declared visible fields, in declaration order. */
  readonly fields: Readonly<Record<string, string>>;
  readonly [visibleBrand]: true;
}

/** A task as loaded: visible fields plus evaluator-only data (hidden tests, gold answers). */
export interface FamilyTask {
  readonly id: string;
  readonly fields: Readonly<Record<string, string>>;
  /** Evaluator-only. Never passed to retrieval, synthesis, the solver or the critic. */
  readonly hidden: Readonly<Record<string, string>>;
}

export type Split = "train" | "test";

/** How one attempt fared, from the family's evaluator. */
export interface AttemptScore {
  /** In [0, 1]: the share of hidden checks that passed. */
  readonly score: number;
  readonly passed: number;
  readonly total: number;
  readonly flags: readonly string[];
  /**
   * Check names and statuses only. Failure messages and test source can quote hidden data, so
   * they stay out of anything a model is shown.
   */
  readonly checks: readonly { readonly name: string; readonly status: string }[];
  /**
   * Evaluator feedback a model may be shown (the critic, as protocol C's "evaluation signals"):
   * the failure's category in fixed words, e.g. "the function raised TypeError" — never test
   * text, expected values or other evaluator-only data. Absent when a family gives none.
   */
  readonly feedback?: string;
}

/**
 * A verifier's verdict as an attempt score: the check names and statuses are kept, the failure
 * messages dropped (see `AttemptScore.checks`).
 */
export function attemptScoreOf(verdict: {
  readonly passRatio: number;
  readonly passed: number;
  readonly total: number;
  readonly flags: readonly string[];
  readonly checks: readonly { readonly name: string; readonly status: string }[];
}): AttemptScore {
  return {
    score: verdict.passRatio,
    passed: verdict.passed,
    total: verdict.total,
    flags: [...verdict.flags],
    checks: verdict.checks.map((check) => ({ name: check.name, status: check.status })),
  };
}

export interface SolverAttempt {
  /**
   * The solver's final answer: for the built-in family the code it wrote, for a suite family the
   * diff the agent left in the workspace.
   */
  readonly output: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Model calls the attempt made (an agent loop makes several); 1 when absent. */
  readonly calls?: number;
  /** Steps of a multi-step solver (tool calls and their results, abbreviated), for the run log. */
  readonly steps?: readonly string[];
}

/** Sampling of one solver call: temperature 0 unless a method samples (Best-of-N). */
export interface SolveSettings {
  readonly temperature?: number;
  readonly seed?: number;
}

/** A visible-only check of candidate answers, for choosing among samples (Best-of-N). */
export interface SelfCheckResult {
  /** One score in [0, 1] per candidate, in the order given. */
  readonly scores: readonly number[];
  /** What the score means, for the run log (e.g. "self-written asserts", "file operations"). */
  readonly criterion: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly calls: number;
}

/** The context a solver gets besides the task: a synthesised skill or raw evidence, or nothing. */
export interface SolverContext {
  readonly skillMarkdown?: string;
  readonly evidence?: string;
}

/** A task family adapter. Version 1. */
export interface TaskFamilyV1 {
  readonly specificationVersion: "v1";
  readonly name: string;
  /** One line describing the family, shown to the synthesiser when it writes a static skill. */
  readonly description: string;
  /** Target-visible fields, in the order they are shown. */
  readonly visibleFields: readonly string[];
  /** Evaluator-only fields. */
  readonly hiddenFields: readonly string[];
  /** Share of tasks the split puts in train (recorded in manifests); ½ when absent. */
  readonly trainShare?: number;
  /** Evaluator settings a run manifest records (dataset and its hash, interpreter, limits). */
  readonly settings?: Readonly<Record<string, string | number>>;
  loadTasks(): Promise<readonly FamilyTask[]>;
  /** The tasks of a split, deterministic for a seed. */
  split(tasks: readonly FamilyTask[], split: Split, seed: number): readonly FamilyTask[];
  solve(
    model: ModelClient,
    task: VisibleTask,
    context: SolverContext,
    signal?: AbortSignal,
    settings?: SolveSettings,
  ): Promise<SolverAttempt>;
  /**
   * The ReAct baseline: the solver in a reason-act-observe loop with tools that touch only what
   * the solver itself wrote or the visible workspace, never the evaluator's data. Optional.
   */
  solveReact?(
    model: ModelClient,
    task: VisibleTask,
    context: SolverContext,
    signal?: AbortSignal,
  ): Promise<SolverAttempt>;
  /**
   * Score candidate answers by a visible-only criterion (Best-of-N selection). Optional: without
   * it, Best-of-N picks the most frequent answer (self-consistency).
   */
  selfCheck?(
    model: ModelClient,
    task: VisibleTask,
    outputs: readonly string[],
    signal?: AbortSignal,
  ): Promise<SelfCheckResult>;
  /** Score an answer against the hidden evaluator data. */
  score(task: FamilyTask, output: string, signal?: AbortSignal): Promise<AttemptScore>;
}

/**
 * A deterministic train/test split: tasks sorted by id, shuffled with the seed (Fisher–Yates),
 * the first `trainShare` (rounded up) of each group to train. Without `groupOf` there is one
 * group; with it (e.g. a suite's skills) each group is split on its own, so both splits hold
 * tasks of every group.
 */
export function seededSplit(
  tasks: readonly FamilyTask[],
  split: Split,
  seed: number,
  options: { readonly trainShare?: number; readonly groupOf?: (task: FamilyTask) => string } = {},
): FamilyTask[] {
  const share = options.trainShare ?? 0.5;
  const groups = new Map<string, FamilyTask[]>();
  for (const task of [...tasks].sort((left, right) => left.id.localeCompare(right.id))) {
    const group = options.groupOf?.(task) ?? "";
    groups.set(group, [...(groups.get(group) ?? []), task]);
  }
  const random = createSeededRandom(seed);
  const chosen: FamilyTask[] = [];
  for (const group of [...groups.keys()].sort()) {
    const ordered = groups.get(group) ?? [];
    for (let index = ordered.length - 1; index > 0; index -= 1) {
      const other = random.nextBelow(index + 1);
      const swap = ordered[index];
      const with_ = ordered[other];
      if (swap === undefined || with_ === undefined) continue;
      ordered[index] = with_;
      ordered[other] = swap;
    }
    const trainCount = Math.ceil(ordered.length * share);
    chosen.push(...(split === "train" ? ordered.slice(0, trainCount) : ordered.slice(trainCount)));
  }
  return chosen;
}

/**
 * The visible view of a task: a fresh object holding only the declared visible fields, so extra
 * properties a caller may have attached at run time never travel with it.
 */
export function visibleView(
  family: Pick<TaskFamilyV1, "name" | "visibleFields" | "hiddenFields">,
  task: FamilyTask,
): VisibleTask {
  const fields: Record<string, string> = {};
  for (const name of family.visibleFields) {
    if (family.hiddenFields.includes(name)) continue;
    const value = task.fields[name];
    if (typeof value === "string") fields[name] = value;
  }
  return Object.freeze({
    id: task.id,
    family: family.name,
    fields: Object.freeze(fields),
  }) as VisibleTask;
}

/** The visible fields as text, one labelled block per field: the form every prompt uses. */
export function renderVisible(task: VisibleTask): string {
  return Object.entries(task.fields)
    .map(([name, value]) => `${name}:\n${value}`)
    .join("\n\n");
}

/**
 * Verdicts remembered by key, for families whose evaluators are deterministic: runs and
 * optimisation epochs repeat the same answers often, and each evaluation is slow. Bounded (the
 * whole memo is dropped at `limit`) so a long session cannot grow it without limit.
 */
export class ScoreMemo {
  private readonly verdicts = new Map<string, Promise<AttemptScore>>();

  constructor(private readonly limit = 10_000) {}

  /** The verdict for `parts` (hashed as one key), computed by `compute` only when not remembered. */
  score(parts: readonly string[], compute: () => Promise<AttemptScore>): Promise<AttemptScore> {
    const hash = createHash("sha256");
    parts.forEach((part, index) => {
      if (index > 0) hash.update("\0");
      hash.update(part);
    });
    const key = hash.digest("hex");
    let pending = this.verdicts.get(key);
    if (pending === undefined) {
      if (this.verdicts.size >= this.limit) this.verdicts.clear();
      pending = compute();
      this.verdicts.set(key, pending);
      // A failed run (aborted, sandbox error) must not be remembered as the verdict.
      pending.catch(() => this.verdicts.delete(key));
    }
    return pending;
  }
}

/**
 * One score per output, in order, each distinct output scored once and one at a time: Best-of-N
 * samples often repeat, and each score is a sandboxed interpreter run.
 */
export async function scoreDistinctOutputs(
  outputs: readonly string[],
  score: (output: string) => Promise<number>,
): Promise<number[]> {
  const distinct = new Map<string, Promise<number>>();
  const scores: number[] = [];
  for (const output of outputs) {
    let pending = distinct.get(output);
    if (pending === undefined) {
      pending = score(output);
      distinct.set(output, pending);
    }
    scores.push(await pending);
  }
  return scores;
}
