/**
 * What the MPO critic is shown for each sampled case, as protocol C §4 lists it: the paired
 * skills, the trajectories (solver steps and answers), the evaluation signals, the retrieved
 * evidence text, and (once per prompt) the slot diff — bounded in size.
 *
 * Evaluation signals are the score, passed/total, the run flags, the check names with their
 * statuses and the family's feedback (`AttemptScore.feedback`: a failure category such as "the
 * function raised TypeError"). The SkillTTA paper lets its critic also see the training tasks'
 * ground truth ("critic-visible ground truth ... use only training tasks"); skillsmith gives it
 * none — no hidden tests, failure messages, canonical solutions or entry points — so the leak
 * guard can assert that a secret planted in any evaluator-only field reaches no request at all,
 * the critic's and the editor's included.
 *
 * Bounds (`criticInputLimits`, recorded in every optimisation report): each text is cut to its
 * limit keeping head and tail, with the cut marked in the text; when the cases together would
 * pass `casesCharacters`, a case is shown with its signals only, and a case that would pass it
 * even so is left out. Cases are taken in sampling order, so the cut is deterministic; every cut
 * is recorded.
 */
import { type FamilyTask, renderVisible, type TaskFamilyV1, visibleView } from "./family.js";
import { type PoolEntry, renderEvidence } from "./pool.js";
import type { TaskRunRecord } from "./run.js";
import { type CriticInputLimits, criticInputLimits, type TransitionKind } from "./settings.js";

export interface CriticCase {
  readonly taskId: string;
  readonly kind: TransitionKind;
  readonly previous: TaskRunRecord;
  readonly current: TaskRunRecord;
}

export interface CriticTruncation {
  readonly taskId: string;
  /** Which text: target, evidence, previous.skill, current.answer, …, or `case` (texts dropped). */
  readonly part: string;
  readonly originalCharacters: number;
  readonly keptCharacters: number;
}

export interface CriticInput {
  readonly text: string;
  readonly characters: number;
  readonly limits: CriticInputLimits;
  readonly truncations: readonly CriticTruncation[];
  /** Cases shown with their signals only (their texts would have passed the bound). */
  readonly compactCases: readonly string[];
  /** Cases left out altogether. */
  readonly omittedCases: readonly string[];
}

/**
 * `text` cut to `limit` characters: the head (⅔ of what is kept) and the tail, with a marker
 * naming how much was cut. Deterministic; `limit` counts the marker.
 */
export function clipText(text: string, limit: number): { text: string; cut: boolean } {
  if (text.length <= limit) return { text, cut: false };
  const marker = (cut: number) => `\n[... ${cut} characters cut ...]\n`;
  // The marker's length depends on the count it names; the widest count is the whole text.
  const room = Math.max(0, limit - marker(text.length).length);
  const head = Math.ceil((room * 2) / 3);
  const tail = room - head;
  const cut = text.length - head - tail;
  return {
    text: `${text.slice(0, head)}${marker(cut)}${tail > 0 ? text.slice(-tail) : ""}`,
    cut: true,
  };
}

function signals(record: TaskRunRecord): string {
  const checks =
    record.checks.length === 0
      ? "(none reported)"
      : record.checks.map((check) => `${check.name}: ${check.status}`).join(", ");
  return [
    `score ${record.score.toFixed(2)} (${record.passed}/${record.total} checks passed)`,
    `flags: ${record.flags.length === 0 ? "none" : record.flags.join(", ")}`,
    `checks: ${checks}`,
    ...(record.feedback === undefined ? [] : [`feedback: ${record.feedback}`]),
  ].join("; ");
}

function retrievalLine(record: TaskRunRecord): string {
  if (record.retrieval === undefined) return "none (no retrieval in this run)";
  const hits = record.retrieval.hits.map((hit) => `${hit.taskId} (${hit.score})`).join(", ");
  return `${record.retrieval.method}, top ${record.retrieval.k}: ${hits || "(no hits)"}`;
}

/** The pool entries a run retrieved, in hit order (entries no longer in the pool are skipped). */
function retrievedEntries(record: TaskRunRecord, pool: readonly PoolEntry[]): PoolEntry[] {
  return (record.retrieval?.hits ?? []).flatMap((hit) => {
    const entry = pool.find((each) => each.taskId === hit.taskId);
    return entry === undefined ? [] : [entry];
  });
}

const sameHits = (left: TaskRunRecord, right: TaskRunRecord): boolean =>
  JSON.stringify(left.retrieval?.hits.map((hit) => hit.taskId) ?? null) ===
  JSON.stringify(right.retrieval?.hits.map((hit) => hit.taskId) ?? null);

/** The cases as the critic's prompt shows them, within `limits`. */
export function renderCriticCases(
  family: Pick<TaskFamilyV1, "name" | "visibleFields" | "hiddenFields">,
  tasks: ReadonlyMap<string, FamilyTask>,
  cases: readonly CriticCase[],
  pool: readonly PoolEntry[],
  limits: CriticInputLimits = criticInputLimits,
): CriticInput {
  const truncations: CriticTruncation[] = [];
  const compactCases: string[] = [];
  const omittedCases: string[] = [];
  const blocks: string[] = [];
  let used = 0;
  const separator = "\n\n";

  for (const transition of cases) {
    const { taskId } = transition;
    const clipped: CriticTruncation[] = [];
    const clip = (part: string, text: string, limit: number): string => {
      const result = clipText(text, limit);
      if (result.cut)
        clipped.push({
          taskId,
          part,
          originalCharacters: text.length,
          keptCharacters: result.text.length,
        });
      return result.text;
    };
    const task = tasks.get(taskId);
    const target = task === undefined ? "(not loaded)" : renderVisible(visibleView(family, task));
    const header = `## Case ${taskId} (${transition.kind})`;
    const compact = [
      header,
      `Previous run: ${signals(transition.previous)}`,
      `Current run: ${signals(transition.current)}`,
    ].join("\n");

    const run = (label: "previous" | "current", record: TaskRunRecord): string => {
      const evidence =
        label === "previous" &&
        record.retrieval !== undefined &&
        sameHits(record, transition.current)
          ? "(the same entries as the current run's)"
          : record.retrieval === undefined
            ? "(none)"
            : clip(
                `${label}.evidence`,
                renderEvidence(retrievedEntries(record, pool)),
                limits.evidenceCharacters,
              );
      return [
        `### ${label === "previous" ? "Previous" : "Current"} run (${record.method}${record.libraryVersion === undefined ? "" : `, library ${record.libraryVersion}`})`,
        `Evaluation signals: ${signals(record)}`,
        `Retrieved: ${retrievalLine(record)}`,
        `Retrieved evidence:\n${evidence}`,
        record.skill === undefined
          ? "Skill: (none)"
          : `Skill${record.skill.valid ? "" : ` (rejected, the solver ran without it: ${record.skill.problems.join("; ")})`}:\n${clip(`${label}.skill`, record.skill.markdown.trimEnd(), limits.skillCharacters)}`,
        ...(record.steps === undefined || record.steps.length === 0
          ? []
          : [
              `Solver steps:\n${clip(`${label}.steps`, record.steps.join("\n"), limits.stepsCharacters)}`,
            ]),
        `Solver answer:\n${clip(`${label}.answer`, record.solverOutput.trimEnd(), limits.answerCharacters)}`,
      ].join("\n");
    };
    const full = [
      header,
      `### Target (visible fields)\n${clip("target", target, limits.targetCharacters)}`,
      run("previous", transition.previous),
      run("current", transition.current),
    ].join(separator);

    const room = limits.casesCharacters - used - (blocks.length === 0 ? 0 : separator.length);
    if (full.length <= room) {
      blocks.push(full);
      truncations.push(...clipped);
    } else if (compact.length <= room) {
      blocks.push(compact);
      compactCases.push(taskId);
      truncations.push({
        taskId,
        part: "case",
        originalCharacters: full.length,
        keptCharacters: compact.length,
      });
    } else {
      omittedCases.push(taskId);
      continue;
    }
    used += (blocks.length === 1 ? 0 : separator.length) + (blocks.at(-1)?.length ?? 0);
  }
  const text = blocks.length === 0 ? "(no cases)" : blocks.join(separator);
  return {
    text,
    characters: text.length,
    limits,
    truncations,
    compactCases,
    omittedCases,
  };
}
