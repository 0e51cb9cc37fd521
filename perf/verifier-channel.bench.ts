/**
 * What the verifier channel costs: one scored verifier run of the attack table's verifier (eight
 * pytest checks, Debian's pytest, bubblewrap) with skillsmith's channel, canaries and
 * cross-checks, against the same run read the old way (its JUnit file), in back-to-back pairs,
 * 30 of each (the overhead is the median of the pairs' differences); and the inventory, taken once per verifier (median of 10, each a verifier the memo has
 * not seen: the same files with the command written differently). The verifier's files are
 * read-only in both, so only the channel's own cost is compared. Target: a scored run costs at
 * most 300 ms more than the old way.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runSuiteVerifier, suiteVerifierInventory } from "../src/bench/run/verifier.js";
import type { SuiteVerifier } from "../src/bench/suite/types.js";
import { BubblewrapSandbox } from "../src/env/sandbox/bubblewrap.js";
import type { VerifierInventory } from "../src/env/verifier/integrity/inventory.js";
import { STUB_INIT, TEST_CALC, TEST_PACKAGE } from "../test/support/attacks.js";
import { type Benchmark, type BenchmarkRow, summarise } from "./harness.js";

const samples = 30;
const inventorySamples = 10;
const targetMs = 300;
const PYTEST =
  "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 /usr/bin/python3 -m pytest -q -p no:cacheprovider --junitxml=junit.xml test_package.py test_calc.py";

const benchmark: Benchmark = {
  name: "verifier-channel",
  async run(): Promise<BenchmarkRow[]> {
    const root = await mkdtemp(join(tmpdir(), "bench-verifier-channel-"));
    try {
      const folder = join(root, "verifier");
      await mkdir(folder);
      await writeFile(join(folder, "test_package.py"), TEST_PACKAGE);
      await writeFile(join(folder, "test_calc.py"), TEST_CALC);
      const workspace = join(root, "workspace");
      await mkdir(join(workspace, "tinycalc"), { recursive: true });
      await writeFile(join(workspace, "tinycalc", "__init__.py"), STUB_INIT);
      const sandbox = new BubblewrapSandbox();
      const verifierWith = (command: string): SuiteVerifier => ({
        command,
        folder,
        files: ["test_package.py", "test_calc.py"],
        mountPath: "/verifier",
        cwd: "/verifier",
        junit: "junit.xml",
        timeoutSeconds: 120,
      });
      const target = {
        sandbox,
        verifier: verifierWith(PYTEST),
        workspaceMountPath: "/workspace/tiny",
      };

      const inventoryTimes: number[] = [];
      let inventory: VerifierInventory | undefined;
      for (let index = 0; index < inventorySamples; index += 1) {
        const started = performance.now();
        inventory = await suiteVerifierInventory({
          ...target,
          verifier: verifierWith(`${PYTEST}${" ".repeat(index + 1)}`),
        });
        inventoryTimes.push(performance.now() - started);
      }
      if (inventory?.kind !== "pytest") throw new Error("the channel could not serve the verifier");
      const opaque: VerifierInventory = { kind: "opaque", reason: "baseline", junitChecks: 0 };

      const times: Record<"channel" | "junit", number[]> = { channel: [], junit: [] };
      for (let index = 0; index < samples; index += 1) {
        // Alternate which goes first, so machine load drifts into both equally.
        const order =
          index % 2 === 0 ? (["channel", "junit"] as const) : (["junit", "channel"] as const);
        for (const mode of order) {
          const scratch = join(root, `run-${index}-${mode}`);
          await mkdir(scratch);
          const started = performance.now();
          const result = await runSuiteVerifier({
            ...target,
            workspace,
            scratch,
            inventory: mode === "channel" ? inventory : opaque,
          });
          times[mode].push(performance.now() - started);
          if (result.passed !== 2 || result.total !== 8 || result.flags.length > 0) {
            throw new Error(
              `${mode}: expected the stub's 2/8 unflagged, got ${result.passed}/${result.total} ${result.flags}`,
            );
          }
          await rm(scratch, { recursive: true, force: true });
        }
      }
      const channel = summarise(times.channel);
      const junit = summarise(times.junit);
      // Each pair ran back to back: the median of the pairs' differences cancels load drift,
      // which the difference of two medians on a shared machine does not.
      const overhead = summarise(
        times.channel.map((time, index) => time - (times.junit[index] ?? time)),
      ).medianMs;
      return [
        {
          case: "scored run with the channel (vs JUnit)",
          medianMs: channel.medianMs,
          baselineMs: junit.medianMs,
          ratio: junit.medianMs / channel.medianMs,
          target: `≤ +${targetMs} ms`,
          met: overhead <= targetMs,
          note: `${overhead >= 0 ? "+" : ""}${overhead.toFixed(0)} ms per run (median of paired differences)`,
        },
        {
          case: "inventory (once per verifier)",
          medianMs: summarise(inventoryTimes).medianMs,
          note: "pytest collecting, nothing run",
        },
      ];
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  },
};

export default benchmark;
