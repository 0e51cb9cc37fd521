/**
 * The one vocabulary of run flags: what can go wrong with a run, and what each does to the
 * verdict. Every producer (verifier, sandbox limits, integrity checks, environment set-up, the
 * verifier check) and every consumer (analysis, text/JSON/HTML reports) uses these ids, so a new
 * flag is added here once and every report shows it.
 *
 * Three effects, chosen so that nothing broken looks like a result and nothing a hostile skill
 * does can hide its own arm's failure:
 * - `zero`: the run was measured and scores 0 — the workload ran out of a limit, cheated, or did
 *   not deliver what the verifier imports. The skill's own arm cannot escape a zero by causing one.
 * - `verifier-side`: the verifier could not produce checks. In one arm only, the other arm proves
 *   the verifier works, so the failing arm's workload broke it: scored 0. In both arms the pair
 *   cannot be measured and is left out of the verdict (shown, with the verifier's output).
 * - `unmeasured`: the run says nothing about the skill (the environment could not be built, the
 *   verifier check found the verifier broken): the pair is left out of the verdict and shown.
 * - `note`: shown beside the result, changes nothing.
 */

export type FlagEffect = "zero" | "verifier-side" | "unmeasured" | "note";

export interface FlagDefinition {
  readonly id: string;
  readonly effect: FlagEffect;
  /** Short label for tables. */
  readonly label: string;
  /** One sentence for a reader of the report. */
  readonly description: string;
}

const DEFINITIONS = [
  {
    id: "agent-timeout",
    effect: "zero",
    label: "agent timeout",
    description: "The agent hit its wall-time limit; the run scores 0 (protocol A.5).",
  },
  {
    id: "timeout",
    effect: "zero",
    label: "verifier timeout",
    description: "The verifier hit its time limit on the agent's code; the run scores 0.",
  },
  {
    id: "oom",
    effect: "zero",
    label: "out of memory",
    description: "The memory limit killed the agent or the verifier; the run scores 0.",
  },
  {
    id: "process-limit",
    effect: "zero",
    label: "process limit",
    description: "The process-count limit was reached; the run scores 0.",
  },
  {
    id: "tampered",
    effect: "zero",
    label: "tampered",
    description:
      "An integrity cross-check of the verifier's outcomes failed (forged, missing or extra " +
      "tests, a canary with the wrong outcome, an exit status that disagrees); the run scores 0.",
  },
  {
    id: "deliverable-missing",
    effect: "zero",
    label: "deliverable missing",
    description:
      "The verifier could not import a module the requirement asks to create; the run scores 0.",
  },
  {
    id: "collection-error",
    effect: "verifier-side",
    label: "collection error",
    description: "The verifier crashed while collecting its checks.",
  },
  {
    id: "no-checks",
    effect: "verifier-side",
    label: "no checks",
    description: "The verifier ran but reported no checks.",
  },
  {
    id: "reward-missing",
    effect: "verifier-side",
    label: "reward missing",
    description:
      "The task's verifier wrote no readable reward file (reward.json or reward.txt); never scored as a 0 result.",
  },
  {
    id: "environment-failure",
    effect: "unmeasured",
    label: "environment failure",
    description: "The skill's environment could not be prepared; nothing was run or scored.",
  },
  {
    id: "broken-verifier",
    effect: "unmeasured",
    label: "broken verifier",
    description:
      "The verifier check found this requirement's verifier broken on the untouched repository.",
  },
  {
    id: "weak-verifier",
    effect: "note",
    label: "weak verifier",
    description:
      "The verifier already passes at least half its checks on the untouched repository.",
  },
  {
    id: "reward-file",
    effect: "note",
    label: "reward file",
    description: "The outcome was read from the task's reward file, not from per-test results.",
  },
] as const satisfies readonly FlagDefinition[];

export type RunFlag = (typeof DEFINITIONS)[number]["id"];

const BY_ID: ReadonlyMap<string, FlagDefinition> = new Map(
  DEFINITIONS.map((definition) => [definition.id, definition]),
);

export const RUN_FLAGS: readonly FlagDefinition[] = DEFINITIONS;

/**
 * The definition of a flag. A flag this version does not know (a newer writer's) is shown as
 * `unmeasured`: an unknown problem must never pass for a result.
 */
export function flagDefinition(id: string): FlagDefinition {
  return (
    BY_ID.get(id) ?? {
      id,
      effect: "unmeasured",
      label: id,
      description: `A flag this version of skillsmith does not know ("${id}").`,
    }
  );
}

function effects(flags: readonly string[]): Set<FlagEffect> {
  return new Set(flags.map((flag) => flagDefinition(flag).effect));
}

export type PairMeasurement =
  | { readonly measurable: true }
  | { readonly measurable: false; readonly reason: string; readonly flags: readonly string[] };

/**
 * Whether a with/without pair counts in the verdict, by the rules at the top of this file.
 */
export function pairMeasurement(
  withoutFlags: readonly string[],
  withFlags: readonly string[],
): PairMeasurement {
  const all = [...new Set([...withoutFlags, ...withFlags])];
  const unmeasured = all.filter((flag) => flagDefinition(flag).effect === "unmeasured");
  if (unmeasured.length > 0) {
    return {
      measurable: false,
      reason: unmeasured.map((flag) => flagDefinition(flag).label).join(", "),
      flags: unmeasured,
    };
  }
  const without = effects(withoutFlags);
  const withArm = effects(withFlags);
  if (without.has("verifier-side") && withArm.has("verifier-side")) {
    const verifierSide = all.filter((flag) => flagDefinition(flag).effect === "verifier-side");
    return {
      measurable: false,
      reason: `verifier failed in both arms (${verifierSide
        .map((flag) => flagDefinition(flag).label)
        .join(", ")})`,
      flags: verifierSide,
    };
  }
  return { measurable: true };
}

/** Whether a run's flags force its score to 0 (every effect but `note`). */
export function flagsForceZero(flags: readonly string[]): boolean {
  return flags.some((flag) => flagDefinition(flag).effect !== "note");
}

/** The flag for a sandbox limit the workload hit (`SandboxExecResult.limitHit`). */
export function flagForLimit(
  limit: "memory" | "processes" | "time",
): Extract<RunFlag, "oom" | "process-limit" | "timeout"> {
  return limit === "memory" ? "oom" : limit === "processes" ? "process-limit" : "timeout";
}
