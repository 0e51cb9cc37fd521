/**
 * Layer 7 (issue 26): a run whose only evidence is the patch scan is `suspicious`. It keeps its
 * score, but its skill's verdict is "needs review" in text, JSON and HTML, never Golden, until
 * `skillsmith bench review` records a person's decision: accepted, the verdict stands; rejected,
 * the run is scored as tampered.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ResultsStore, type RunResult } from "../src/bench/store/results.js";
import { runInProcess } from "./support/cli.js";
import { runResult } from "./support/results.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const cleanups = cleanupsAfterEach();

async function withTemporaryDirectory(test: (runDir: string) => Promise<void>): Promise<void> {
  await test(await temporaryDirectoryIn(cleanups, "skillsmith-review-"));
}

const FINDING = {
  file: "calc/__init__.py",
  line: 3,
  rule: "introspection",
  detail: "uses sys._getframe",
};
const SUSPICIOUS_KEY = "c/hack/q1/with#1";

/** Six requirements, 0 without and 1 with the skill: Golden (p = 1/32) on the numbers alone. */
function goldenRuns(): RunResult[] {
  return Array.from({ length: 6 }, (_, index) => [
    runResult("c", "hack", `q${index + 1}`, "without", 0),
    runResult("c", "hack", `q${index + 1}`, "with", 1, {
      ...(index === 0
        ? {
            patch: {
              diff: "…",
              length: 1,
              files: 1,
              truncated: false,
              redacted: false,
              scan: [FINDING],
            },
          }
        : {}),
    }),
  ]).flat();
}

function writeRuns(runDir: string, runs: readonly RunResult[]): void {
  const store = ResultsStore.open(runDir);
  try {
    for (const run of runs) store.recordResult(run);
  } finally {
    store.close();
  }
}

interface JsonProfile {
  readonly class: string | null;
  readonly review?: { readonly heldClass: string | null; readonly runs: readonly string[] };
}

async function reportJson(runDir: string): Promise<{
  profiles: JsonProfile[];
  configs: { classes: Record<string, number> }[];
  review?: { pending: number; accepted: number; rejected: number };
}> {
  const run = await runInProcess(["bench", "report", runDir, "--json"]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout);
}

describe("bench review: suspicious runs hold their skill's verdict", () => {
  it("shows needs review in text, JSON and HTML until accepted, and lists the evidence", async () => {
    await withTemporaryDirectory(async (runDir) => {
      writeRuns(runDir, goldenRuns());
      const held = await reportJson(runDir);
      expect(held.profiles[0]?.class).toBeNull();
      expect(held.profiles[0]?.review).toEqual({
        status: "needs-review",
        heldClass: "golden",
        heldClassFdr: "golden",
        runs: [SUSPICIOUS_KEY],
      });
      expect(held.configs[0]?.classes).toMatchObject({ golden: 0, needsReview: 1 });
      expect(held.review).toMatchObject({ pending: 1, accepted: 0, rejected: 0 });

      const text = await runInProcess(["bench", "report", runDir]);
      expect(text.stdout).toContain("needs review (statistics: golden)");
      expect(text.stdout).toContain("scan: calc/__init__.py:3 introspection: uses sys._getframe");
      const html = join(runDir, "report.html");
      expect((await runInProcess(["bench", "report", runDir, "--html", html])).code).toBe(0);
      const page = await readFile(html, "utf8");
      expect(page).toContain("Needs review (statistics: Golden)");
      expect(page).toContain('data-testid="needs-review"');

      const listed = await runInProcess(["bench", "review", runDir]);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain(
        `${SUSPICIOUS_KEY} [pending] score 100.0%, holds the verdict`,
      );
      expect(listed.stdout).toContain("scan: calc/__init__.py:3 introspection: uses sys._getframe");

      const accepted = await runInProcess(["bench", "review", runDir, "--accept", "all"]);
      expect(accepted.code).toBe(0);
      expect(accepted.stdout).toContain(`${SUSPICIOUS_KEY} [accepted `);
      const stored = JSON.parse(await readFile(join(runDir, "review.json"), "utf8"));
      expect(stored.format).toBe("skillsmith-review/1");
      expect(stored.decisions[0]).toMatchObject({ key: SUSPICIOUS_KEY, decision: "accept" });
      const after = await reportJson(runDir);
      expect(after.profiles[0]?.class).toBe("golden");
      expect(after.profiles[0]?.review).toBeUndefined();
      expect(after.review).toMatchObject({ pending: 0, accepted: 1 });
    });
  });

  it("scores a rejected run as tampered, so the skill is no longer Golden", async () => {
    await withTemporaryDirectory(async (runDir) => {
      writeRuns(runDir, goldenRuns());
      const rejected = await runInProcess(["bench", "review", runDir, "--reject", SUSPICIOUS_KEY]);
      expect(rejected.code).toBe(0);
      const report = await reportJson(runDir);
      // Five pairs of +100 and one of 0: p = 2/32, not below 0.05.
      expect(report.profiles[0]?.class).not.toBe("golden");
      expect(report.profiles[0]?.review).toBeUndefined();
      const text = await runInProcess(["bench", "report", runDir]);
      expect(text.stdout).toContain("tampered");
    });
  });

  it("refuses an unknown run key and a damaged review file, naming them", async () => {
    await withTemporaryDirectory(async (runDir) => {
      writeRuns(runDir, goldenRuns());
      const unknown = await runInProcess([
        "bench",
        "review",
        runDir,
        "--accept",
        "c/hack/q9/with#1",
      ]);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain("c/hack/q9/with#1: no suspicious run with that key");
      expect(unknown.stderr).toContain(SUSPICIOUS_KEY);

      await writeFile(
        join(runDir, "review.json"),
        '{"format":"skillsmith-review/1","decisions":[{"key":1}]}',
      );
      const damaged = await runInProcess(["bench", "report", runDir]);
      expect(damaged.code).not.toBe(0);
      expect(damaged.stderr).toContain("review.json");
      expect(damaged.stderr).not.toContain("    at ");
    });
  });

  it("does not hold a verdict for a run already flagged tampered or a clean one", async () => {
    await withTemporaryDirectory(async (runDir) => {
      const runs = goldenRuns().map((run) =>
        run.patch === undefined ? run : { ...run, flags: ["tampered"], passRatio: 0 },
      );
      writeRuns(runDir, runs);
      const report = await reportJson(runDir);
      expect(report.profiles[0]?.review).toBeUndefined();
      expect(report.review).toBeUndefined();
      const listed = await runInProcess(["bench", "review", runDir]);
      expect(listed.stdout).toContain("no suspicious runs");
    });
  });
});
