/**
 * The SWE-Skills-Bench study preset end to end, offline: the v1 data imported with `--study`
 * (the paper's four configurations and protocol) and `--repo-root` on the bundled repositories,
 * two configurations on one model run on pypa/packaging with recorded patches (the replay
 * harness stands in for Codex and Claude Code, so no key or network is needed), and
 * `bench report --study` printing the paper's summary tables from that run directory.
 * Needs ../shared/fixtures/swe-skills-bench-v1, ../shared/fixtures/repos, bubblewrap and
 * Debian's python3 with pytest.
 *
 * The expected pass ratios are the hand-measured ones of test/bench-v1-real.test.ts: on
 * python-packaging batch1 the demo-only patch passes 4 of 11 checks, demo plus tests 11 of 11.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ReplayHarness } from "../src/agents/replay.js";
import { importSweSkillsBench, runSuite } from "../src/bench/index.js";
import { runProcess } from "../src/core/process.js";
import { runInProcess } from "./support/cli.js";
import { usableBubblewrap } from "./support/sandboxes.js";
import { removeRunRoot } from "./support/suites.js";
import { demo as demoPatch, edgeCases } from "./support/v1-patches.js";

const shared = resolve(import.meta.dirname, "..", "..", "shared", "fixtures");
const dataset = join(shared, "swe-skills-bench-v1");
const repos = join(shared, "repos");
const hasData =
  existsSync(join(dataset, "config", "benchmark_config.yaml")) &&
  existsSync(join(repos, "pypa-packaging.bundle"));
const hasBubblewrap = (await usableBubblewrap()) !== undefined;
const hasPytest =
  existsSync("/usr/bin/python3") &&
  (await runProcess("/usr/bin/python3", ["-c", "import pytest"])).exitCode === 0;

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-study-"));
});
afterAll(async () => {
  await removeRunRoot(root);
});

describe.skipIf(!hasData)("bench import swe-skills-bench --study (needs the v1 data)", () => {
  it("writes the paper's four configurations and protocol into suite.yaml", async () => {
    const result = await runInProcess(
      [
        "bench",
        "import",
        "swe-skills-bench",
        dataset,
        "--repo-root",
        repos,
        "--study",
        "--out",
        join(root, "suite"),
        "--json",
      ],
      { cwd: root, env: { ...process.env, SKILLSMITH_CACHE_DIR: join(root, "cache") } },
    );
    expect(result.code, result.stderr).toBe(0);
    const suite = parseYaml(await readFile(join(root, "suite", "suite.yaml"), "utf8")) as {
      configurations: { id: string; agent: string; model: string; endpoint?: unknown }[];
      protocol: Record<string, unknown>;
    };
    // The paper (§4.1): Codex with GPT-5.4-mini or Kimi-K2.6, Claude Code with Kimi-K2.6 or Haiku 4.5.
    expect(suite.configurations.map((item) => [item.agent, item.model])).toEqual([
      ["codex", "openai:gpt-5.4-mini"],
      ["codex", "openai:kimi-k2.6"],
      ["claude-code", "anthropic:kimi-k2.6"],
      // Anthropic's model page lists the dated id; the snapshot keeps reruns on one model.
      ["claude-code", "anthropic:claude-haiku-4-5-20251001"],
    ]);
    // Protocol A.5–A.6: one run per arm, timeouts scored zero, α 0.05, ten requirements.
    expect(suite.protocol).toMatchObject({
      repeats: 1,
      alpha: 0.05,
      requirementsPerSkill: 10,
      timeouts: "score-zero",
    });
  });
});

describe.skipIf(!hasData || !hasBubblewrap || !hasPytest)(
  "the study's summary tables from a replayed run on pypa/packaging (needs bubblewrap and python3-pytest)",
  () => {
    it("reports classes, pass ratios and a sign change between two harnesses on Kimi, with q", async () => {
      const suite = join(root, "suite-run");
      await importSweSkillsBench(dataset, { out: suite, repoRoot: repos, study: true });
      const runDir = join(root, "run");
      // Codex's recorded with-arm adds the tests, Claude Code's without-arm does: opposite signs.
      const helped = "codex-kimi-k2.6";
      await runSuite({
        suite,
        runDir,
        selection: { requirements: ["python-packaging/batch1"] },
        configs: [helped, "claude-code-kimi-k2.6"],
        sandbox: "local",
        setupNetwork: "off",
        cacheDir: join(root, "cache"),
        harnessFor: (configuration) =>
          new ReplayHarness({
            patchFor: ({ arm }) =>
              (configuration.id === helped) === (arm === "with")
                ? demoPatch + edgeCases
                : demoPatch,
          }),
      });
      const result = await runInProcess(["bench", "report", runDir, "--study", "--json"], {
        cwd: root,
        env: { ...process.env },
      });
      expect(result.code, result.stderr).toBe(0);
      const study = JSON.parse(result.stdout) as {
        configurations: { config: string; pairs: number; without: number; with: number }[];
        overall: { skills: { skill: string; delta: number; fewRequirements?: string }[] };
        signChanges: {
          model: string;
          count: number;
          compared: number;
          skills: { skill: string; delta: number[]; q: number[] }[];
        }[];
      };
      const row = (config: string) => study.configurations.find((item) => item.config === config);
      expect(row(helped)).toMatchObject({ pairs: 1 });
      expect(row(helped)?.without).toBeCloseTo(4 / 11, 9);
      expect(row(helped)?.with).toBeCloseTo(1, 9);
      expect(row("claude-code-kimi-k2.6")?.without).toBeCloseTo(1, 9);
      expect(row("claude-code-kimi-k2.6")?.with).toBeCloseTo(4 / 11, 9);
      expect(study.signChanges).toHaveLength(1);
      expect(study.signChanges[0]).toMatchObject({ model: "kimi-k2.6", compared: 1, count: 1 });
      const change = study.signChanges[0]?.skills[0];
      expect(change?.skill).toBe("python-packaging");
      expect(change?.delta.map(Math.abs)[0]).toBeCloseTo((100 * 7) / 11, 6);
      expect(change?.q).toHaveLength(2);
      // One requirement of the protocol's ten: the class is labelled, not presented as a finding.
      expect(study.overall.skills[0]?.fewRequirements).toMatch(/from 1 of the protocol's 10/);

      const text = await runInProcess(["bench", "report", runDir, "--study"], {
        cwd: root,
        env: { ...process.env },
      });
      expect(text.stdout).toMatch(/Skills whose Δ changes sign/);
      expect(text.stdout).toMatch(/codex-kimi-k2\.6\s+codex\s+openai:kimi-k2\.6/);
    }, 600_000);
  },
);
