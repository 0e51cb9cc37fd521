/**
 * `--agent`/`--model` overrides name the configuration after what ran (not the suite's id), stay
 * stable across invocations (a resumed run finds its keys), and the manifest records what each
 * renamed configuration came from. Real runs: a tiny suite, the `none` agent, a shell verifier.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportRunDir } from "../src/bench/analysis/load.js";
import { renderReportText } from "../src/bench/analysis/render.js";
import { resolveConfigurations } from "../src/bench/run/configurations.js";
import { runSuite } from "../src/bench/run/runner.js";
import { readManifest } from "../src/bench/store/manifest.js";
import { ResultsStore } from "../src/bench/store/results.js";
import { loadSuite } from "../src/bench/suite/load.js";
import { idSchema } from "../src/bench/suite/schema.js";
import type { Suite } from "../src/bench/suite/types.js";
import { runInProcess } from "./support/cli.js";
import { removeRunRoot, writeReplaySuite } from "./support/suites.js";

let root: string;
let suite: Suite;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-run-overrides-"));
  const written = await writeReplaySuite(root, { requirements: 2, verifierSleepSeconds: 0 });
  suite = await loadSuite(written.suite);
});

afterAll(async () => {
  await removeRunRoot(root);
});

describe("configurations renamed by --agent/--model", () => {
  it("are named after the agent and model that run, with where they came from", () => {
    // The suite's one configuration is `replay` (agent replay, no model).
    const cases: Array<[Parameters<typeof resolveConfigurations>[1], string]> = [
      [{ agentOverride: "claude-code" }, "claude-code.claude-sonnet-4-5"],
      [
        { agentOverride: "claude-code", modelOverride: "anthropic:claude-haiku-4-5" },
        "claude-code.claude-haiku-4-5",
      ],
      [{ agentOverride: "codex" }, "codex.gpt-5"],
      [
        {
          agentOverride: "builtin",
          modelOverride: "openai-compatible:llama3.1:8b@http://127.0.0.1:11434/v1",
        },
        "builtin.llama3.1-8b",
      ],
      [{ agentOverride: "none" }, "none"],
    ];
    for (const [overrides, id] of cases) {
      const [resolved] = resolveConfigurations(suite, overrides);
      expect(resolved?.configuration.id).toBe(id);
      expect(idSchema.safeParse(id).success).toBe(true);
      expect(resolved?.derivedFrom).toEqual({
        id: "replay",
        agent: "replay",
        overrides: {
          ...(overrides.agentOverride === undefined ? {} : { agent: overrides.agentOverride }),
          ...(overrides.modelOverride === undefined ? {} : { model: overrides.modelOverride }),
        },
      });
      // Stable: the same inputs give the same id every time (resume, queue coordinator).
      expect(resolveConfigurations(suite, overrides)[0]?.configuration.id).toBe(id);
    }
  });

  it("keep a configuration an override does not change, and tell configurations apart by id", () => {
    const [unchanged] = resolveConfigurations(suite, { agentOverride: "replay" });
    expect(unchanged).toEqual({ configuration: suite.configurations[0] });

    const limits = { timeoutSeconds: 30 };
    const two: Suite = {
      ...suite,
      configurations: [
        { id: "fast", agent: "replay", limits },
        { id: "slow", agent: "replay", limits: { timeoutSeconds: 300 } },
      ],
    };
    const ids = resolveConfigurations(two, { agentOverride: "codex" }).map(
      (item) => item.configuration.id,
    );
    expect(ids).toEqual(["codex.gpt-5.fast", "codex.gpt-5.slow"]);
    // Selecting one of them does not change its name.
    expect(
      resolveConfigurations(two, { agentOverride: "codex", configs: ["slow"] })[0]?.configuration
        .id,
    ).toBe("codex.gpt-5.slow");
  });

  it("store results under the new id, resume onto the same keys, and record the origin", async () => {
    const runDir = join(root, "run-none");
    const cacheDir = join(root, "cache");
    const options = {
      suite,
      runDir,
      cacheDir,
      agentOverride: "none",
      sandbox: "unsafe" as const,
      onWarning: () => undefined,
    };
    const first = await runSuite(options);
    expect(first).toMatchObject({ total: 4, executed: 4, alreadyDone: 0 });
    const again = await runSuite(options);
    expect(again).toMatchObject({ total: 4, executed: 0, alreadyDone: 4 });

    const store = ResultsStore.openReadOnly(runDir);
    try {
      expect(new Set(store.results().map((result) => result.config))).toEqual(new Set(["none"]));
    } finally {
      store.close();
    }
    const manifest = await readManifest(runDir);
    expect(manifest?.configurations).toEqual([
      {
        id: "none",
        agent: "none",
        limits: { timeoutSeconds: 30 },
        derivedFrom: { id: "replay", agent: "replay", overrides: { agent: "none" } },
      },
    ]);
    // `none` is registered as a control harness: its runs check the tasks and are reported as
    // controls under the new id, never as a configuration with skill verdicts.
    const report = await reportRunDir(runDir);
    expect(report.configs).toEqual([]);
    expect(report.profiles).toEqual([]);
    expect(new Set((report.controls ?? []).map((control) => control.config))).toEqual(
      new Set(["none"]),
    );
    expect(renderReportText(report).join("\n")).toContain("controls (agents that read no skill");

    // bench report takes the design recommendation's effect and power from the command line.
    const json = await runInProcess([
      "bench",
      "report",
      runDir,
      "--json",
      "--detect-effect",
      "20",
      "--target-power",
      "0.9",
    ]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).statistics).toMatchObject({
      detectEffect: 20,
      targetPower: 0.9,
    });
    const bad = await runInProcess(["bench", "report", runDir, "--target-power", "1.5"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--target-power expects a number above 0 and below 1");
  }, 120_000);
});
