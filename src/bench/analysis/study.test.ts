import { describe, expect, it } from "vitest";
import { runResult } from "../../../test/support/results.js";
import { signFlipByHand } from "../../../test/support/signflip.js";
import type { RunManifest } from "../store/manifest.js";
import type { RunResult } from "../store/results.js";
import { UNTREATED_REASON } from "./profile.js";
import { buildReport } from "./report.js";
import { buildStudySummary, modelName } from "./study.js";
import { renderStudyHtml, renderStudyText } from "./study-render.js";

const changed = {
  diff: "diff --git a/x b/x\n",
  length: 20,
  files: 1,
  truncated: false,
  redacted: false,
};
const untouched = { diff: "", length: 0, files: 0, truncated: false, redacted: false };

/** Both arms of `requirements` pairs, each pair (without, with) as given. */
function pairs(
  config: string,
  skill: string,
  values: ReadonlyArray<readonly [number, number]>,
  extra: Partial<RunResult> = {},
): RunResult[] {
  return values.flatMap(([without, withSkill], index) => [
    runResult(config, skill, `batch${index + 1}`, "without", without, { patch: changed, ...extra }),
    runResult(config, skill, `batch${index + 1}`, "with", withSkill, { patch: changed, ...extra }),
  ]);
}

const manifest = {
  suite: { name: "study", path: "/suite", digest: "d" },
  configurations: [
    { id: "codex-kimi", agent: "codex", model: "openai:kimi-k2.6", limits: { timeoutSeconds: 1 } },
    {
      id: "claude-kimi",
      agent: "claude-code",
      model: "anthropic:kimi-k2.6",
      limits: { timeoutSeconds: 1 },
    },
    {
      id: "claude-haiku",
      agent: "claude-code",
      model: "anthropic:claude-haiku-4-5",
      limits: { timeoutSeconds: 1 },
    },
  ],
} as unknown as RunManifest;

const ten = (without: number, withSkill: number) =>
  Array.from({ length: 10 }, () => [without, withSkill] as const);

describe("buildStudySummary", () => {
  const results = [
    // "helps": +60 points on every requirement under codex-kimi, −10 under claude-kimi.
    ...pairs("codex-kimi", "helps", ten(0.2, 0.8)),
    ...pairs("claude-kimi", "helps", ten(0.5, 0.4)),
    ...pairs("claude-haiku", "helps", ten(0.5, 0.5)),
    // "mixed": half up, half down under every configuration.
    ...pairs("codex-kimi", "mixed", [...ten(0, 1).slice(0, 5), ...ten(1, 0).slice(0, 5)]),
    ...pairs("claude-kimi", "mixed", [...ten(0, 1).slice(0, 5), ...ten(1, 0).slice(0, 5)]),
    // "few": three requirements only, all +50.
    ...pairs("codex-kimi", "few", ten(0, 0.5).slice(0, 3)),
  ];
  const report = buildReport(results, { manifest });
  const study = buildStudySummary(report);

  it("counts classes per configuration from the profiles' exact tests", () => {
    const row = (config: string) => study.configurations.find((item) => item.config === config);
    // +60 ten times: p = 2/1024 < 0.05 → Golden; −10 ten times: Harmful; 0: Ineffective.
    expect(row("codex-kimi")?.classes).toMatchObject({ golden: 1, harmful: 0, ineffective: 2 });
    expect(row("claude-kimi")?.classes).toMatchObject({ golden: 0, harmful: 1, ineffective: 1 });
    expect(row("claude-haiku")?.classes).toMatchObject({ golden: 0, harmful: 0, ineffective: 1 });
    // Pass ratios over the configuration's pairs: helps 0.2→0.8 (10), mixed 0.5→0.5 (10), few 0→0.5 (3).
    expect(row("codex-kimi")?.pairs).toBe(23);
    expect(row("codex-kimi")?.without).toBeCloseTo((10 * 0.2 + 5) / 23, 12);
    expect(row("codex-kimi")?.with).toBeCloseTo((10 * 0.8 + 5 + 1.5) / 23, 12);
    expect(row("codex-kimi")?.fewRequirements).toEqual(["few"]);
  });

  it("tests each skill overall on its requirement deltas averaged over configurations", () => {
    const helps = study.overall.skills.find((skill) => skill.skill === "helps");
    // Per requirement: mean of +60, −10 and 0 = 50/3 points, ten times.
    const deltas = Array.from({ length: 10 }, () => 50 / 3);
    expect(helps?.delta).toBeCloseTo(50 / 3, 9);
    expect(helps?.p).toBeCloseTo(signFlipByHand(deltas), 12);
    expect(helps?.class).toBe("golden");
    expect(helps?.requirements).toBe(10);
    const few = study.overall.skills.find((skill) => skill.skill === "few");
    // Three deltas: the smallest attainable p is 2^(1−3) = 0.25, so only Ineffective is possible.
    expect(few?.p).toBeCloseTo(0.25, 12);
    expect(few?.class).toBe("ineffective");
    expect(few?.fewRequirements).toMatch(/from 3 of the protocol's 10 requirements/);
    expect(study.overall.classes).toMatchObject({ golden: 1, harmful: 0, ineffective: 2 });
    // BH over the three overall p-values, computed here by the step-up rule.
    const ps = study.overall.skills.map((skill) => skill.p as number);
    const order = ps.map((p, index) => ({ p, index })).sort((left, right) => left.p - right.p);
    const q = new Array<number>(ps.length);
    let running = 1;
    for (let rank = order.length; rank >= 1; rank -= 1) {
      const item = order[rank - 1] as { p: number; index: number };
      running = Math.min(running, (item.p * order.length) / rank);
      q[item.index] = running;
    }
    study.overall.skills.forEach((skill, index) => {
      expect(skill.q).toBeCloseTo(q[index] as number, 12);
    });
  });

  it("finds sign changes only between configurations running the same model, with q beside", () => {
    expect(study.signChanges).toHaveLength(1);
    const change = study.signChanges[0];
    // The report orders configurations by id.
    expect(change?.configs).toEqual(["claude-kimi", "codex-kimi"]);
    expect(change?.model).toBe("kimi-k2.6");
    // helps (+60 / −10) changes sign; mixed (0 / 0) does not; few is only in codex-kimi.
    expect(change?.compared).toBe(2);
    expect(change?.skills.map((skill) => skill.skill)).toEqual(["helps"]);
    const profile = (config: string) =>
      report.profiles.find((item) => item.config === config && item.skill === "helps");
    expect(change?.skills[0]?.q).toEqual([profile("claude-kimi")?.q, profile("codex-kimi")?.q]);
    expect(change?.skills[0]?.delta[0]).toBeCloseTo(-10, 9);
    expect(change?.skills[0]?.delta[1]).toBeCloseTo(60, 9);
  });

  it("renders the same tables as text and as an HTML page with escaped cells", () => {
    const text = renderStudyText(study).join("\n");
    expect(text).toMatch(/codex-kimi\s+codex\s+openai:kimi-k2\.6\s+3\s+23/);
    expect(text).toMatch(
      /claude-kimi vs codex-kimi\s+kimi-k2\.6\s+2\s+1\s+helps \(-10\.00 \/ \+60\.00/,
    );
    const html = renderStudyHtml(study, "<script>x</script>");
    expect(html).not.toContain("<script>");
    expect(html).toContain("&lt;script&gt;");
    expect(html.match(/<table>/g)).toHaveLength(4);
  });

  it("keeps timeout pairs in the primary figures and removes them in the sensitivity row", () => {
    const timed = buildStudySummary(
      buildReport(
        [
          ...pairs("codex-kimi", "helps", ten(0.2, 0.8).slice(0, 9)),
          runResult("codex-kimi", "helps", "batch10", "without", 0.2, { patch: changed }),
          runResult("codex-kimi", "helps", "batch10", "with", 0, {
            patch: changed,
            status: "timeout",
            flags: ["agent-timeout"],
          }),
        ],
        { manifest },
      ),
    );
    expect(timed.timeouts.pairs).toBe(1);
    expect(timed.pooled.pairs).toBe(10);
    expect(timed.timeouts.excluded.pairs).toBe(9);
    expect(timed.timeouts.excluded.with).toBeCloseTo(0.8, 12);
    // Nine +60 deltas: p = 2/512 < 0.05, Golden without the timeout pair.
    expect(timed.timeouts.excluded.golden).toBe(1);
  });
});

describe("degenerate figures are not findings", () => {
  it("gives no class when neither arm changed the repository (--agent none)", () => {
    const results = ten(0.25, 0.5).flatMap(([without, withSkill], index) => [
      runResult("none", "s", `batch${index + 1}`, "without", without, { patch: untouched }),
      runResult("none", "s", `batch${index + 1}`, "with", withSkill, { patch: untouched }),
    ]);
    const report = buildReport(results);
    const profile = report.profiles[0];
    expect(profile?.class).toBeNull();
    expect(profile?.p).toBeNull();
    expect(profile?.detectable).toBeNull();
    expect(profile?.unscorable).toBe(UNTREATED_REASON);
    expect(report.configs[0]?.classes).toMatchObject({ golden: 0, harmful: 0, ineffective: 0 });
    // The same deltas with a change captured in one arm are a measurement again.
    const treated = buildReport(
      results.map((run) => (run.arm === "with" ? { ...run, patch: changed } : run)),
    );
    expect(treated.profiles[0]?.class).toBe("golden");
  });

  it("gives no power figure from deltas without any spread", () => {
    const report = buildReport(pairs("c", "s", ten(0.5, 0.5)));
    expect(report.profiles[0]?.class).toBe("ineffective");
    expect(report.configs[0]?.design).toBeNull();
    const spread = buildReport(pairs("c", "s", [...ten(0.5, 0.5).slice(0, 9), [0.5, 1] as const]));
    expect(spread.configs[0]?.design).not.toBeNull();
  });

  it("labels a class that rests on far fewer requirements than the protocol's ten", () => {
    const report = buildReport(pairs("c", "s", ten(0, 1).slice(0, 4)));
    expect(report.profiles[0]?.notes[0]).toMatch(
      /class from 4 of the protocol's 10 requirements \(with 4, no p below α = 0.05 is attainable/,
    );
    const enough = buildReport(pairs("c", "s", ten(0, 1).slice(0, 6)));
    expect(enough.profiles[0]?.notes.join(" ")).not.toMatch(/protocol's 10/);
  });

  it("names the check's own reason for a weak verifier", () => {
    const reason = "keyword-only: 9 of 13 tests only look for words in the source text";
    const report = buildReport(
      pairs("c", "s", ten(0, 1).slice(0, 2), { flags: ["weak-verifier"] }),
      {
        manifest: {
          suite: { name: "study", path: "/suite", digest: "d" },
          configurations: [],
          check: {
            format: "x",
            weakThreshold: 0.5,
            requirements: [
              { skill: "s", requirement: "batch1", status: "weak", untouchedPassRatio: 0, reason },
            ],
          },
        } as unknown as RunManifest,
      },
    );
    const note = report.profiles[0]?.notes.find((item) => item.startsWith("weak verifier"));
    expect(note).toContain(`batch1 (${reason})`);
    expect(note).toContain(
      "batch2 (found weak by bench check; its reason is not in this run's manifest)",
    );
  });
});

describe("modelName", () => {
  it("drops the provider and an endpoint", () => {
    expect(modelName("openai:kimi-k2.6")).toBe("kimi-k2.6");
    expect(modelName("openai-compatible:Kimi-K2.6@http://x/v1")).toBe("kimi-k2.6");
    expect(modelName("anthropic:claude-haiku-4-5")).not.toBe(modelName("openai:kimi-k2.6"));
  });
});
