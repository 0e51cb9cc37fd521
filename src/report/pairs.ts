/**
 * Pair views for the trajectory viewer: for one (configuration, skill, requirement, repeat), the
 * without- and with-skill runs as the results store holds them, reduced to what a person reads
 * (messages, tool calls and results, files changed, checks, where the skill was activated).
 *
 * The store keeps no workspace diff, so "files changed" is derived from the tool calls that wrote
 * files (patches, whole-file writes, string edits). Changes made by shell commands cannot be
 * recovered from a trajectory; the view counts those calls and says so.
 *
 * One file (over 400 lines) because the pair view and the trajectory reduction it is made of
 * (events, tool calls, files changed) are one data shape read by the viewer; splitting would
 * expose the reduction's intermediate shapes.
 */

import { findSkillActivation, parseTrajectory } from "../agents/index.js";
import type { TrajectoryEvent } from "../agents/types.js";
import { labelCanaryLines } from "../bench/analysis/canaries.js";
import {
  type Arm,
  ResultsStore,
  type RunResult,
  type VerifierRecord,
} from "../bench/store/results.js";
import { parseUnifiedDiff } from "../core/diff.js";
import { type CheckResult, type FlagDefinition, flagDefinition } from "../env/index.js";

/** Longest text of one event kept in a view; agent logs can hold megabytes of tool output. */
export const EVENT_TEXT_LIMIT = 20_000;

export interface PairViewOptions {
  /**
   * Longest text kept per event, check message or diff (default `EVENT_TEXT_LIMIT`). The static
   * report embeds every pair, so it passes a smaller limit to keep the file openable.
   */
  readonly textLimit?: number;
  /**
   * Longest verifier output kept for a run without flags (default: all of it). A flagged run
   * always keeps its whole stored output (capped by the store), which is what explains the flag.
   */
  readonly verifierOutputLimit?: number;
}

export interface PairRef {
  readonly config: string;
  readonly skill: string;
  readonly requirement: string;
  readonly repeat: number;
}

/**
 * The stable, URL-safe path of a pair (`config/skill/requirement/repeat`, each part percent
 * encoded), used both as the dashboard's `/pair/<path>` and the static report's `#pair/<path>`.
 */
export function pairPath(ref: PairRef): string {
  return [ref.config, ref.skill, ref.requirement, String(ref.repeat)]
    .map((part) => encodeURIComponent(part))
    .join("/");
}

/** The pair named by a path from `pairPath`, or undefined when it is not one. */
export function parsePairPath(path: string): PairRef | undefined {
  const parts = path.split("/");
  if (parts.length !== 4) return undefined;
  let decoded: string[];
  try {
    decoded = parts.map((part) => decodeURIComponent(part));
  } catch {
    // A malformed percent escape names no pair: the caller answers "no such pair" (404).
    return undefined;
  }
  const [config, skill, requirement, repeatText] = decoded as [string, string, string, string];
  if (!/^[0-9]+$/.test(repeatText) || config === "" || skill === "" || requirement === "")
    return undefined;
  return { config, skill, requirement, repeat: Number(repeatText) };
}

export type ViewEvent =
  | { readonly type: "assistant_text"; readonly text: string }
  | {
      readonly type: "tool_call";
      readonly id: string;
      readonly name: string;
      /** Pretty JSON of the input (truncated). */
      readonly input: string;
      /** The unified diff the call carried (apply_patch), shown as a diff rather than JSON. */
      readonly patch?: string;
      /** True on the call where the skill was activated (a Skill call or a SKILL.md read). */
      readonly activation?: true;
    }
  // Results and errors are shown as the trajectory recorded them.
  | Extract<TrajectoryEvent, { readonly type: "tool_result" | "error" }>;

export interface FileChange {
  readonly path: string;
  /** `patch`: a unified diff; `write`: the whole new content; `edit`: replaced strings; `listed`: only the path is known. */
  readonly kind: "patch" | "write" | "edit" | "listed";
  /** Lines prefixed with `+`, `-`, ` ` or `@@` (unified-diff style); absent for `listed`. */
  readonly diff?: string;
  readonly tool: string;
  /** The tool reported an error, so the change may not have been applied. */
  readonly failed: boolean;
  readonly note?: string;
}

export interface ArmView {
  readonly arm: Arm;
  readonly status: RunResult["status"];
  readonly passRatio: number;
  readonly passed: number;
  readonly total: number;
  readonly checks: readonly CheckResult[];
  readonly flags: readonly string[];
  /** Each flag's label, effect and description from the one vocabulary (`env/verifier/flags.ts`). */
  readonly flagDetails: readonly FlagDefinition[];
  /** What the verifier printed (redacted) and did: exit code, duration, outcome source, evidence. */
  readonly verifier?: VerifierRecord;
  /** null when the harness cannot tell (replay, none, oracle). */
  readonly skillActivated: boolean | null;
  /** Index into `events` of the activating call, when there was one. */
  readonly activationIndex?: number;
  readonly harness?: string;
  readonly model?: string;
  readonly skillsShown: readonly string[];
  readonly skillsShownSource?: string;
  readonly events: readonly ViewEvent[];
  readonly files: readonly FileChange[];
  /** Shell calls, whose file changes (if any) cannot be shown. */
  readonly shellCalls: number;
  readonly usage: RunResult["usage"];
  readonly agentMs: number;
  readonly verifierMs: number;
  readonly totalMs: number;
  readonly attempts: number;
  readonly error?: string;
  /** Relative to the run directory: the raw agent log, when it was too large for the store. */
  readonly trajectoryFile?: string;
  /** Why the stored trajectory could not be read, when it could not. */
  readonly trajectoryProblem?: string;
}

export interface PairView extends PairRef {
  readonly id: string;
  readonly without?: ArmView;
  readonly with?: ArmView;
}

/** A run's verifier output as the viewer shows it: canary lines marked, cut when unflagged. */
function verifierOutputView(result: RunResult, options: PairViewOptions): string {
  const output = labelCanaryLines(result.verifier?.output ?? "", result.verifier?.canaries ?? []);
  return result.flags.length > 0 || options.verifierOutputLimit === undefined
    ? output
    : truncateText(output, options.verifierOutputLimit);
}

function truncateText(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}\n[… ${(text.length - limit).toLocaleString("en-US")} more characters not shown]`;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function stringField(input: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = input[name];
    if (typeof value === "string") return value;
  }
  return undefined;
}

function prefixed(text: string, prefix: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => `${prefix}${line}`);
}

/** Split a unified diff (`git diff` style) into one change per file (`core/diff.ts`). */
function unifiedDiffFiles(patch: string): Array<{ path: string; diff: string }> {
  return parseUnifiedDiff(patch).map((file) => ({ path: file.path, diff: file.lines.join("\n") }));
}

/** Codex's own patch language (`*** Begin Patch` / `*** Update File: path`). */
function codexPatchFiles(patch: string): Array<{ path: string; diff: string }> {
  const files: Array<{ path: string; lines: string[] }> = [];
  for (const line of patch.split("\n")) {
    const header = /^\*\*\* (Add|Update|Delete) File: (.+)$/.exec(line);
    if (header !== null) {
      files.push({ path: header[2] as string, lines: header[1] === "Delete" ? ["(deleted)"] : [] });
      continue;
    }
    if (line.startsWith("*** ")) continue;
    files.at(-1)?.lines.push(line);
  }
  return files.map((file) => ({ path: file.path, diff: file.lines.join("\n") }));
}

function changesOf(
  event: Extract<TrajectoryEvent, { type: "tool_call" }>,
  failed: boolean,
): FileChange[] {
  const name = event.name.toLowerCase();
  const input = record(event.input);
  const tool = event.name;
  const patch = stringField(input, "patch", "input", "diff");
  if (name === "apply_patch" && patch !== undefined) {
    const files = patch.includes("*** Begin Patch")
      ? codexPatchFiles(patch)
      : unifiedDiffFiles(patch);
    return files.map((file) => ({ path: file.path, kind: "patch", diff: file.diff, tool, failed }));
  }
  if (Array.isArray(input.changes)) {
    return input.changes.flatMap((change) => {
      const entry = record(change);
      const path = stringField(entry, "path");
      if (path === undefined) return [];
      const kind = stringField(entry, "kind");
      return [
        {
          path,
          kind: "listed" as const,
          tool,
          failed,
          note: `${kind === undefined ? "changed" : kind}; the agent's log names the file but not its content`,
        },
      ];
    });
  }
  const path = stringField(input, "file_path", "path", "notebook_path");
  if (path === undefined) return [];
  if (name === "write" || name === "write_file" || name === "create_file") {
    const content = stringField(input, "content", "contents") ?? "";
    return [
      {
        path,
        kind: "write",
        diff: prefixed(content, "+").join("\n"),
        tool,
        failed,
        note: "whole file written; its earlier content is not recorded",
      },
    ];
  }
  if (name === "edit" || name === "edit_file" || name === "str_replace") {
    const oldText = stringField(input, "old_string", "old_str") ?? "";
    const newText = stringField(input, "new_string", "new_str") ?? "";
    return [
      {
        path,
        kind: "edit",
        diff: [...prefixed(oldText, "-"), ...prefixed(newText, "+")].join("\n"),
        tool,
        failed,
      },
    ];
  }
  if (name === "multiedit" && Array.isArray(input.edits)) {
    const lines = input.edits.flatMap((edit, index) => {
      const entry = record(edit);
      return [
        `@@ edit ${index + 1}`,
        ...prefixed(stringField(entry, "old_string") ?? "", "-"),
        ...prefixed(stringField(entry, "new_string") ?? "", "+"),
      ];
    });
    return [{ path, kind: "edit", diff: lines.join("\n"), tool, failed }];
  }
  return [];
}

const SHELL_TOOLS: ReadonlySet<string> = new Set(["bash", "shell", "run_command", "exec_command"]);

function prettyInput(input: unknown, limit: number): string {
  if (typeof input === "string") return truncateText(input, limit);
  try {
    return truncateText(JSON.stringify(input, null, 2) ?? "null", limit);
  } catch {
    // Only for display: an input JSON cannot print (a cycle, a BigInt) must not hide the run.
    return "(input could not be shown)";
  }
}

/** The view of one stored run; a trajectory that fails to parse still shows checks and usage. */
export function armView(result: RunResult, options: PairViewOptions = {}): ArmView {
  const limit = options.textLimit ?? EVENT_TEXT_LIMIT;
  const truncate = (text: string) => truncateText(text, limit);
  const base = {
    arm: result.arm,
    status: result.status,
    passRatio: result.passRatio,
    passed: result.passed,
    total: result.total,
    checks: result.checks.map((check) => ({
      ...check,
      ...(check.message === undefined ? {} : { message: truncate(check.message) }),
    })),
    flags: result.flags,
    flagDetails: result.flags.map((flag) => {
      const definition = flagDefinition(flag);
      return {
        id: definition.id,
        effect: definition.effect,
        label: definition.label,
        description: definition.description,
      };
    }),
    ...(result.verifier === undefined
      ? {}
      : {
          verifier: {
            ...result.verifier,
            // Canary lines are marked before any cut, so a kept line never loses its mark.
            output: verifierOutputView(result, options),
          },
        }),
    skillActivated: result.skillActivated,
    usage: result.usage,
    agentMs: result.agentMs,
    verifierMs: result.verifierMs,
    totalMs: result.totalMs,
    attempts: result.attempts,
    ...(result.trajectoryFile === undefined ? {} : { trajectoryFile: result.trajectoryFile }),
  };
  const parsed = parseTrajectory(result.trajectory);
  if (!parsed.ok) {
    return {
      ...base,
      skillsShown: [],
      events: [],
      files: [],
      shellCalls: 0,
      trajectoryProblem: parsed.error,
    };
  }
  const trajectory = parsed.value;
  const skillName = trajectory.skill?.name ?? result.skill;
  const activationIndex =
    result.arm === "with" ? findSkillActivation(trajectory.events, skillName) : undefined;
  const failedCalls = new Set(
    trajectory.events
      .filter((event) => event.type === "tool_result" && event.isError)
      .map((event) => (event as { id: string }).id),
  );
  const files: FileChange[] = [];
  let shellCalls = 0;
  const events: ViewEvent[] = trajectory.events.map((event, index) => {
    switch (event.type) {
      case "assistant_text":
        return { type: "assistant_text", text: truncate(event.text) };
      case "tool_result":
        return {
          type: "tool_result",
          id: event.id,
          output: truncate(event.output),
          isError: event.isError,
        };
      case "error":
        return { type: "error", message: truncate(event.message) };
      case "tool_call": {
        files.push(...changesOf(event, failedCalls.has(event.id)));
        if (SHELL_TOOLS.has(event.name.toLowerCase())) shellCalls += 1;
        const patch = stringField(record(event.input), "patch");
        return {
          type: "tool_call",
          id: event.id,
          name: event.name,
          input: prettyInput(event.input, limit),
          ...(event.name.toLowerCase() === "apply_patch" && patch !== undefined
            ? { patch: truncate(patch) }
            : {}),
          ...(index === activationIndex ? { activation: true as const } : {}),
        };
      }
    }
    return event;
  });
  return {
    ...base,
    // A trajectory that shows the activation wins over a stored null (older harness versions).
    skillActivated: activationIndex !== undefined ? true : result.skillActivated,
    ...(activationIndex === undefined ? {} : { activationIndex }),
    harness: trajectory.harness,
    ...(trajectory.model === undefined ? {} : { model: trajectory.model }),
    skillsShown: trajectory.skillsShown,
    skillsShownSource: trajectory.skillsShownSource,
    events,
    files: files.map((file) =>
      file.diff === undefined ? file : { ...file, diff: truncate(file.diff) },
    ),
    shellCalls,
    ...(trajectory.error === undefined ? {} : { error: truncate(trajectory.error) }),
  };
}

function refKey(ref: PairRef): string {
  return JSON.stringify([ref.config, ref.skill, ref.requirement, ref.repeat]);
}

/** Every pair of the results, in the store's order (config, skill, requirement, repeat). */
export function pairViews(
  results: readonly RunResult[],
  options: PairViewOptions = {},
): PairView[] {
  const pairs = new Map<string, { ref: PairRef; without?: ArmView; with?: ArmView }>();
  for (const result of results) {
    const ref: PairRef = {
      config: result.config,
      skill: result.skill,
      requirement: result.requirement,
      repeat: result.repeat,
    };
    // Variant arms are compared in the report's arm matrix, not in with/without pair views.
    if (result.arm !== "with" && result.arm !== "without") continue;
    const key = refKey(ref);
    const entry = pairs.get(key) ?? { ref };
    entry[result.arm] = armView(result, options);
    pairs.set(key, entry);
  }
  return [...pairs.values()]
    .map(({ ref, ...arms }) => ({ ...ref, id: pairPath(ref), ...arms }))
    .sort(
      (left, right) =>
        left.config.localeCompare(right.config) ||
        left.skill.localeCompare(right.skill) ||
        left.requirement.localeCompare(right.requirement, "en", { numeric: true }) ||
        left.repeat - right.repeat,
    );
}

/** The pair views of a run directory, read from its store (read-only). */
export function loadPairViews(runDir: string, options: PairViewOptions = {}): PairView[] {
  const store = ResultsStore.openReadOnly(runDir);
  try {
    return pairViews(store.results(), options);
  } finally {
    store.close();
  }
}

/** One pair of a run directory, or undefined when neither arm is stored. */
export function loadPairView(runDir: string, ref: PairRef): PairView | undefined {
  const store = ResultsStore.openReadOnly(runDir);
  try {
    const runs = store
      .results()
      .filter(
        (result) =>
          result.config === ref.config &&
          result.skill === ref.skill &&
          result.requirement === ref.requirement &&
          result.repeat === ref.repeat,
      );
    return pairViews(runs)[0];
  } finally {
    store.close();
  }
}
