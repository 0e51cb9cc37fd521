/**
 * What the verifier channel and its integrity layers cost per scored run: one run of the attack
 * table's verifier (eight pytest checks) in three ways, back to back in rotating order, 20 of
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
 * integrity layers add beyond the layout.
 *
 * What each layer adds: plain pytest again with skillsmith's plugin loaded (`-p`, no channel, no
 * canaries), once whole and once per layer taken out of a copy of its source (the audit hook,
 * the identity snapshots, the bytecode comparison). A layer's cost is the median paired
 * difference between the whole plugin and the plugin without it; the channel, canaries and
 * cross-checks are the full scored run minus the whole plugin. Each is printed as a ratio to
 * plain pytest measured in the same rotation. Plus the inventory, taken once per verifier (median of
 * 10, each a verifier the memo has not seen: the same files with the command written
 * differently). Bubblewrap with Debian's pytest when it has one, else unsafe with this machine's
 * python3 (`python.ts`). Target: the layers add at most 300 ms per scored run.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSandbox } from "../src/bench/run/prepare.js";
import { runSuiteVerifier, suiteVerifierInventory } from "../src/bench/run/verifier.js";
import type { SuiteVerifier } from "../src/bench/suite/types.js";
import { PLUGIN_MODULE, pluginSourcePath, type SandboxV1 } from "../src/env/index.js";
import type { VerifierInventory } from "../src/env/verifier/integrity/inventory.js";
import { STUB_INIT, TEST_CALC, TEST_PACKAGE } from "../test/support/attacks.js";
import { type Benchmark, type BenchmarkRow, summarise } from "./harness.js";
import { pytestSandboxChoice } from "./python.js";

const samples = 20;
const inventorySamples = 10;
const targetMs = 300;
const pytestCommand = (python: string) =>
  `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 ${python} -m pytest -q -p no:cacheprovider --junitxml=junit.xml test_package.py test_calc.py`;
type PluginMode = "plugin" | "no-tripwire" | "no-identity" | "no-bytecode";
type Mode = "channel" | "junit" | "plain" | PluginMode;
const MODES: readonly Mode[] = [
  "channel",
  "junit",
  "plain",
  "plugin",
  "no-tripwire",
  "no-identity",
  "no-bytecode",
];
/** Each sample starts at the next mode, so machine load drifts into every mode equally. */
const orderOf = (index: number): Mode[] =>
  MODES.map((_, position) => MODES[(index + position) % MODES.length] as Mode);

/**
 * One layer taken out of the plugin's source: the text replaced must be there (else the plugin
 * changed and this benchmark would silently measure the whole plugin twice).
 */
const LAYER_CUTS: Readonly<Record<Exclude<PluginMode, "plugin">, readonly [string, string]>> = {
  "no-tripwire": ["sys.addaudithook(_tripwire)\n", "\n"],
  "no-identity": ["_IDENTITIES = _snapshot()\n", "_IDENTITIES = ()\n"],
  "no-bytecode": [
    '    """This plugin\'s compile of the test function\'s source, or a reason it has none."""\n',
    '    """This plugin\'s compile of the test function\'s source, or a reason it has none."""\n    return None, None\n',
  ],
};

/** The plugin's source whole, and with each layer cut out, in folders of their own. */
async function pluginVariants(root: string): Promise<Record<PluginMode, string>> {
  const source = await readFile(pluginSourcePath(), "utf8");
  const folders = {} as Record<PluginMode, string>;
  const variants: [PluginMode, string][] = [["plugin", source]];
  for (const [mode, [from, to]] of Object.entries(LAYER_CUTS)) {
    if (!source.includes(from))
      throw new Error(`${mode}: the plugin no longer has ${JSON.stringify(from)}`);
    variants.push([mode as PluginMode, source.replace(from, to)]);
  }
  for (const [mode, text] of variants) {
    const folder = join(root, `plugin-${mode}`);
    await mkdir(folder);
    await writeFile(join(folder, `${PLUGIN_MODULE}.py`), text);
    folders[mode] = folder;
  }
  return folders;
}

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

      const plugins = await pluginVariants(root);
      const times = Object.fromEntries(MODES.map((mode) => [mode, [] as number[]])) as Record<
        Mode,
        number[]
      >;
      for (let index = 0; index < samples; index += 1) {
        for (const mode of orderOf(index)) {
          const scratch = join(root, `run-${index}-${mode}`);
          await mkdir(scratch);
          const started = performance.now();
          if (mode !== "channel" && mode !== "junit") {
            await plainPytest(sandbox, choice.kind === "unsafe", {
              folder,
              workspace,
              scratch,
              PYTEST,
              ...(mode === "plain" ? {} : { plugin: plugins[mode] }),
            });
            times[mode].push(performance.now() - started);
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
      const plainMs = plain.medianMs;
      const layer = (name: string, mode: Mode, without: Mode, note: string): BenchmarkRow => {
        const cost = summarise(
          times[mode].map((time, index) => time - (times[without][index] ?? time)),
        ).medianMs;
        return {
          case: `layer: ${name}`,
          medianMs: plainMs + cost,
          baselineMs: plainMs,
          ratio: plainMs / (plainMs + cost),
          note: `${signed(cost)} per scored run, ${((plainMs + cost) / plainMs).toFixed(3)}× plain pytest (${note}; median of ${samples} paired differences)`,
        };
      };
      const layers: BenchmarkRow[] = [
        layer(
          "plugin, every in-process layer",
          "plugin",
          "plain",
          "pytest -p skillsmith's plugin, no channel, against plain pytest",
        ),
        layer(
          "1. tripwire (audit hook)",
          "plugin",
          "no-tripwire",
          "whole plugin against the plugin without its audit hook",
        ),
        layer(
          "2. identity snapshots",
          "plugin",
          "no-identity",
          "whole plugin against the plugin without its snapshots and comparisons",
        ),
        layer(
          "3. bytecode comparison",
          "plugin",
          "no-bytecode",
          "whole plugin against the plugin without its compile of each test's source",
        ),
        layer(
          "channel, canaries, cross-checks, layout",
          "channel",
          "plugin",
          "full scored run against pytest with the plugin alone",
        ),
      ];
      return [
        ...layers,
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
  paths: {
    folder: string;
    workspace: string;
    scratch: string;
    PYTEST: string;
    /** A folder holding (a variant of) skillsmith's plugin, loaded with `-p`; none when absent. */
    plugin?: string;
  },
): Promise<void> {
  const copy = join(paths.scratch, "verifier");
  await cp(paths.folder, copy, { recursive: true });
  const pluginPath = unsafe ? paths.plugin : "/run/skillsmith-bench-plugin";
  const pluginEnv =
    paths.plugin === undefined
      ? {}
      : { PYTHONPATH: pluginPath ?? "", PYTEST_ADDOPTS: `-p ${PLUGIN_MODULE}` };
  const mounts = [{ hostPath: copy, sandboxPath: "/verifier", readOnly: false }];
  if (paths.plugin !== undefined) {
    mounts.push({
      hostPath: paths.plugin,
      sandboxPath: "/run/skillsmith-bench-plugin",
      readOnly: true,
    });
  }
  const execution = await sandbox.exec({
    command: ["sh", "-c", paths.PYTEST],
    workspace: paths.workspace,
    workspaceMountPath: "/workspace/tiny",
    cwd: unsafe ? copy : "/verifier",
    network: "none",
    env: { ...(unsafe ? { SKILLSMITH_WORKSPACE: paths.workspace } : {}), ...pluginEnv },
    limits: { timeoutMs: 120_000 },
    ...(unsafe ? {} : { extraMounts: mounts }),
  });
  // The stub earns 2 of 8: pytest exits 1 with six failures.
  if (!/6 failed, 2 passed/.test(`${execution.stdout}\n${execution.stderr}`)) {
    throw new Error(
      `plain pytest: expected 6 failed, 2 passed, got: ${execution.stdout.slice(-500)}`,
    );
  }
}

export default benchmark;
