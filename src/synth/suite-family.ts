/**
 * A bench suite as a task family: every requirement of every skill is a task. Target-visible:
 * the requirement's Background, Requirement, File Operations and Acceptance Criteria — what an
 * agent is shown in protocol A, acceptance criteria included. Evaluator-only: the verifier (its
 * command and test files), which the agent never sees in protocol A either. The solver is a
 * coding agent harness (builtin by default) working in a fresh workspace materialised from the
 * repository at its pinned commit; its answer is the diff it leaves, and scoring applies that
 * diff to another fresh workspace and runs the suite's verifier through the bench verifier runner.
 */

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type LanguageModelMiddleware, wrapLanguageModel } from "ai";
import { type AgentHarnessV1, createHarness } from "../agents/index.js";
import {
  captureWorkspacePatch,
  loadSuite,
  prepareSkillBase,
  type SuiteRequirement,
  type SuiteSkill,
  verifyCandidate,
} from "../bench/index.js";
import { applyDiff } from "../core/apply-diff.js";
import { parseUnifiedDiff } from "../core/diff.js";
import { InfrastructureError, UnsupportedError } from "../core/errors.js";
import {
  defaultCacheDir,
  materialiseWorkspace,
  type PreparedBase,
  type SandboxV1,
} from "../env/index.js";
import { formatModelSpec, type ModelClient } from "../model/index.js";
import { renderSolverContext } from "./answers.js";
import { suiteReactPreambleV1, suiteTaskV1 } from "./baseline-prompts.js";
import {
  type AttemptScore,
  attemptScoreOf,
  type FamilyTask,
  ScoreMemo,
  type SelfCheckResult,
  type SolverAttempt,
  type SolverContext,
  type SolveSettings,
  type Split,
  seededSplit,
  type TaskFamilyV1,
  type VisibleTask,
} from "./family.js";
import { fillPrompt } from "./prompts.js";
import { roleTemperatures } from "./settings.js";

export interface SuiteFamilyOptions {
  /** The suite folder (`suite.yaml` inside). */
  readonly directory: string;
  readonly sandbox: SandboxV1;
  /** The coding agent: the builtin AI SDK loop over the run's model by default. */
  readonly harness?: AgentHarnessV1;
  /** Where prepared bases and workspaces live; skillsmith's cache folder by default. */
  readonly cacheDir?: string;
  /** Agent turns per attempt; default 30. */
  readonly maxTurns?: number;
  /** Agent wall clock per attempt; default the skill's `agentLimits.timeoutSeconds`, else 600 s. */
  readonly timeoutMs?: number;
}

export const suiteVisibleFields = [
  "background",
  "requirement",
  "fileOperations",
  "acceptanceCriteria",
] as const;

const headings: Readonly<Record<string, string>> = {
  background: "Background",
  requirement: "Requirement",
  fileOperations: "File Operations",
  acceptanceCriteria: "Acceptance Criteria",
};

/** The visible fields as the requirement document the agent reads (sections in protocol order). */
export function renderRequirement(task: VisibleTask): string {
  return Object.entries(task.fields)
    .filter(([, value]) => value.trim() !== "")
    .map(([name, value]) => `## ${headings[name] ?? name}\n\n${value.trim()}`)
    .join("\n\n");
}

const list = (items: readonly string[]): string => items.map((item) => `- ${item}`).join("\n");

/** Paths a unified diff creates or changes (a deleted file by its old path; `core/diff.ts`). */
export function pathsInDiff(diff: string): string[] {
  return parseUnifiedDiff(diff).map((file) => file.path);
}

/** Verdicts per (sandbox kind, suite, task, diff), shared by every suite family of the process. */
const scoreMemo = new ScoreMemo();

function requireRepository(skill: SuiteSkill): void {
  if (skill.repository === undefined)
    throw new UnsupportedError(
      "synth.suite-no-repository",
      `skill "${skill.id}" has no repository (an image-only environment): the suite task family needs a repository to materialise workspaces from`,
    );
}

/** A skill's prepared base and the sandbox inside its environment. */
interface PreparedEnvironment {
  readonly base: PreparedBase;
  readonly sandbox: SandboxV1;
}

export class SuiteTaskFamily implements TaskFamilyV1 {
  readonly specificationVersion = "v1" as const;
  readonly visibleFields = suiteVisibleFields;
  readonly hiddenFields = ["verifier"] as const;
  name = "suite";
  description = "Requirements of a bench suite, solved by a coding agent in the repository.";
  private readonly byId = new Map<string, { skill: SuiteSkill; requirement: SuiteRequirement }>();
  private readonly environments = new Map<string, Promise<PreparedEnvironment>>();
  private readonly harness: AgentHarnessV1;

  constructor(private readonly options: SuiteFamilyOptions) {
    this.harness = options.harness ?? createHarness("builtin");
  }

  async loadTasks(): Promise<readonly FamilyTask[]> {
    const suite = await loadSuite(this.options.directory);
    this.name = `suite-${suite.name}`;
    this.description = `Requirements of the bench suite "${suite.name}" (${suite.skills.map((skill) => skill.id).join(", ")}): a coding agent changes a repository; hidden verifier tests score the change.`;
    const tasks: FamilyTask[] = [];
    for (const skill of suite.skills) {
      requireRepository(skill);
      for (const requirement of skill.requirements) {
        const id = `${skill.id}/${requirement.id}`;
        this.byId.set(id, { skill, requirement });
        const verifierFiles: string[] = [];
        for (const file of requirement.verifier.files)
          verifierFiles.push(
            // The suite loader checked the file is there: a read failure now is worth stopping for.
            `# ${file}\n${await readFile(join(requirement.verifier.folder, file), "utf8")}`,
          );
        tasks.push({
          id,
          fields: {
            background: requirement.background,
            requirement: requirement.requirement,
            fileOperations: list(requirement.fileOperations),
            acceptanceCriteria: list(requirement.acceptanceCriteria),
          },
          hidden: { verifier: `$ ${requirement.verifier.command}\n${verifierFiles.join("\n")}` },
        });
      }
    }
    return tasks;
  }

  /** Half of each skill's requirements (rounded up) to train, so both splits cover every skill. */
  split(tasks: readonly FamilyTask[], split: Split, seed: number): readonly FamilyTask[] {
    return seededSplit(tasks, split, seed, { groupOf: (task) => task.id.split("/")[0] ?? "" });
  }

  private entry(id: string): { skill: SuiteSkill; requirement: SuiteRequirement } {
    const found = this.byId.get(id);
    if (found === undefined)
      throw new InfrastructureError(
        "synth.suite-unknown-task",
        `task "${id}" is not in the loaded suite (call loadTasks first)`,
      );
    return found;
  }

  /**
   * The skill's prepared base and the sandbox inside its environment, prepared once per family
   * the way `bench run` prepares it (`prepareSkillBase`).
   */
  private environment(skill: SuiteSkill): Promise<PreparedEnvironment> {
    let pending = this.environments.get(skill.id);
    if (pending === undefined) {
      requireRepository(skill);
      pending = prepareSkillBase(skill, {
        sandbox: this.options.sandbox,
        cacheDir: this.options.cacheDir ?? defaultCacheDir(),
      });
      this.environments.set(skill.id, pending);
      pending.catch(() => this.environments.delete(skill.id));
    }
    return pending;
  }

  async solve(
    model: ModelClient,
    task: VisibleTask,
    context: SolverContext,
    signal?: AbortSignal,
    settings: SolveSettings = {},
  ): Promise<SolverAttempt> {
    return this.runAgent(model, task, renderSolverContext(context), signal, settings);
  }

  /** ReAct: the agent's own tool loop (act, observe), asked to reason before every action. */
  async solveReact(
    model: ModelClient,
    task: VisibleTask,
    context: SolverContext,
    signal?: AbortSignal,
  ): Promise<SolverAttempt> {
    return this.runAgent(
      model,
      task,
      `${suiteReactPreambleV1}${renderSolverContext(context)}`,
      signal,
      {},
    );
  }

  /**
   * Best-of-N selection without the verifier: the share of the requirement's File Operations
   * paths the candidate's diff creates or changes (a visible field). Ties are left to the caller.
   */
  async selfCheck(
    _model: ModelClient,
    task: VisibleTask,
    outputs: readonly string[],
  ): Promise<SelfCheckResult> {
    const wanted = (task.fields.fileOperations ?? "")
      .split("\n")
      .map((line) =>
        line
          .replace(/^-\s*/, "")
          .replace(/^\.?\//, "")
          .trim(),
      )
      .filter((line) => line !== "");
    const scores = outputs.map((output) => {
      const touched = new Set(pathsInDiff(output));
      if (wanted.length === 0) return touched.size > 0 ? 1 : 0;
      return wanted.filter((path) => touched.has(path)).length / wanted.length;
    });
    return {
      scores,
      criterion: "share of File Operations paths the diff touches",
      inputTokens: 0,
      outputTokens: 0,
      calls: 0,
    };
  }

  private async runAgent(
    model: ModelClient,
    task: VisibleTask,
    context: string,
    signal: AbortSignal | undefined,
    settings: SolveSettings,
  ): Promise<SolverAttempt> {
    const { skill } = this.entry(task.id);
    const { base, sandbox } = await this.environment(skill);
    const workspace = await materialiseWorkspace(base);
    try {
      let calls = 0;
      const sampling: LanguageModelMiddleware = {
        specificationVersion: "v3",
        // The solver runs at temperature 0 unless a method samples; the harness sets none itself.
        transformParams: async ({ params }) => ({
          ...params,
          temperature: settings.temperature ?? roleTemperatures.solver,
          ...(settings.seed === undefined ? {} : { seed: settings.seed }),
        }),
      };
      const languageModel = wrapLanguageModel({
        model: await model.languageModel("solver", () => {
          calls += 1;
        }),
        middleware: sampling,
      });
      const trajectory = await this.harness.run({
        task: fillPrompt(suiteTaskV1, { context, task: renderRequirement(task) }),
        workspace: workspace.path,
        workspaceMountPath: workspace.mountPath,
        model: {
          spec: formatModelSpec(model.spec),
          languageModel,
          ...(model.settings.baseUrl === undefined ? {} : { baseUrl: model.settings.baseUrl }),
          ...(model.settings.apiKey === undefined ? {} : { apiKey: model.settings.apiKey }),
        },
        limits: {
          timeoutMs: this.options.timeoutMs ?? (skill.agentLimits?.timeoutSeconds ?? 600) * 1000,
          maxTurns: this.options.maxTurns ?? 30,
        },
        sandbox,
        taskId: task.id,
        arm: "synth",
        ...(signal === undefined ? {} : { signal }),
      });
      if (trajectory.status === "infra_error")
        throw new InfrastructureError(
          "synth.suite-agent-infra",
          `the agent run for ${task.id} was lost to infrastructure: ${trajectory.error ?? "no detail"}`,
        );
      // Captured the way `bench run` captures a run's patch: the workspace's own `.git` (which
      // the agent can rewrite, hooks and fsmonitor included) is never used by a host git.
      const patch = await captureWorkspacePatch(base.tree, workspace);
      if (patch.truncated)
        throw new InfrastructureError(
          "synth.suite-diff-too-large",
          `the agent's change for ${task.id} is larger than ${patch.diff.length} characters and cannot be scored`,
        );
      const output = patch.diff;
      const steps = trajectory.events.flatMap((event) =>
        event.type === "tool_call"
          ? [`act: ${event.name} ${JSON.stringify(event.input).slice(0, 200)}`]
          : event.type === "tool_result"
            ? [`observe: ${event.output.slice(0, 200)}`]
            : [],
      );
      return {
        output,
        inputTokens: trajectory.usage.inputTokens,
        outputTokens: trajectory.usage.outputTokens,
        calls,
        steps: [`status: ${trajectory.status}`, ...steps],
      };
    } finally {
      await workspace.dispose();
    }
  }

  /** One verifier run per (task, diff): deterministic verifiers give the same verdict again. */
  async score(task: FamilyTask, output: string, signal?: AbortSignal): Promise<AttemptScore> {
    return scoreMemo.score(
      [this.options.sandbox.kind, this.options.directory, task.id, output],
      () => this.scoreUncached(task, output, signal),
    );
  }

  private async scoreUncached(
    task: FamilyTask,
    output: string,
    signal?: AbortSignal,
  ): Promise<AttemptScore> {
    const { skill, requirement } = this.entry(task.id);
    const { base, sandbox } = await this.environment(skill);
    const verification = await verifyCandidate({
      sandbox,
      skill,
      requirement,
      base,
      putInPlace: async (workspace) => {
        if (output.trim() === "") return undefined;
        const applied = await applyDiff(workspace, output);
        return applied.ok ? undefined : applied.message;
      },
      ...(signal === undefined ? {} : { signal }),
    });
    if (verification.kind === "not-in-place")
      return { score: 0, passed: 0, total: 0, flags: ["patch-does-not-apply"], checks: [] };
    return attemptScoreOf(verification.run);
  }
}
