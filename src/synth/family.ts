/**
 * Task families: where synthesis tasks come from, which of their fields a solver may see, and
 * how an attempt is scored. The visible/hidden split is enforced by construction: retrieval,
 * synthesis and the solver accept only a `VisibleTask`, and `visibleView` is the one way to
 * make one (a brand field that no other module can name).
 */
import type { ModelClient } from "../model/index.js";

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
}

export interface SolverAttempt {
  /** The solver's final answer (for the built-in family: the code it wrote). */
  readonly output: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
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
  loadTasks(): Promise<readonly FamilyTask[]>;
  /** The tasks of a split, deterministic for a seed. */
  split(tasks: readonly FamilyTask[], split: Split, seed: number): readonly FamilyTask[];
  solve(
    model: ModelClient,
    task: VisibleTask,
    context: SolverContext,
    signal?: AbortSignal,
  ): Promise<SolverAttempt>;
  /** Score an answer against the hidden evaluator data. */
  score(task: FamilyTask, output: string, signal?: AbortSignal): Promise<AttemptScore>;
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
