/**
 * What runs need prepared once per invocation: the sandbox, each skill's prepared base (its
 * repository at the pinned commit with its environment, or an environment-only task's image)
 * and each configuration's agent harness.
 */
import { readFile } from "node:fs/promises";
import {
  type AgentHarnessV1,
  createHarness,
  harnessFacts,
  type Solution,
} from "../../agents/index.js";
import {
  createSandbox,
  type PreparedBase,
  type SandboxKind,
  type SandboxV1,
} from "../../env/index.js";
import type { RunKey } from "../store/results.js";
import type { Configuration } from "../suite/schema.js";
import type { Suite, SuiteRequirement, SuiteSkill } from "../suite/types.js";
import { prepareSkillBase } from "./environments.js";
import type { RunSuiteOptions } from "./options.js";
import type { Predictions } from "./predictions.js";

export async function openSandbox(
  kind: SandboxKind,
  onWarning?: (message: string) => void,
  /** Folders and files no workload may see (suite, run, cache, predictions), wherever they are. */
  hiddenPaths: readonly string[] = [],
): Promise<SandboxV1> {
  if (kind === "unsafe") {
    onWarning?.(
      "warning: running agents and verifiers WITHOUT a sandbox (--sandbox unsafe): they can read and write anything this user can",
    );
  }
  return kind === "local" ? createSandbox({ kind, hiddenPaths }) : createSandbox({ kind });
}

/**
 * Prepared bases of a suite's skills, each prepared once per process on first use; a failed
 * preparation is retried by the next run that needs it.
 */
export function preparedBases(
  sandbox: SandboxV1,
  cacheDir: string,
  baseImages?: Readonly<Record<string, string>>,
): (skill: SuiteSkill) => Promise<PreparedBase> {
  const bases = new Map<string, Promise<PreparedBase>>();
  return (skill) => {
    let promise = bases.get(skill.id);
    if (promise === undefined) {
      promise = prepareSkillBase(skill, {
        sandbox,
        cacheDir,
        ...(baseImages === undefined ? {} : { baseImages }),
      }).then((prepared) => prepared.base);
      bases.set(skill.id, promise);
      promise.catch(() => bases.delete(skill.id));
    }
    return promise;
  };
}

/** The harness of each configuration, built once: `harnessFor` when given, else the default. */
export function harnessesFor(
  suite: Suite,
  predictions: Predictions | undefined,
  harnessFor: RunSuiteOptions["harnessFor"],
  prices?: RunSuiteOptions["prices"],
): (configuration: Configuration) => AgentHarnessV1 {
  const harnesses = new Map<string, AgentHarnessV1>();
  return (configuration) => {
    let harness = harnesses.get(configuration.id);
    if (harness === undefined) {
      const defaults = () => defaultHarness(configuration, suite, predictions, prices);
      harness = harnessFor?.(configuration, defaults) ?? defaults();
      harnesses.set(configuration.id, harness);
    }
    return harness;
  };
}

function defaultHarness(
  configuration: Configuration,
  suite: Suite,
  predictions: Predictions | undefined,
  prices: RunSuiteOptions["prices"],
): AgentHarnessV1 {
  switch (configuration.agent) {
    case "replay":
      return createHarness("replay", {
        patchFor: ({ taskId, arm }) => {
          const [skill = "", requirement = ""] = taskId.split("/");
          return (
            predictions?.patchFor({
              config: configuration.id,
              skill,
              requirement,
              arm:
                arm === "with" || arm.startsWith("variant:") ? (arm as RunKey["arm"]) : "without",
            }) ?? ""
          );
        },
      });
    case "oracle":
      return createHarness("oracle", {
        solutionFor: (taskId) => {
          const [skillId, requirementId] = taskId.split("/");
          const requirement = suite.skills
            .find((skill) => skill.id === skillId)
            ?.requirements.find((candidate) => candidate.id === requirementId);
          return requirement === undefined
            ? undefined
            : solutionOf(
                requirement,
                suite.skills.find((skill) => skill.id === skillId),
              );
        },
      });
    default:
      // A harness that prices its own tokens (Codex) gets the run's price overrides.
      return harnessFacts(configuration.agent).takesPrices === true
        ? createHarness(configuration.agent, prices === undefined ? {} : { prices })
        : createHarness(configuration.agent);
  }
}

async function solutionOf(
  requirement: SuiteRequirement,
  skill: SuiteSkill | undefined,
): Promise<Solution | undefined> {
  const solution = requirement.solution;
  if (solution === undefined) return undefined;
  if (solution.kind === "patch") return { diff: await readFile(solution.path, "utf8") };
  if (solution.kind === "files") return { folder: solution.path };
  // A Harbor solve.sh runs in the sandbox; the network only when the task allows the internet.
  return {
    script: solution.path,
    entry: solution.entry,
    network: skill?.environment?.allowInternet === true ? "host" : "none",
  };
}
