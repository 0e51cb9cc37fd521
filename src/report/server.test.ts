import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runResult } from "../../test/support/results.js";
import { selfLoopingLink } from "../../test/support/temporary.js";
import { ResultsStore, type RunResult } from "../bench/store/results.js";
import { isSkillsmithError } from "../core/errors.js";
import { type Dashboard, isLoopbackHost, startDashboard } from "./server.js";

function result(arm: RunResult["arm"], passed: number): RunResult {
  return runResult("c", "s", "r1", arm, passed / 2, {
    passed,
    total: 2,
    checks: [
      { name: "a", status: "pass" },
      { name: "b", status: passed === 2 ? "pass" : "fail", message: "<b>no</b>" },
    ],
    trajectory: {
      version: 1,
      harness: "builtin",
      events: [{ type: "assistant_text", text: "</script><script>alert(1)</script>" }],
      skillsShown: [],
      skillsShownSource: "system-prompt",
      skillActivated: false,
      usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 },
      wallTimeMs: 1,
      status: "completed",
      rawLog: "",
    },
  });
}

let runDir: string;
let dashboard: Dashboard;

beforeAll(async () => {
  runDir = await mkdtemp(join(tmpdir(), "dashboard-"));
  const store = ResultsStore.open(runDir);
  store.recordResult(result("without", 1));
  store.recordResult(result("with", 2));
  store.close();
  dashboard = await startDashboard({ runDir });
});

afterAll(async () => {
  await dashboard?.close();
  await rm(runDir, { recursive: true, force: true });
});

describe("isLoopbackHost", () => {
  it("accepts loopback names and addresses only", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "LOCALHOST"]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ["0.0.0.0", "::", "192.168.1.2", "localhost.example.com", "128.0.0.1"]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

describe("startDashboard", () => {
  it("refuses a non-loopback host without a token, and a token unfit for a cookie", async () => {
    const noToken = await startDashboard({ runDir, host: "0.0.0.0" }).catch((error) => error);
    expect(isSkillsmithError(noToken) && noToken.code).toBe("report.view-token-required");
    const badToken = await startDashboard({ runDir, token: "short; Path=/" }).catch(
      (error) => error,
    );
    expect(isSkillsmithError(badToken) && badToken.code).toBe("report.view-token");
  });

  it("tells a missing run directory (a usage mistake) from one it cannot read", async () => {
    const missing = await startDashboard({ runDir: join(runDir, "absent") }).catch(
      (error) => error,
    );
    expect(isSkillsmithError(missing) && missing.code).toBe("report.view-no-run-dir");
    const parent = await mkdtemp(join(tmpdir(), "dashboard-loop-"));
    try {
      const loop = await selfLoopingLink(parent, "run");
      await expect(startDashboard({ runDir: loop })).rejects.toMatchObject({
        code: "core.file-unreadable",
        location: { file: loop },
      });
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it("serves the report with pair links, the state, and the pair JSON over real HTTP", async () => {
    const page = await fetch(dashboard.url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('href="/pair/c/s/r1/1"');
    expect(html).toContain('id="report-live"');

    const state = (await (await fetch(`${dashboard.url}api/state`)).json()) as {
      scored: number;
      version: string;
    };
    expect(state.scored).toBe(2);

    const pair = (await (await fetch(`${dashboard.url}api/pair/c/s/r1/1`)).json()) as {
      pair: { without: { passed: number }; with: { passed: number } };
    };
    expect([pair.pair.without.passed, pair.pair.with.passed]).toEqual([1, 2]);
    const viewer = await (await fetch(`${dashboard.url}pair/c/s/r1/1`)).text();
    // The viewer page carries no run text itself: it fetches the JSON and builds DOM nodes.
    expect(viewer).not.toContain("alert(1)");
  });

  it("changes the state version when a result is stored", async () => {
    const before = (await (await fetch(`${dashboard.url}api/state`)).json()) as {
      version: string;
    };
    const store = ResultsStore.open(runDir);
    store.recordResult({ ...result("with", 2), requirement: "r2" });
    store.close();
    const after = (await (await fetch(`${dashboard.url}api/state`)).json()) as {
      version: string;
      scored: number;
    };
    expect(after.version).not.toBe(before.version);
    expect(after.scored).toBe(3);
  });

  it("answers 404 for unknown pairs and paths and 405 for other methods", async () => {
    await expect(
      fetch(`${dashboard.url}api/pair/c/s/nope/1`).then((response) => response.status),
    ).resolves.toBe(404);
    await expect(
      fetch(`${dashboard.url}pair/only/three`).then((response) => response.status),
    ).resolves.toBe(404);
    await expect(
      fetch(`${dashboard.url}etc/passwd`).then((response) => response.status),
    ).resolves.toBe(404);
    await expect(
      fetch(dashboard.url, { method: "POST" }).then((response) => response.status),
    ).resolves.toBe(405);
  });
  it("shows flags, what was not measured and the verifier output, live", async () => {
    const broken = (arm: RunResult["arm"]): RunResult => ({
      ...result(arm, 0),
      requirement: "r9",
      passRatio: 0,
      checks: [],
      total: 0,
      flags: ["collection-error"],
      verifier: {
        output: "E   ModuleNotFoundError: No module named '<helpers>'\n1 error during collection",
        exitCode: 2,
        durationMs: 5,
      },
    });
    const store = ResultsStore.open(runDir);
    store.recordResult(broken("without"));
    store.recordResult(broken("with"));
    store.close();
    const html = await (await fetch(dashboard.url)).text();
    expect(html).toContain('data-testid="not-measured"');
    expect(html).toContain("not measured: verifier failed in both arms (collection error)");
    // The verifier's telling line, escaped: run text never becomes markup.
    expect(html).toContain("No module named &#39;&lt;helpers&gt;&#39;");
    expect(html).not.toContain("<helpers>");
    const report = (await (await fetch(`${dashboard.url}api/report`)).json()) as {
      report: { measurement: { measurable: number; pairs: number } };
    };
    // r1 measured; r2 (stored by the test above, with arm only) not run yet; r9 left out.
    expect(report.report.measurement).toMatchObject({ measurable: 1, pairs: 3 });
    const pair = (await (await fetch(`${dashboard.url}api/pair/c/s/r9/1`)).json()) as {
      pair: { with: { verifier: { output: string }; flagDetails: Array<{ label: string }> } };
    };
    expect(pair.pair.with.verifier.output).toContain("No module named '<helpers>'");
    expect(pair.pair.with.flagDetails.map((flag) => flag.label)).toEqual(["collection error"]);
  });
});
