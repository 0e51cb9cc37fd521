import { availableParallelism } from "node:os";
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import LongestFirstSequencer from "./test/support/longest-first-sequencer.js";

/**
 * Test tiers (docs/testing.md). `npm test` runs every tier, as CI does; `npm run test:unit` is
 * the fast tier a developer runs after every change; the slow tiers are named after what makes
 * them slow, and vitest prints that name beside every test it reports (`|slow-agent-cli| ...`).
 */

/** Tests that start the real Claude Code or Codex CLI (against a scripted model server). */
const agentCliFiles = [
  "test/agents-claude-code.test.ts",
  "test/agents-codex.test.ts",
  "test/model-scripted-cli.test.ts",
  "test/bench-run-claude-code.test.ts",
  "test/bench-run-codex-cost.test.ts",
  "test/bench-run-import-claude-code.test.ts",
  "test/bench-run-unsafe-clis.test.ts",
];

/** Tests that build container images or start containers (Podman through the Docker API). */
const containerFiles = [
  "test/bench-harbor-run.test.ts",
  "test/bench-run-container.test.ts",
  "test/bench-run-container-clis.test.ts",
  "test/sandbox-container.test.ts",
];

/** Tests of sandbox limits that start hundreds of tasks, or many sandboxes one after another. */
const sandboxFiles = ["test/sandbox-backends.test.ts"];

export const slowFiles = [...agentCliFiles, ...containerFiles, ...sandboxFiles];

/**
 * Tests beside the code that mount overlays and run bubblewrap sandboxes: end-to-end in cost (185 s
 * of the unit tier's 568 s at load 25), so they run with the end-to-end tier.
 */
export const besideTheCodeEndToEndFiles = ["src/bench/run/patch-snapshot.test.ts"];

/**
 * Time limits, sized for a loaded two-core machine (load 15-25 measured, docs/testing.md): a unit
 * test's work takes milliseconds, so 30 s is a wide margin; an end-to-end test starts processes,
 * sandboxes and servers, which took up to 45 s each under that load, so its default is 120 s;
 * the slow tiers' default is 300 s. A test whose own work is longer gives its own limit.
 */
export const unitLimitMs = 30_000;
export const endToEndLimitMs = 120_000;
export const slowLimitMs = 300_000;
/** A hook's limit in every tier: the longest set-up (an evaluation, a package install) gives its own. */
export const hookLimitMs = 120_000;

/**
 * Workers per tier. Vitest's default is one fewer than the cores, so a two-core machine ran every
 * file one after another, and an end-to-end file spends much of its time waiting on the git,
 * pytest, bubblewrap and server processes it starts, leaving a core idle. One worker more than
 * the cores keeps both cores busy while a file waits. The tiers run one after
 * another (`sequence.groupOrder`): the unit tier first, so a broken change fails in a minute.
 * `SKILLSMITH_TEST_E2E_WORKERS=1` runs the end-to-end files one at a time again.
 */
const endToEndWorkers =
  Number.parseInt(process.env.SKILLSMITH_TEST_E2E_WORKERS ?? "", 10) || availableParallelism() + 1;

/**
 * One unit worker per core: unit files mostly compute, so more workers would only take turns.
 * `SKILLSMITH_TEST_UNIT_WORKERS=1` runs the tier in one worker again.
 */
const unitWorkers =
  Number.parseInt(process.env.SKILLSMITH_TEST_UNIT_WORKERS ?? "", 10) || availableParallelism();

/**
 * A slow tier: its own name and time limit. The agent-CLI and sandbox tiers share the end-to-end
 * tier's group and workers, so their files fill the workers beside the end-to-end files instead
 * of running one at a time after them (a group's projects must share their worker count). The
 * container tier keeps a group of its own with one worker: its files build and remove images
 * and containers through the one Podman service, and run one at a time as before.
 */
function slowTier(
  name: string,
  include: string[],
  group: { groupOrder: number; maxWorkers?: number },
): TestProjectInlineConfiguration {
  return {
    extends: true,
    test: {
      name,
      include,
      testTimeout: slowLimitMs,
      ...(group.maxWorkers === undefined ? {} : { maxWorkers: group.maxWorkers }),
      sequence: { groupOrder: group.groupOrder },
    },
  };
}

const endToEndGroup = { groupOrder: 1, maxWorkers: endToEndWorkers };

export default defineConfig({
  test: {
    testTimeout: unitLimitMs,
    hookTimeout: hookLimitMs,
    reporters: ["default", "./test/support/slowest-files-reporter.ts"],
    // Longest files first within each group, also on a fresh clone (see the file).
    sequence: { sequencer: LongestFirstSequencer },
    // One folder per run for fixtures that test files share (test/support/shared-fixtures.ts);
    // the run fails if it left untracked files in the checkout (test/support/repository-guard.ts);
    // tools many files need are probed once (test/support/tool-probes.ts).
    globalSetup: [
      "./test/support/shared-fixtures.ts",
      "./test/support/repository-guard.ts",
      "./test/support/tool-probes-setup.ts",
    ],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["src/**/*.test.ts", "test/support/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...besideTheCodeEndToEndFiles],
          // A worker runs many unit files and imports the code under test once: a fresh process
          // per file spent half the tier's CPU time starting Node and importing the same modules
          // again (43 s → 21 s for 28 files). Spies are restored after each test so none leaks
          // into the next file; no unit test changes process.env, the working folder or globals.
          isolate: false,
          restoreMocks: true,
          // Vitest's default is one worker fewer than the cores: on two cores the whole tier ran
          // in one worker while the other core, with nothing else allowed to start, stayed idle.
          maxWorkers: unitWorkers,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/**/*.test.ts", ...besideTheCodeEndToEndFiles],
          testTimeout: endToEndLimitMs,
          exclude: [...configDefaults.exclude, "test/support/**", ...slowFiles],
          maxWorkers: endToEndWorkers,
          sequence: { groupOrder: 1 },
        },
      },
      slowTier("slow-agent-cli", agentCliFiles, endToEndGroup),
      slowTier("slow-sandboxes", sandboxFiles, endToEndGroup),
      slowTier("slow-containers", containerFiles, { groupOrder: 2 }),
    ],
  },
});
