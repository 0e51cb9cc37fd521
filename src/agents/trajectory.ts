import { z } from "zod";
import { formatTag } from "../core/format-tag.js";
import { formatTagSchema, readingOlderTags } from "../core/format-tag-schema.js";
import { parseResult } from "../core/parse.js";
import { err, ok, type Result } from "../core/result.js";
import type {
  InstalledSkillRecord,
  OlderTrajectory,
  Trajectory,
  TrajectoryEvent,
  TrajectoryFormat,
  TrajectoryUsage,
} from "./types.js";

export const emptyUsage: TrajectoryUsage = {
  inputTokens: 0,
  cachedInputTokens: 0,
  outputTokens: 0,
};

export function addUsage(left: TrajectoryUsage, right: Partial<TrajectoryUsage>): TrajectoryUsage {
  const costUsd =
    left.costUsd === undefined && right.costUsd === undefined
      ? undefined
      : (left.costUsd ?? 0) + (right.costUsd ?? 0);
  return {
    inputTokens: left.inputTokens + (right.inputTokens ?? 0),
    cachedInputTokens: left.cachedInputTokens + (right.cachedInputTokens ?? 0),
    outputTokens: left.outputTokens + (right.outputTokens ?? 0),
    ...(costUsd === undefined ? {} : { costUsd }),
  };
}

/** Tools whose call names a skill to load (Claude Code's `Skill`, our `load_skill`). */
const SKILL_TOOLS: ReadonlySet<string> = new Set(["skill", "load_skill"]);
/** Tools that write files: mentioning a SKILL.md there is authoring, not reading. */
const WRITING_TOOLS: ReadonlySet<string> = new Set([
  "write",
  "edit",
  "multiedit",
  "write_file",
  "edit_file",
  "notebookedit",
]);

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function stringsIn(value: unknown, found: string[] = []): string[] {
  if (typeof value === "string") found.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsIn(item, found);
  else if (value !== null && typeof value === "object")
    for (const item of Object.values(value)) stringsIn(item, found);
  return found;
}

/**
 * Whether the agent activated the skill `skillName`: a skill-loading tool call naming it (the
 * plugin-qualified form `plugin:name` included), or any non-writing tool call whose input mentions
 * `<name>/SKILL.md` (a `Read`, a `read_file`, a shell `cat`). Every harness uses this one rule so
 * activation means the same thing across agents. Returns the index of the first such event.
 */
export function findSkillActivation(
  events: readonly TrajectoryEvent[],
  skillName: string,
): number | undefined {
  const readPattern = new RegExp(`(^|[/\\\\\\s'"=])${escapeRegExp(skillName)}[/\\\\]SKILL\\.md\\b`);
  for (const [index, event] of events.entries()) {
    if (event.type !== "tool_call") continue;
    const name = event.name.toLowerCase();
    if (SKILL_TOOLS.has(name)) {
      const input = event.input as Record<string, unknown> | null;
      const named = [input?.skill, input?.name, input?.command].filter(
        (value): value is string => typeof value === "string",
      );
      if (named.some((value) => value === skillName || value.endsWith(`:${skillName}`))) {
        return index;
      }
    }
    if (WRITING_TOOLS.has(name)) continue;
    if (stringsIn(event.input).some((text) => readPattern.test(text))) return index;
  }
  return undefined;
}

export function isSkillActivated(events: readonly TrajectoryEvent[], skillName: string): boolean {
  return findSkillActivation(events, skillName) !== undefined;
}

/** What a harness collected; `finishTrajectory` derives activation and fills defaults. */
export type TrajectoryDraft = Omit<Trajectory, "format" | "skillActivated">;

export const TRAJECTORY_FORMAT = formatTag("trajectory", 1) satisfies TrajectoryFormat;

/** A harness's trajectory in the current format: an older harness's `version: 1` read as it. */
export function currentTrajectory(trajectory: Trajectory | OlderTrajectory): Trajectory {
  if (!("version" in trajectory)) return trajectory;
  const { version: _version, ...rest } = trajectory;
  return { format: TRAJECTORY_FORMAT, ...rest };
}

/** Every installed skill a trajectory names: `skills`, else the single `skill` of older ones. */
export function installedSkillsOf(
  trajectory: Pick<Trajectory, "skill" | "skills">,
): readonly InstalledSkillRecord[] {
  return trajectory.skills ?? (trajectory.skill === undefined ? [] : [trajectory.skill]);
}

export function finishTrajectory(draft: TrajectoryDraft): Trajectory {
  return {
    format: TRAJECTORY_FORMAT,
    ...draft,
    skillActivated: installedSkillsOf(draft).some((skill) =>
      isSkillActivated(draft.events, skill.name),
    ),
  };
}

const eventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("assistant_text"), text: z.string() }),
  z.object({ type: z.literal("tool_call"), id: z.string(), name: z.string(), input: z.unknown() }),
  z.object({
    type: z.literal("tool_result"),
    id: z.string(),
    output: z.string(),
    isError: z.boolean(),
  }),
  z.object({ type: z.literal("error"), message: z.string() }),
]);

const currentTrajectorySchema = z.object({
  format: formatTagSchema(TRAJECTORY_FORMAT),
  harness: z.string(),
  model: z.string().exactOptional(),
  taskId: z.string().exactOptional(),
  arm: z.string().exactOptional(),
  events: z.array(eventSchema),
  skill: z.object({ name: z.string(), installedAt: z.string() }).exactOptional(),
  skills: z.array(z.object({ name: z.string(), installedAt: z.string() })).exactOptional(),
  skillsShown: z.array(z.string()),
  skillsShownSource: z.enum(["agent-log", "system-prompt", "discovered", "installed", "none"]),
  skillActivated: z.boolean(),
  usage: z.object({
    inputTokens: z.number(),
    cachedInputTokens: z.number(),
    outputTokens: z.number(),
    costUsd: z.number().exactOptional(),
  }),
  wallTimeMs: z.number(),
  status: z.enum(["completed", "timeout", "agent_error", "infra_error"]),
  error: z.string().exactOptional(),
  exitCode: z.number().nullable().exactOptional(),
  limitHit: z
    .object({ limit: z.enum(["memory", "processes", "time"]), detail: z.string() })
    .exactOptional(),
  rawLog: z.string(),
});

/** Stored trajectories of earlier versions said `version: 1`. */
const trajectorySchema = readingOlderTags(currentTrajectorySchema, TRAJECTORY_FORMAT, [
  { style: "version", version: 1 },
]);

/** Reads a stored trajectory back (e.g. from a results store) without trusting its shape. */
export function parseTrajectory(value: unknown): Result<Trajectory, string> {
  const parsed = parseResult(trajectorySchema, value);
  if (parsed.ok) return ok(parsed.value);
  return err(`trajectory ${parsed.error.field ?? ""}: ${parsed.error.message}`);
}
