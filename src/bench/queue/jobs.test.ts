import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../core/errors.js";
import type { PlannedRun } from "../run/plan.js";
import type { SuiteRequirement, SuiteSkill } from "../suite/types.js";
import {
  jobDataFor,
  jobIdOf,
  parseQueueResult,
  parseRateLimit,
  QUEUE_RESULT_FORMAT,
  queueJobSchema,
  rateLimitGroupOf,
} from "./jobs.js";

const run: PlannedRun = {
  key: { config: "sonnet", skill: "alpha", requirement: "r1", arm: "with", repeat: 2 },
  configuration: {
    id: "sonnet",
    agent: "claude-code",
    model: "anthropic:claude-sonnet-4-5",
    limits: { timeoutSeconds: 600 },
  },
  // The job carries names, not the loaded suite: these fields are never read.
  skill: {} as SuiteSkill,
  requirement: {} as SuiteRequirement,
};

const inputs = {
  runId: "0123456789abcdef01234567",
  suite: { path: "/suites/tiny", digest: "d1" },
  predictions: { path: "/suites/predictions.jsonl", digest: "d2" },
  sandbox: "local" as const,
  maxAttempts: 3,
  priorAttempts: 1,
};

describe("job data", () => {
  it("carries the base URL of the endpoint but never its API key", () => {
    const secret = "sk-ant-api03-coordinator-only";
    const data = jobDataFor(run, {
      ...inputs,
      endpoint: { baseUrl: "https://gateway.internal/v1", apiKey: secret },
    });
    const text = JSON.stringify(data);
    expect(text).not.toContain(secret);
    expect(text).not.toMatch(/apiKey/i);
    expect(data.endpoint).toEqual({ baseUrl: "https://gateway.internal/v1" });
    expect(data.key).toEqual(run.key);
    expect(data.configuration.model).toBe("anthropic:claude-sonnet-4-5");
    expect(queueJobSchema.safeParse(data).success).toBe(true);
  });

  it("is refused by workers when an API key was put into it anyway", () => {
    const data = { ...jobDataFor(run, inputs), endpoint: { baseUrl: "http://x", apiKey: "k" } };
    expect(queueJobSchema.safeParse(data).success).toBe(false);
  });

  it("has no endpoint at all when the configuration has none", () => {
    expect("endpoint" in jobDataFor(run, inputs)).toBe(false);
  });
});

describe("jobIdOf", () => {
  it("is the run key inside the run's namespace, with BullMQ's forbidden colon escaped", () => {
    expect(jobIdOf("abc0123456789def", run.key)).toBe("abc0123456789def/sonnet/alpha/r1/with#2");
    expect(jobIdOf("abc0123456789def", { ...run.key, config: "a:b", requirement: "50%" })).toBe(
      "abc0123456789def/a%3Ab/alpha/50%25/with#2",
    );
  });
});

describe("rate-limit groups", () => {
  it("groups by provider and model; agents without a model by agent", () => {
    expect(rateLimitGroupOf(run.configuration)).toBe("anthropic.claude-sonnet-4-5");
    expect(rateLimitGroupOf({ id: "r", agent: "replay", limits: { timeoutSeconds: 1 } })).toBe(
      "replay",
    );
    // Without a model, the agent's default model decides the group.
    expect(rateLimitGroupOf({ id: "c", agent: "codex", limits: { timeoutSeconds: 1 } })).toBe(
      "openai.gpt-5",
    );
  });

  it("parses --rate-limit into the same group and a window in milliseconds", () => {
    expect(parseRateLimit("anthropic:claude-sonnet-4-5=30/60s")).toEqual({
      group: "anthropic.claude-sonnet-4-5",
      limit: { max: 30, durationMs: 60_000 },
    });
    expect(parseRateLimit("openai:gpt-5=5/1.5")).toEqual({
      group: "openai.gpt-5",
      limit: { max: 5, durationMs: 1500 },
    });
    for (const bad of ["anthropic:x", "anthropic:x=0/60s", "anthropic:x=3/0s", "=3/60s"]) {
      expect(() => parseRateLimit(bad)).toThrow(UsageError);
    }
  });
});

describe("parseQueueResult", () => {
  it("accepts a worker's outcome and rejects anything else", () => {
    const ok = parseQueueResult({
      format: QUEUE_RESULT_FORMAT,
      infraAttempts: [],
      outcome: { kind: "failed", attempts: 3, error: "endpoint unreachable" },
    });
    expect(ok.ok).toBe(true);
    const bad = parseQueueResult({
      format: QUEUE_RESULT_FORMAT,
      infraAttempts: [],
      outcome: {
        kind: "scored",
        result: { ...run.key, status: "infra_error", passRatio: 1, attempts: 1 },
      },
    });
    expect(bad.ok).toBe(false);
    expect(parseQueueResult("junk").ok).toBe(false);
  });
});

describe("job data of format 2", () => {
  it("carries base images, prices, setup network and variants, and a worker accepts them", () => {
    const data = jobDataFor(run, {
      ...inputs,
      baseImages: { "ubuntu:24.04": "localhost/skillsmith-base:bookworm" },
      prices: { "openai:gpt-5": { input: 2, output: 20 } },
      setupNetwork: "off",
      variants: [
        { skill: "alpha", name: "v2", folder: "/skills/alpha-v2", digest: "a".repeat(64) },
      ],
      reuseCandidates: ["b".repeat(64)],
    });
    const parsed = queueJobSchema.safeParse(data);
    expect(parsed.success).toBe(true);
    expect(parsed.data?.baseImages).toEqual({
      "ubuntu:24.04": "localhost/skillsmith-base:bookworm",
    });
    expect(parsed.data?.prices).toEqual({ "openai:gpt-5": { input: 2, output: 20 } });
    expect(parsed.data?.setupNetwork).toBe("off");
    expect(parsed.data?.variants?.[0]?.folder).toBe("/skills/alpha-v2");
    expect(parsed.data?.reuse).toEqual({ candidates: ["b".repeat(64)] });
  });

  it("is refused by a worker of format 1, which would drop the new fields silently", () => {
    const data = { ...jobDataFor(run, inputs), format: "skillsmith-queue-job/1" };
    expect(queueJobSchema.safeParse(data).success).toBe(false);
  });

  // Attacks: whoever writes to Redis crafts the job.
  it.each([
    [
      "a base image that ends the FROM line and adds a RUN",
      { "ubuntu:24.04": "x\nRUN cat /etc/shadow" },
    ],
    ["a base image with a space", { "ubuntu:24.04": "localhost/a --network=host" }],
    ["a FROM image with a newline", { "ubuntu\nRUN id": "localhost/a" }],
  ])("refuses %s", (_, baseImages) => {
    const data = { ...jobDataFor(run, inputs), baseImages };
    expect(queueJobSchema.safeParse(data).success).toBe(false);
  });

  it.each([
    ["a relative variant folder", { name: "v2", folder: "../alpha", digest: "a".repeat(64) }],
    ["a variant without a full digest", { name: "v2", folder: "/skills/v2", digest: "abc" }],
    [
      "a variant name that is a path",
      { name: "../v2", folder: "/skills/v2", digest: "a".repeat(64) },
    ],
  ])("refuses %s", (_, variant) => {
    const data = { ...jobDataFor(run, inputs), variants: [variant] };
    expect(queueJobSchema.safeParse(data).success).toBe(false);
  });

  it("refuses a price that carries anything but numbers (a key put beside it)", () => {
    const prices = { "openai:gpt-5": { input: 1, output: 1, apiKey: "sk-x" } };
    expect(queueJobSchema.safeParse({ ...jobDataFor(run, inputs), prices }).success).toBe(false);
  });
});

describe("fingerprints in results", () => {
  const inputsOfRun = { skillsmith: "1", sandbox: "local", skills: [] };
  // The digest as `fingerprint.ts` computes it: SHA-256 of the canonical JSON, by hand here.
  const digest = createHash("sha256")
    .update('{"sandbox":"local","skills":[],"skillsmith":"1"}')
    .digest("hex");
  const resultWith = (fingerprint: unknown) => ({
    format: QUEUE_RESULT_FORMAT,
    infraAttempts: [],
    outcome: {
      kind: "scored",
      result: { ...run.key, status: "completed", passRatio: 1, attempts: 1, fingerprint },
    },
  });

  it("accepts a fingerprint whose digest is the hash of its inputs", () => {
    expect(parseQueueResult(resultWith({ digest, inputs: inputsOfRun })).ok).toBe(true);
    expect(
      parseQueueResult({
        format: QUEUE_RESULT_FORMAT,
        infraAttempts: [],
        outcome: { kind: "reusable", fingerprint: { digest, inputs: inputsOfRun } },
      }).ok,
    ).toBe(true);
  });

  it("refuses one whose inputs were changed after hashing (a later --reuse would trust it)", () => {
    const forged = { digest, inputs: { ...inputsOfRun, sandbox: "unsafe" } };
    expect(parseQueueResult(resultWith(forged)).ok).toBe(false);
    expect(
      parseQueueResult({
        format: QUEUE_RESULT_FORMAT,
        infraAttempts: [],
        outcome: { kind: "reusable", fingerprint: forged },
      }).ok,
    ).toBe(false);
  });
});
