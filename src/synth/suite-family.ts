/**
 * A bench suite as a task family: every requirement of every skill is a task. Target-visible:
 * the requirement's Background, Requirement, File Operations and Acceptance Criteria — what an
 * agent is shown in protocol A, acceptance criteria included. Evaluator-only: the verifier (its
 * command and test files), which the agent never sees in protocol A either. The solver is a
 * coding agent harness (builtin by default) working in a fresh workspace materialised from the
 * repository at its pinned commit; its answer is the diff it leaves, and scoring applies that
 * diff to another fresh workspace and runs the suite's verifier through the bench verifier runner.
 */

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LanguageModelMiddleware, wrapLanguageModel } from "ai";
import { type AgentHarnessV1, createHarness } from "../agents/index.js";
import {
  loadSuite,
  runSuiteVerifier,
  type SuiteRequirement,
  type SuiteSkill,
} from "../bench/index.js";
import { parseUnifiedDiff } from "../core/diff.js";
import { InfrastructureError, UnsupportedError } from "../core/errors.js";
import { runProcess } from "../core/process.js";
import {
  defaultCacheDir,
  materialiseWorkspace,
  type PreparedBase,
  prepareBase,
  type RepositorySource,
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

function repositorySource(skill: SuiteSkill): RepositorySource {
  const source = skill.repository?.source;
  switch (source?.kind) {
    case "url":
      return { kind: "git-url", url: source.url };
    case "path":
      return { kind: "local-path", path: source.path };
    case "bundle":
      return { kind: "bundle", path: source.path };
    default:
      throw new UnsupportedError(
        "synth.suite.no-repository",
        `skill "${skill.id}" has no repository (an image-only environment): the suite task family needs a repository to materialise workspaces from`,
      );
  }
}

export class SuiteTaskFamily implements TaskFamilyV1 {
  readonly specificationVersion = "v1" as const;
  readonly visibleFields = suiteVisibleFields;
  readonly hiddenFields = ["verifier"] as const;
  name = "suite";
  description = "Requirements of a bench suite, solved by a coding agent in the repository.";
  private readonly byId = new Map<string, { skill: SuiteSkill; requirement: SuiteRequirement }>();
  private readonly bases = new Map<string, Promise<PreparedBase>>();
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
      repositorySource(skill);
      for (const requirement of skill.requirements) {
        const id = `${skill.id}/${requirement.id}`;
        this.byId.set(id, { skill, requirement });
        const verifierFiles: string[] = [];
        for (const file of requirement.verifier.files)
          verifierFiles.push(
            `# ${file}\n${await readFile(join(requirement.verifier.folder, file), "utf8").catch(() => "")}`,
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
        "synth.suite.unknown-task",
        `task "${id}" is not in the loaded suite (call loadTasks first)`,
      );
    return found;
  }

  private base(skill: SuiteSkill): Promise<PreparedBase> {
    let pending = this.bases.get(skill.id);
    if (pending === undefined) {
      const repository = skill.repository;
      pending = prepareBase({
        source: repositorySource(skill),
        commit: repository?.commit ?? "",
        setup:
          repository !== undefined && repository.setup.length > 0
            ? { kind: "commands", commands: repository.setup }
            : { kind: "detect" },
        sandbox: this.options.sandbox,
        cacheDir: this.options.cacheDir ?? defaultCacheDir(),
        ...(repository === undefined ? {} : { workspaceMountPath: repository.mountPath }),
      });
      this.bases.set(skill.id, pending);
      pending.catch(() => this.bases.delete(skill.id));
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
    const base = await this.base(skill);
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
        sandbox: this.options.sandbox,
        taskId: task.id,
        arm: "synth",
        ...(signal === undefined ? {} : { signal }),
      });
      if (trajectory.status === "infra_error")
        throw new InfrastructureError(
          "synth.suite.agent-infra",
          `the agent run for ${task.id} was lost to infrastructure: ${trajectory.error ?? "no detail"}`,
        );
      const output = await this.diff(workspace.path);
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

  /** Everything the agent changed, untracked files included, as one binary-safe diff. */
  private async diff(workspace: string): Promise<string> {
    const add = await runProcess("git", ["add", "-A"], { cwd: workspace, timeoutMs: 60_000 });
    if (add.exitCode !== 0)
      throw new InfrastructureError("synth.suite.diff", `git add failed: ${add.stderr.trim()}`);
    const diff = await runProcess("git", ["diff", "--cached", "--binary", "--no-color", "HEAD"], {
      cwd: workspace,
      timeoutMs: 60_000,
      maxOutputBytes: 8 * 1024 * 1024,
    });
    if (diff.exitCode !== 0)
      throw new InfrastructureError("synth.suite.diff", `git diff failed: ${diff.stderr.trim()}`);
    return diff.stdout;
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
    const base = await this.base(skill);
    const workspace = await materialiseWorkspace(base);
    const scratch = await mkdtemp(join(tmpdir(), "skillsmith-synth-suite-"));
    try {
      if (output.trim() !== "") {
        const applied = await runProcess("git", ["apply", "--whitespace=nowarn", "-"], {
          cwd: workspace.path,
          input: output,
          timeoutMs: 60_000,
        });
        if (applied.exitCode !== 0)
          return { score: 0, passed: 0, total: 0, flags: ["patch-does-not-apply"], checks: [] };
      }
      const limits = skill.environment?.limits;
      const result = await runSuiteVerifier({
        sandbox: this.options.sandbox,
        verifier: {
          ...requirement.verifier,
          ...(requirement.verifier.timeoutSeconds === undefined &&
          limits?.commandTimeoutSeconds !== undefined
            ? { timeoutSeconds: limits.commandTimeoutSeconds }
            : {}),
        },
        workspace: workspace.path,
        workspaceMountPath: workspace.mountPath,
        scratch,
        ...(base.environment === undefined ? {} : { image: base.environment.image }),
        ...(limits?.memoryMb === undefined ? {} : { memoryBytes: limits.memoryMb * 1024 * 1024 }),
        ...(limits?.cpus === undefined ? {} : { cpus: limits.cpus }),
        ...(signal === undefined ? {} : { signal }),
      });
      return attemptScoreOf(result);
    } finally {
      await rm(scratch, { recursive: true, force: true });
      await workspace.dispose();
    }
  }
}
