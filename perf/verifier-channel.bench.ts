/**
 * What the verifier channel and its integrity layers cost per scored run: one run of the attack
 * table's verifier (eight pytest checks) in three ways, back to back in rotating order, 30 of
 * each, the overheads being medians of the paired differences (load drift cancels in a pair, not
 * across two medians):
 *
 * - plain pytest: the verifier's command in the same sandbox, its folder mounted, nothing of
 *   skillsmith's (no plugin, no copy, no read-only mounts, no canaries);
 * - the JUnit way: skillsmith's verifier layout (a fresh copy, its files read-only), scored from
 *   the JUnit file;
 * - the channel with every layer: skillsmith's plugin (tripwire, identity and bytecode checks as
 *   far as this version has them), canaries, the channel and the runner's cross-checks.
 *
 * "channel − plain" is what skillsmith adds to a scored run in all; "channel − JUnit" what the
 * integrity layers add beyond the layout. Plus the inventory, taken once per verifier (median of
 * 10, each a verifier the memo has not seen: the same files with the command written
 * differently). Bubblewrap with Debian's pytest when it has one, else unsafe with this machine's
 * python3 (`python.ts`). Target: the layers add at most 300 ms per scored run.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSandbox } from "../src/bench/run/prepare.js";
import { runSuiteVerifier, suiteVerifierInventory } from "../src/bench/run/verifier.js";
import type { SuiteVerifier } from "../src/bench/suite/types.js";
import type { SandboxV1 } from "../src/env/index.js";
import type { VerifierInventory } from "../src/env/verifier/integrity/inventory.js";
import { STUB_INIT, TEST_CALC, TEST_PACKAGE } from "../test/support/attacks.js";
import { type Benchmark, type BenchmarkRow, summarise } from "./harness.js";
import { pytestSandboxChoice } from "./python.js";

const samples = 30;
const inventorySamples = 10;
const targetMs = 300;
const pytestCommand = (python: string) =>
  `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 ${python} -m pytest -q -p no:cacheprovider --junitxml=junit.xml test_package.py test_calc.py`;
type Mode = "channel" | "junit" | "plain";
const ORDERS: readonly (readonly Mode[])[] = [
  ["channel", "junit", "plain"],
  ["junit", "plain", "channel"],
  ["plain", "channel", "junit"],
];

/** "+12 ms" for a median of paired differences. */
function signed(ms: number): string {
  return `${ms >= 0 ? "+" : ""}${ms.toFixed(0)} ms`;
}

const benchmark: Benchmark = {
  name: "verifier-channel",
  async run(): Promise<BenchmarkRow[]> {
    const root = await mkdtemp(join(tmpdir(), "bench-verifier-channel-"));
    let sandbox: SandboxV1 | undefined;
    try {
      const folder = join(root, "verifier");
      await mkdir(folder);
      await writeFile(join(folder, "test_package.py"), TEST_PACKAGE);
      await writeFile(join(folder, "test_calc.py"), TEST_CALC);
      const workspace = join(root, "workspace");
      await mkdir(join(workspace, "tinycalc"), { recursive: true });
      await writeFile(join(workspace, "tinycalc", "__init__.py"), STUB_INIT);
      const choice = pytestSandboxChoice();
      const PYTEST = pytestCommand(choice.python);
      sandbox = await openSandbox(choice.kind);
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

      const times: Record<Mode, number[]> = { channel: [], junit: [], plain: [] };
      for (let index = 0; index < samples; index += 1) {
        // Rotate which goes first, so machine load drifts into all three equally.
        for (const mode of ORDERS[index % ORDERS.length] as readonly Mode[]) {
          const scratch = join(root, `run-${index}-${mode}`);
          await mkdir(scratch);
          const started = performance.now();
          if (mode === "plain") {
            await plainPytest(sandbox, choice.kind === "unsafe", {
              folder,
              workspace,
              scratch,
              PYTEST,
            });
            times.plain.push(performance.now() - started);
          } else {
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
          }
          await rm(scratch, { recursive: true, force: true });
        }
      }
      const channel = summarise(times.channel);
      const junit = summarise(times.junit);
      const plain = summarise(times.plain);
      const pairedOverhead = (baseline: number[]) =>
        summarise(times.channel.map((time, index) => time - (baseline[index] ?? time))).medianMs;
      const overJunit = pairedOverhead(times.junit);
      const overPlain = pairedOverhead(times.plain);
      const layoutCost = summarise(
        times.junit.map((time, index) => time - (times.plain[index] ?? time)),
      ).medianMs;
      const against = (
        name: string,
        baselineMs: number,
        overhead: number,
        note: string,
      ): BenchmarkRow => ({
        case: `scored run, channel with every layer (vs ${name})`,
        medianMs: channel.medianMs,
        baselineMs,
        ratio: baselineMs / channel.medianMs,
        target: `≤ +${targetMs} ms`,
        met: overhead <= targetMs,
        note: `${signed(overhead)} per scored run ${note}`,
      });
      return [
        against(
          "plain pytest",
          plain.medianMs,
          overPlain,
          `for all skillsmith adds (${choice.note}; medians of paired differences, ${samples} each)`,
        ),
        against(
          "JUnit way",
          junit.medianMs,
          overJunit,
          `for the integrity layers (plugin, canaries, channel, cross-checks); the layout alone (copy, read-only mounts, JUnit read) ${signed(layoutCost)} over plain pytest`,
        ),
        {
          case: "inventory (once per verifier)",
          medianMs: summarise(inventoryTimes).medianMs,
          note: "pytest collecting, nothing run; kept on disk per verifier and environment by bench run",
        },
      ];
    } finally {
      await sandbox?.dispose?.();
      await rm(root, { recursive: true, force: true });
    }
  },
};

/**
 * The verifier's command as a user would run it without skillsmith: in the same sandbox, its
 * files in a folder of their own (mounted at `/verifier`), the workspace beside it.
 */
async function plainPytest(
  sandbox: SandboxV1,
  unsafe: boolean,
  paths: { folder: string; workspace: string; scratch: string; PYTEST: string },
): Promise<void> {
  const copy = join(paths.scratch, "verifier");
  await cp(paths.folder, copy, { recursive: true });
  const execution = await sandbox.exec({
    command: ["sh", "-c", paths.PYTEST],
    workspace: paths.workspace,
    workspaceMountPath: "/workspace/tiny",
    cwd: unsafe ? copy : "/verifier",
    network: "none",
    env: unsafe ? { SKILLSMITH_WORKSPACE: paths.workspace } : {},
    limits: { timeoutMs: 120_000 },
    ...(unsafe
      ? {}
      : { extraMounts: [{ hostPath: copy, sandboxPath: "/verifier", readOnly: false }] }),
  });
  // The stub earns 2 of 8: pytest exits 1 with six failures.
  if (!/6 failed, 2 passed/.test(`${execution.stdout}\n${execution.stderr}`)) {
    throw new Error(
      `plain pytest: expected 6 failed, 2 passed, got: ${execution.stdout.slice(-500)}`,
    );
  }
}

export default benchmark;
