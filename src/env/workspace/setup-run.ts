import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { InfrastructureError, UsageError } from "../../core/errors.js";
import { writeFileAtomic } from "../../core/fs.js";
import { runProcess } from "../../core/process.js";
import { cleanAgentSkillFolders } from "../../skill/install.js";
import type { SandboxV1 } from "../sandbox/types.js";
import {
  type DetectSetupOptions,
  detectSetup,
  type SetupNetwork,
  type SetupPlan,
  type SetupStep,
  SYSTEM_PATH,
} from "../setup/detect.js";
import { probePackageIndex } from "../setup/network.js";
import { pythonIndexSetupAccess } from "../setup/package-index.js";
import type { PreparedRuntime } from "../setup/runtime.js";
import {
  ENVIRONMENT_FOLDER,
  type PrepareBaseOptions,
  type SetupChoice,
  type SetupReport,
  type SetupStepOutcome,
  type StoredBase,
} from "./base.js";
import { type RepositorySource, sourceIdentity } from "./source.js";

/**
 * Running a base's setup: choose the network, then bake the steps into an image or run them
 * one by one in the sandbox over the tree, and write the setup log. `prepare.ts` calls
 * `runSetupOf` once the checkout is pinned and cleaned.
 */

const SETUP_LOG = "setup.log";

/**
 * Setup of a base failed: `data.log` holds every step's command and output, `data.steps` the
 * outcomes, so a caller can record the failure once instead of retrying it for every run.
 */
export class SetupFailedError extends InfrastructureError {
  constructor(
    message: string,
    readonly report: SetupReport,
    readonly log: string,
  ) {
    super("env.setup-failed", message, {
      data: { log, steps: report.steps, network: report.network },
    });
  }
}

const interpreters = new Map<string, Promise<string>>();

/** `path` and its `--version` (cached per process): a different interpreter is another base. */
export function interpreterIdentity(path: string): Promise<string> {
  let identity = interpreters.get(path);
  if (identity === undefined) {
    identity = runProcess(path, ["--version"], { timeoutMs: 10_000 }).then((result) =>
      result.exitCode === 0
        ? `${path} ${`${result.stdout}${result.stderr}`.trim()}`
        : `${path} (missing)`,
    );
    interpreters.set(path, identity);
  }
  return identity;
}

export interface SetupParts {
  tree: string;
  source: RepositorySource;
  commit: string;
  recipe: SetupChoice;
  mountPath: string;
  options: PrepareBaseOptions;
}

interface BuiltSetup {
  setup: SetupPlan | undefined;
  setupReport?: SetupReport;
  runtime?: PreparedRuntime;
  environment?: StoredBase["environment"];
  removedSkillFolders: string[];
}

/**
 * Detect (or take) the setup plan, decide the network, and run it: as an image layer when the
 * sandbox builds images, else step by step in the sandbox over the tree, with the environment
 * folder beside the tree mounted read-write at its fixed path.
 */
export async function runSetupOf(parts: SetupParts): Promise<BuiltSetup> {
  const { tree, recipe, options } = parts;
  if (recipe.kind === "none") return { setup: undefined, removedSkillFolders: [] };
  const log = (line: string) => options.onLog?.(line);
  const target = options.sandbox?.prepare === undefined ? "tree" : "image";
  const unsafe = options.sandbox?.kind === "unsafe";
  // The folder beside the tree; renamed into place with it, so the final path is known now.
  const environmentHost = join(tree, "..", ENVIRONMENT_FOLDER);
  const detectOptions = detectOptionsOf(parts, target, unsafe ? environmentHost : undefined);
  const first = await detectSetup(tree, { ...detectOptions, network: "online" });
  const { network, networkReason } = await chooseNetwork(options, first);
  const setup =
    network === "online" ? first : await detectSetup(tree, { ...detectOptions, network });
  log(`setup ${network} (${networkReason})`);
  for (const reason of setup.reasons) log(`  ${reason}`);
  const index = indexAccessOf(parts, setup, network);
  if (index !== undefined) log(`  ${index.note}`);
  const started = performance.now();

  if (target === "image" && options.sandbox?.prepare !== undefined) {
    // Image-based backends bake setup into an image built once per key; the host tree stays as
    // checked out and every run's workspace is mounted over the image's copy.
    const path = [...(setup.environment?.binPaths ?? []), SYSTEM_PATH].join(":");
    for (const step of setup.steps) log(`  $ ${step.command}   (image layer)`);
    if ((index?.folders.length ?? 0) > 0) {
      log(`  an image build sees no host folder: pip's local indexes are not reachable there`);
    }
    const prepared = await options.sandbox.prepare({
      workspace: tree,
      workspaceMountPath: parts.mountPath,
      cacheKey: `${sourceIdentity(parts.source)}@${parts.commit}`,
      recipe: {
        baseImage: setup.baseImage,
        commands: setup.steps.map(imageCommand),
        env: {
          ...(setup.environment?.setupEnv ?? {}),
          ...index?.env,
          ...options.setupEnv,
          PATH: path,
        },
      },
      network: network === "online" ? "host" : "none",
      onLog: (line) => log(line.trimEnd()),
    });
    log(`  image ${prepared.image} on ${prepared.baseImage}`);
    for (const note of prepared.notes) log(`  ${note}`);
    return {
      setup,
      setupReport: {
        network,
        networkReason,
        target: "image",
        steps: [],
        durationMs: performance.now() - started,
        notes: prepared.notes,
      },
      ...(setup.environment === undefined
        ? {}
        : {
            runtime: {
              binPaths: setup.environment.binPaths,
              env: setup.environment.runEnv,
            },
          }),
      environment: { image: prepared.image, baseImage: prepared.baseImage, notes: prepared.notes },
      removedSkillFolders: [],
    };
  }

  const outcomes: SetupStepOutcome[] = [];
  const interpreter =
    setup.python === undefined ? undefined : await interpreterIdentity(setup.python.interpreter);
  const report = (): SetupReport => ({
    network,
    networkReason,
    target: "tree",
    steps: [...outcomes],
    durationMs: performance.now() - started,
    ...(interpreter === undefined ? {} : { interpreter }),
    notes: [],
  });
  if (setup.steps.length > 0) {
    if (options.sandbox === undefined) {
      throw new UsageError(
        "env.setup-needs-sandbox",
        `setup has ${setup.steps.length} command(s) to run but no sandbox was given to run them in`,
      );
    }
    if (setup.environment !== undefined) await mkdir(environmentHost, { recursive: true });
    for (const step of setup.steps) {
      log(`  $ ${step.command}`);
      const outcome = await runStep(step, parts, setup, {
        environmentHost,
        network,
        unsafe,
        index,
      });
      outcomes.push(outcome);
      if (outcome.outcome !== "ok") {
        log(
          `  ${outcome.outcome === "failed" ? "FAILED" : outcome.outcome === "skipped" ? "optional step failed, skipped" : "failed; fallback"}: exit ${outcome.exitCode ?? "none"}${outcome.timedOut ? " (timed out)" : ""}${outcome.fallback === undefined ? "" : ` → ${outcome.fallback.outcome}`}`,
        );
      }
      if (outcome.outcome === "failed") {
        const text = formatSetupLog(report());
        // Summaries print the message's first line only: it ends with the output's last line.
        const lastLine = outcome.outputTail.trimEnd().split("\n").pop()?.trim() ?? "";
        throw new SetupFailedError(
          `setup command \`${step.command}\` ${outcome.timedOut ? "timed out" : `failed with exit code ${outcome.exitCode}`} (setup ${network})${lastLine === "" ? "" : `: ${lastLine}`}\n${outcome.outputTail}`,
          report(),
          text,
        );
      }
    }
  }
  // Setup must not smuggle skills in (e.g. a dependency that ships a .claude/skills folder).
  const removedSkillFolders = (
    await cleanAgentSkillFolders(tree, parts.options.skillFolders ?? [])
  ).map((path) => path.slice(tree.length + 1));
  const finalReport = report();
  await writeFileAtomic(join(tree, "..", SETUP_LOG), formatSetupLog(finalReport));
  return {
    setup: await withMirrorCommits(setup, (path) =>
      unsafe || setup.environment === undefined
        ? path
        : join(environmentHost, relative(setup.environment.path, path)),
    ),
    setupReport: finalReport,
    ...(setup.environment === undefined
      ? {}
      : {
          runtime: {
            ...(unsafe
              ? {}
              : {
                  mount: { hostPath: ENVIRONMENT_FOLDER, sandboxPath: setup.environment.path },
                }),
            binPaths: setup.environment.binPaths,
            env: setup.environment.runEnv,
          },
        }),
    removedSkillFolders,
  };
}

/**
 * The plan with the commit each git mirror's ref resolved to when setup cloned it, for the
 * manifest: what code a verifier's install builds. A mirror that is not there keeps none.
 */
async function withMirrorCommits(
  setup: SetupPlan,
  hostPath: (sandboxPath: string) => string,
): Promise<SetupPlan> {
  if (!setup.caches?.some((cache) => cache.installs.some((entry) => entry.mirrors))) return setup;
  const caches = [];
  for (const cache of setup.caches) {
    const installs = [];
    for (const entry of cache.installs) {
      if (entry.mirrors === undefined) {
        installs.push(entry);
        continue;
      }
      const mirrors = [];
      for (const mirror of entry.mirrors) {
        const resolved = await runProcess("git", [
          "--git-dir",
          hostPath(mirror.path),
          "rev-parse",
          "--verify",
          "--quiet",
          `${mirror.ref ?? "HEAD"}^{commit}`,
        ]);
        const commit = resolved.stdout.trim();
        mirrors.push(resolved.exitCode === 0 && commit !== "" ? { ...mirror, commit } : mirror);
      }
      installs.push({ ...entry, mirrors });
    }
    caches.push({ ...cache, installs });
  }
  return { ...setup, caches };
}

/** The network setup runs with: the caller's flag, or what the package index's probe answers. */
async function chooseNetwork(
  options: SetupParts["options"],
  first: SetupPlan,
): Promise<{ network: SetupNetwork; networkReason: string }> {
  const choice = options.setupNetwork ?? "auto";
  if (choice === "on") {
    return { network: "online", networkReason: "--setup-network: setup uses the network" };
  }
  if (choice === "off") {
    return {
      network: "offline",
      networkReason: "--no-setup-network: setup uses only what is already present",
    };
  }
  const probe = await (
    options.probeNetwork ??
    ((language) =>
      probePackageIndex(
        language,
        options.pythonIndex === undefined ? {} : { pythonIndex: options.pythonIndex },
      ))
  )(
    // A repository of no known ecosystem whose verifiers run Python installs only with pip.
    first.language === "unknown" && first.python !== undefined ? "python" : first.language,
  );
  const network = probe.reachable ? "online" : "offline";
  return { network, networkReason: `${probe.detail}: setup runs ${network}` };
}

/** What detection is told of the base: the recipe, mount path, interpreter and verifiers' needs. */
function detectOptionsOf(
  parts: SetupParts,
  target: "tree" | "image",
  hostEnvironmentPath: string | undefined,
): DetectSetupOptions {
  const { recipe, options } = parts;
  return {
    ...(recipe.kind === "commands" ? { commands: recipe.commands } : {}),
    workspaceMountPath: parts.mountPath,
    ...(options.pythonInterpreter === undefined
      ? {}
      : { pythonInterpreter: options.pythonInterpreter }),
    ...(options.verifierNeedsPython === true ? { verifierNeedsPython: true } : {}),
    ...(options.testTimeInstalls === undefined
      ? {}
      : { testTimeInstalls: options.testTimeInstalls }),
    target: target === "image" ? "image" : "host",
    // Without a mount namespace the environment cannot appear at a fixed path: it is used where
    // it is on the host.
    ...(hostEnvironmentPath === undefined ? {} : { environmentPath: hostEnvironmentPath }),
  };
}

/** A step as one image-layer command: optional steps and fallbacks keep the build going. */
function imageCommand(step: SetupStep): string {
  const note = (what: string) =>
    `echo ${JSON.stringify(`skillsmith setup: ${what}: ${step.command}`)} >&2`;
  if (step.fallback !== undefined) {
    return `{ ${step.command}; } || { ${note("failed, running the fallback")}; ${imageCommand(step.fallback)}; }`;
  }
  if (step.optional === true)
    return `{ ${step.command}; } || ${note("optional step failed, skipped")}`;
  return step.command;
}

const OUTPUT_TAIL_LINES = 40;

/** Where setup's pip finds the user's indexes: their variables and local folders. */
interface IndexAccess {
  readonly env: Record<string, string>;
  readonly folders: readonly string[];
  /** For the setup log. */
  readonly note: string;
}

/**
 * The user's pip indexes for an online setup that runs pip (a Python environment): handed to
 * setup's steps only, never to runs, which install from the environment's wheels alone.
 */
function indexAccessOf(
  parts: SetupParts,
  setup: SetupPlan,
  network: SetupNetwork,
): IndexAccess | undefined {
  const configuration = parts.options.pythonIndex;
  if (network !== "online" || setup.python === undefined || configuration === undefined) {
    return undefined;
  }
  const access = pythonIndexSetupAccess(configuration);
  if (Object.keys(access.env).length === 0) return undefined;
  // A folder that is not there cannot be mounted (the sandbox would not start); pip warns of it.
  access.folders = access.folders.filter((folder) => existsSync(folder));
  return {
    ...access,
    note: `pip indexes of the user (${configuration.sources.join("; ")}), for setup only${access.folders.length === 0 ? "" : `; local folders mounted read-only: ${access.folders.join(", ")}`}`,
  };
}

interface StepContext {
  readonly environmentHost: string;
  readonly network: SetupNetwork;
  readonly unsafe: boolean;
  readonly index: IndexAccess | undefined;
}

async function runStep(
  step: SetupStep,
  parts: SetupParts,
  setup: SetupPlan,
  context: StepContext,
): Promise<SetupStepOutcome> {
  const { environmentHost, network, unsafe, index } = context;
  const { options } = parts;
  const sandbox = options.sandbox as SandboxV1;
  const environment = setup.environment;
  const timeoutMs = Math.min(
    step.timeoutSeconds === undefined ? Number.POSITIVE_INFINITY : step.timeoutSeconds * 1000,
    options.setupTimeoutMs ?? 30 * 60_000,
  );
  const result = await sandbox.exec({
    command: ["sh", "-c", step.command],
    workspace: parts.tree,
    workspaceMountPath: parts.mountPath,
    network: network === "online" ? "host" : "none",
    limits: { timeoutMs },
    env: {
      ...(environment?.setupEnv ?? {}),
      ...index?.env,
      ...options.setupEnv,
      PATH: [...(environment?.binPaths ?? []), SYSTEM_PATH].join(":"),
    },
    ...(unsafe
      ? {}
      : {
          extraMounts: [
            ...(environment === undefined
              ? []
              : [{ hostPath: environmentHost, sandboxPath: environment.path, readOnly: false }]),
            ...(index?.folders ?? []).map((folder) => ({
              hostPath: folder,
              sandboxPath: folder,
              readOnly: true,
            })),
          ],
        }),
  });
  const output = `${result.stdout}\n${result.stderr}`.trim();
  const outcome: SetupStepOutcome = {
    command: step.command,
    why: step.why,
    outcome: "ok",
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    outputTail: output.split("\n").slice(-OUTPUT_TAIL_LINES).join("\n"),
  };
  if (result.exitCode === 0 && !result.timedOut) return outcome;
  if (step.fallback !== undefined) {
    const fallback = await runStep(step.fallback, parts, setup, context);
    return { ...outcome, outcome: fallback.outcome === "ok" ? "fell-back" : "failed", fallback };
  }
  return { ...outcome, outcome: step.optional === true ? "skipped" : "failed" };
}

/** The setup log as a person reads it: the decision, then each step with its output. */
export function formatSetupLog(report: SetupReport): string {
  const lines = [
    `setup ${report.network} (${report.networkReason}), ${Math.round(report.durationMs)} ms`,
    ...(report.interpreter === undefined ? [] : [`interpreter: ${report.interpreter}`]),
    ...report.notes,
  ];
  const describe = (step: SetupStepOutcome, indent: string) => {
    lines.push(
      `${indent}$ ${step.command}`,
      `${indent}  # ${step.why}`,
      `${indent}  → ${step.outcome} (exit ${step.exitCode ?? "none"}${step.timedOut ? ", timed out" : ""}, ${Math.round(step.durationMs)} ms)`,
    );
    if (step.outcome !== "ok" && step.outputTail !== "") {
      lines.push(...step.outputTail.split("\n").map((line) => `${indent}  | ${line}`));
    }
    if (step.fallback !== undefined) describe(step.fallback, `${indent}  `);
  };
  for (const step of report.steps) describe(step, "");
  return `${lines.join("\n")}\n`;
}
