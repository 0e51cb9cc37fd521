/**
 * Harbor's verifier contract: `tests/test.sh` runs after the agent and writes the outcome to
 * `/logs/verifier/reward.json` (`{"reward": 0.75}`, preferred) or `/logs/verifier/reward.txt`
 * (one number); per-test detail, when the task's pytest writes it, is a CTRF report
 * (`/logs/verifier/ctrf.json`). The reward is the run's pass ratio. A reward that is missing or
 * unreadable is the flag `reward-missing`, never a 0 that looks like a result.
 *
 * Why the agent cannot write the reward: the reward folder is a fresh host folder created for
 * each verifier execution and mounted only into the verifier's container; the agent ran in a
 * container of its own that was removed, and only the workspace (the task's working directory)
 * carries over. `reward-missing` is `verifier-side` in `flags.ts`: in one arm it scores 0, in
 * both the pair is left out of the verdict.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { CheckResult, CheckStatus } from "../../env/index.js";

export const REWARD_JSON = "reward.json";
export const REWARD_TEXT = "reward.txt";
export const CTRF_REPORT = "ctrf.json";

export type RewardReading =
  | {
      readonly kind: "reward";
      readonly value: number;
      readonly file: string;
      /** Why the value differs from what was written (clamped), when it does. */
      readonly note?: string;
    }
  | { readonly kind: "missing"; readonly detail: string };

function bounded(value: number, file: string): RewardReading {
  if (value >= 0 && value <= 1) return { kind: "reward", value, file };
  const clamped = Math.min(1, Math.max(0, value));
  return {
    kind: "reward",
    value: clamped,
    file,
    note: `${file} holds ${value}, outside 0..1: clamped to ${clamped}`,
  };
}

/**
 * The reward in a reward folder: `reward.json` when it exists (its `reward` number, or its only
 * number), else `reward.txt`. A file that exists but holds no number is `missing` with the
 * reason, and so is a JSON file of several named rewards without a `reward` key.
 */
export async function readHarborReward(folder: string): Promise<RewardReading> {
  // The code under test can write this folder: a reward file that cannot be read, for whatever
  // reason, is no reward (the run is flagged `reward-missing`), never an error of skillsmith's.
  const json = await readFile(join(folder, REWARD_JSON), "utf8").catch(() => undefined);
  if (json !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      return { kind: "missing", detail: `${REWARD_JSON} is not valid JSON` };
    }
    if (typeof value === "number" && Number.isFinite(value)) return bounded(value, REWARD_JSON);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      const entries = Object.entries(value as Record<string, unknown>);
      const reward = (value as Record<string, unknown>).reward;
      if (typeof reward === "number" && Number.isFinite(reward))
        return bounded(reward, REWARD_JSON);
      const numbers = entries.filter(
        ([, item]) => typeof item === "number" && Number.isFinite(item),
      );
      if (numbers.length === 1 && entries.length === 1)
        return bounded(numbers[0]?.[1] as number, REWARD_JSON);
      return {
        kind: "missing",
        detail: `${REWARD_JSON} has no "reward" number (keys: ${entries.map(([key]) => key).join(", ") || "none"})`,
      };
    }
    return { kind: "missing", detail: `${REWARD_JSON} holds no reward number` };
  }
  const text = await readFile(join(folder, REWARD_TEXT), "utf8").catch(() => undefined);
  if (text === undefined) {
    return {
      kind: "missing",
      detail: `the verifier wrote neither ${REWARD_JSON} nor ${REWARD_TEXT}`,
    };
  }
  const trimmed = text.trim();
  const value = Number(trimmed);
  if (trimmed === "" || !Number.isFinite(value)) {
    return {
      kind: "missing",
      detail: `${REWARD_TEXT} holds no number (${JSON.stringify(trimmed.slice(0, 40))})`,
    };
  }
  return bounded(value, REWARD_TEXT);
}

const ctrfSchema = z.object({
  results: z.object({
    tests: z.array(
      z.object({
        name: z.string(),
        status: z.string(),
        message: z.string().optional(),
      }),
    ),
  }),
});

const CTRF_STATUS: Readonly<Record<string, CheckStatus>> = {
  passed: "pass",
  failed: "fail",
  skipped: "skip",
  pending: "skip",
};

/**
 * A pass/fail list some task scaffolds write beside the reward (`{"passed": [...], "failed":
 * [...]}`, each entry a check's description), e.g. LangChain's skills-benchmarks.
 */
export const PASS_FAIL_REPORT = "_test_results.json";

const passFailSchema = z.object({
  passed: z.array(z.string()),
  failed: z.array(z.string()),
});

/** A JSON file of the reward folder, or undefined when absent, unreadable or not JSON. */
async function readJsonFile(folder: string, name: string): Promise<unknown> {
  // Written by the code under test, like the reward: unreadable is absent (see readHarborReward).
  const text = await readFile(join(folder, name), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

async function readPassFailChecks(folder: string): Promise<CheckResult[] | undefined> {
  const parsed = passFailSchema.safeParse(await readJsonFile(folder, PASS_FAIL_REPORT));
  if (!parsed.success) return undefined;
  return [
    ...parsed.data.passed.map((name) => ({ name, status: "pass" as const })),
    ...parsed.data.failed.map((name) => ({ name, status: "fail" as const })),
  ];
}

/**
 * Per-test results in the reward folder: a CTRF report, else a pass/fail list
 * (`PASS_FAIL_REPORT`); undefined when neither is there or readable.
 */
export async function readCtrfChecks(folder: string): Promise<CheckResult[] | undefined> {
  const value = await readJsonFile(folder, CTRF_REPORT);
  if (value === undefined) return readPassFailChecks(folder);
  const parsed = ctrfSchema.safeParse(value);
  if (!parsed.success) return undefined;
  return parsed.data.results.tests.map((test) => ({
    name: test.name,
    status: CTRF_STATUS[test.status] ?? "error",
    ...(test.message === undefined || test.message === "" ? {} : { message: test.message }),
  }));
}
