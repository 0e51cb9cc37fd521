/**
 * The agent harness interface: one versioned contract that every way of running a coding agent
 * implements (the real Claude Code and Codex CLIs, our own AI SDK loop, and the replay / none /
 * oracle controls). A harness runs one task in one workspace folder and returns a normalised,
 * versioned trajectory, whatever the agent's own log format is.
 */
import type { LanguageModel } from "ai";
import type { LimitHit, NetworkPolicy, SandboxV1 } from "../env/sandbox/types.js";

export interface AgentModel {
  /**
   * The model, as a spec string (`anthropic:claude-haiku-4-5`, `openai:gpt-5`) or a bare model id.
   * CLIs get the part after the provider prefix; a spec string is also what `builtin` resolves
   * when no `languageModel` is given.
   */
  readonly spec: string;
  /**
   * Endpoint base URL as the AI SDK takes it (`http://host/v1`). Codex's provider gets it as is;
   * Claude Code's `ANTHROPIC_BASE_URL` gets it without the trailing `/v1` (either form works).
   */
  readonly baseUrl?: string;
  /** Passed to the agent through its environment only; never stored in a trajectory. */
  readonly apiKey?: string;
  /** For `builtin`: a ready AI SDK model, which wins over `spec`. */
  readonly languageModel?: LanguageModel;
}

export interface AgentLimits {
  /** Wall-clock limit for the whole run; on expiry the process tree is killed (status `timeout`). */
  readonly timeoutMs: number;
  /** Model turns (steps) the agent may take. */
  readonly maxTurns?: number;
  /** Spending cap for agents that can enforce one (Claude Code's `--max-budget-usd`). */
  readonly budgetUsd?: number;
  /**
   * Memory cap for the agent's processes (bytes), enforced by the sandbox: the CLI harnesses'
   * whole process tree, the builtin agent's shell commands (its loop runs in this process).
   */
  readonly memoryBytes?: number;
  /** CPU cap (cores, fractions allowed) for the same processes, enforced by the sandbox. */
  readonly cpus?: number;
  /** Cap on tasks (processes and threads) of the same processes at once, enforced by the sandbox. */
  readonly maxProcesses?: number;
}

export interface AgentRunRequest {
  /** The prompt given to the agent. */
  readonly task: string;
  /** Host folder of the workspace the agent works in (read-write). */
  readonly workspace: string;
  /**
   * Folder of the skill under test (holding `SKILL.md`). The harness installs a copy where its
   * agent discovers project skills. Absent in the without-skill arm.
   */
  readonly skillPath?: string;
  /**
   * All folders of the skill under test (a suite skill may ship several Agent Skills folders);
   * when given it wins over `skillPath`. Every one is installed and removed again after the run.
   */
  readonly skillPaths?: readonly string[];
  /**
   * Leave the installed skill copy in the workspace after the run. Default false: it is removed,
   * so the workspace (and its diff) holds only the agent's changes.
   */
  readonly keepSkillInstalled?: boolean;
  readonly model: AgentModel;
  readonly limits: AgentLimits;
  readonly sandbox: SandboxV1;
  /**
   * Network inside the sandbox. Default: `loopback` when the model's base URL is on this machine,
   * `host` otherwise.
   */
  readonly network?: NetworkPolicy;
  /** Where the workspace appears inside the sandbox; default: the same path as on the host. */
  readonly workspaceMountPath?: string;
  /** Extra environment for the agent process (wins over what the harness sets, except secrets). */
  readonly env?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
  /** Identifies the task for harnesses that look answers up (replay, oracle). */
  readonly taskId?: string;
  /**
   * The arm of a paired run; default `with-skill` when a skill is requested (`skillPaths` or
   * `skillPath`), else `without-skill`.
   */
  readonly arm?: string;
}

export type TrajectoryStatus = "completed" | "timeout" | "agent_error" | "infra_error";

export type TrajectoryEvent =
  | { readonly type: "assistant_text"; readonly text: string }
  | {
      readonly type: "tool_call";
      readonly id: string;
      readonly name: string;
      readonly input: unknown;
    }
  | {
      readonly type: "tool_result";
      readonly id: string;
      readonly output: string;
      readonly isError: boolean;
    }
  | { readonly type: "error"; readonly message: string };

export interface TrajectoryUsage {
  readonly inputTokens: number;
  readonly cachedInputTokens: number;
  readonly outputTokens: number;
  /** Known only when the agent reports it (Claude Code) or a price table is applied later. */
  readonly costUsd?: number;
}

/**
 * How a harness knows which skills the model was shown:
 * - `agent-log`: the agent's own records listed them: Claude Code's `system/init` line, Codex's
 *   session file (its JSONL output does not say, the session it stores does).
 * - `system-prompt`: the harness wrote the list itself (builtin).
 * - `discovered`: the harness listed the skill folders the agent reads (the project's and the
 *   agent's own home) after the run; an over-approximation used when the agent's records are
 *   missing (some bundled skills are present but hidden from the model).
 * - `installed`: only what we installed is known.
 * - `none`: the harness offers no skills (replay, none, oracle).
 */
export type SkillsShownSource = "agent-log" | "system-prompt" | "discovered" | "installed" | "none";

/** One installed skill: its name and where its copy sat, relative to the workspace. */
export interface InstalledSkillRecord {
  readonly name: string;
  readonly installedAt: string;
}

/** A trajectory's format tag (`core/format-tag.ts`). */
export type TrajectoryFormat = "skillsmith-trajectory/1";

export interface Trajectory {
  /**
   * `skillsmith-trajectory/1` (`finishTrajectory` sets it). Trajectories of earlier versions
   * said `version: 1` instead; they are still read (`OlderTrajectory`, `parseTrajectory`).
   */
  readonly format: TrajectoryFormat;
  readonly harness: string;
  readonly model?: string;
  readonly taskId?: string;
  readonly arm?: string;
  readonly events: readonly TrajectoryEvent[];
  /**
   * The skill under test, when one was installed; with several folders, the first. Kept for
   * readers of trajectories stored before `skills` existed.
   */
  readonly skill?: InstalledSkillRecord;
  /** Every skill folder installed for the run, in installation order (absent when none). */
  readonly skills?: readonly InstalledSkillRecord[];
  readonly skillsShown: readonly string[];
  readonly skillsShownSource: SkillsShownSource;
  /**
   * True when the agent called `Skill`/`load_skill` naming an installed skill or read its
   * SKILL.md (any of `skills`).
   */
  readonly skillActivated: boolean;
  readonly usage: TrajectoryUsage;
  readonly wallTimeMs: number;
  readonly status: TrajectoryStatus;
  readonly error?: string;
  readonly exitCode?: number | null;
  /**
   * A memory or process limit the agent's process tree hit (the CLI's whole tree, or one of the
   * builtin agent's shell commands), as the sandbox reported it; the runner flags the run.
   */
  readonly limitHit?: LimitHit;
  /** The agent's own log (stdout, then stderr), with secrets redacted. */
  readonly rawLog: string;
}

export interface AgentHarnessV1 {
  readonly specificationVersion: "v1";
  readonly name: string;
  /**
   * Runs one task. Never rejects for the agent's own failure, a timeout or an unreachable model:
   * those are trajectory statuses. Rejects only for the caller's mistakes (missing workspace,
   * bad skill folder) and a missing agent binary.
   */
  run(request: AgentRunRequest): Promise<Trajectory | OlderTrajectory>;
}

/**
 * A trajectory as a harness written for an earlier skillsmith builds it: `version: 1` where a
 * trajectory now has `format`. Still returned by such harnesses; the run path reads it as the
 * current format (`currentTrajectory`).
 */
export type OlderTrajectory = Omit<Trajectory, "format"> & { readonly version: 1 };
