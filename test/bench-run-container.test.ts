/**
 * A suite run through `runSuite` with the container sandbox (Podman here, through the Docker
 * Engine API) and the replay agent, compared with the same suite in the local (bubblewrap)
 * sandbox. The verifier names each check after the host name it saw: a container has its own
 * (its id), while bubblewrap shares this machine's. (Marker files such as `/.dockerenv` cannot
 * tell them apart when this machine is itself a container: bubblewrap shows the host's `/`.)
 * So the stored checks show where the verifier ran, and the pass ratios must not depend on it.
 *
 * By hand: r1's unassisted patch writes `bad` (1 of 2 checks), the assisted one `good` (2 of 2);
 * r2 has no prediction in the unassisted arm (0 of 2) and `good` in the assisted one (2 of 2).
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore, type RunResult } from "../src/bench/store/results.js";
import type { BubblewrapSandbox } from "../src/env/sandbox/bubblewrap.js";
import { type ContainerSandbox, connectDocker } from "../src/env/sandbox/container.js";
import { availableContainerSandbox, usableBubblewrap } from "./support/sandboxes.js";
import { writeTinySuite } from "./support/suites.js";

/** Podman's (or Docker's) API with skillsmith's base image; undefined when either is missing. */
const container: ContainerSandbox | undefined = await availableContainerSandbox();

const bubblewrap = await usableBubblewrap();

let root: string;

function writePatch(file: string, content: string): string {
  return `diff --git a/${file} b/${file}\nnew file mode 100644\n--- /dev/null\n+++ b/${file}\n@@ -0,0 +1 @@\n+${content}\n`;
}

async function makeSuite(): Promise<string> {
  const suite = await writeTinySuite(root, {
    suiteYaml:
      "format: skillsmith-suite/1\nname: tiny-container\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 120 }\n",
    skillMarkdown:
      "---\nname: alpha\ndescription: Writes result files containing the word good.\n---\n\nWrite `good`.\n",
    checkScript: (k) => `file="$SKILLSMITH_WORKSPACE/result-r${k}.txt"
where=$(cat /proc/sys/kernel/hostname)
{
  echo '<testsuite name="r${k}">'
  if [ -f "$file" ]; then echo "<testcase classname=\\"r\\" name=\\"exists@$where\\"/>"; else echo "<testcase classname=\\"r\\" name=\\"exists@$where\\"><failure message=\\"missing\\"/></testcase>"; fi
  if [ "$(cat "$file" 2>/dev/null)" = good ]; then echo "<testcase classname=\\"r\\" name=\\"good@$where\\"/>"; else echo "<testcase classname=\\"r\\" name=\\"good@$where\\"><failure message=\\"not good\\"/></testcase>"; fi
  echo '</testsuite>'
} > junit.xml
`,
  });
  const predictions = join(root, "predictions.jsonl");
  await writeFile(
    predictions,
    [
      {
        skill: "alpha",
        requirement: "r1",
        arm: "without",
        patch: writePatch("result-r1.txt", "bad"),
      },
      {
        skill: "alpha",
        requirement: "r1",
        arm: "with",
        patch: writePatch("result-r1.txt", "good"),
      },
      {
        skill: "alpha",
        requirement: "r2",
        arm: "with",
        patch: writePatch("result-r2.txt", "good"),
      },
    ]
      .map((line) => JSON.stringify(line))
      .join("\n"),
  );
  return suite;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-run-container-"));
});

afterAll(async () => {
  // The environment image built for this test's base (its commit is new on every run).
  const engine = await connectDocker({ timeoutMs: 2_000 }).catch(() => undefined);
  const bases = await readdir(join(root, "cache", "bases")).catch(() => [] as string[]);
  for (const base of bases) {
    const meta = await readFile(join(root, "cache", "bases", base, "meta.json"), "utf8").catch(
      () => undefined,
    );
    const image = meta === undefined ? undefined : JSON.parse(meta).environment?.image;
    if (engine !== undefined && typeof image === "string") {
      await engine.docker
        .getImage(image)
        .remove()
        .catch(() => undefined);
    }
  }
  await rm(root, { recursive: true, force: true });
});

function storedResults(runDir: string): RunResult[] {
  const store = ResultsStore.openReadOnly(runDir);
  try {
    return [...store.results()].sort((left, right) =>
      `${left.requirement}/${left.arm}`.localeCompare(`${right.requirement}/${right.arm}`),
    );
  } finally {
    store.close();
  }
}

describe("bench run in the container sandbox", () => {
  it.skipIf(container === undefined || bubblewrap === undefined)(
    "runs the verifiers inside the container and scores exactly as the local sandbox does (needs a Docker/Podman API socket, e.g. `podman system service`, with localhost/skillsmith-base, and bubblewrap)",
    async () => {
      const suite = await makeSuite();
      const predictions = join(root, "predictions.jsonl");
      const cacheDir = join(root, "cache");
      const containerRun = join(root, "run-container");
      const containerSummary = await runSuite({
        suite,
        runDir: containerRun,
        sandbox: "container",
        predictions,
        cacheDir,
      });
      expect(containerSummary.failed).toEqual([]);
      expect(containerSummary.executed).toBe(4);
      const localRun = join(root, "run-local");
      const localSummary = await runSuite({
        suite,
        runDir: localRun,
        sandbox: bubblewrap as BubblewrapSandbox,
        predictions,
        cacheDir,
      });
      expect(localSummary.failed).toEqual([]);

      const inContainer = storedResults(containerRun);
      const local = storedResults(localRun);
      const expected = [
        ["r1", "with", 2, 2],
        ["r1", "without", 1, 2],
        ["r2", "with", 2, 2],
        ["r2", "without", 0, 2],
      ];
      const figures = (results: RunResult[]) =>
        results.map((result) => [result.requirement, result.arm, result.passed, result.total]);
      expect(figures(inContainer)).toEqual(expected);
      expect(figures(local)).toEqual(expected);
      expect(inContainer.map((result) => result.passRatio)).toEqual([1, 0.5, 1, 0]);
      expect(local.map((result) => result.passRatio)).toEqual(
        inContainer.map((result) => result.passRatio),
      );
      // Where each check ran: locally on this machine, otherwise in a container of its own.
      const places = (results: RunResult[]) =>
        new Set(
          results.flatMap((result) => result.checks.map((check) => check.name.split("@")[1])),
        );
      expect([...places(local)]).toEqual([hostname()]);
      for (const place of places(inContainer)) {
        expect(place).toMatch(/^[0-9a-f]{12}$/);
        expect(place).not.toBe(hostname());
      }
      // Same checks, same outcomes, once the place is left out.
      const outcomes = (results: RunResult[]) =>
        results.map((result) =>
          result.checks.map((check) => [check.name.split("@")[0], check.status]),
        );
      expect(outcomes(inContainer)).toEqual(outcomes(local));
      // Both arms of a pair started from the same workspace, in either sandbox.
      expect(new Set(inContainer.map((result) => result.workspaceDigest)).size).toBe(1);
    },
  );
});
