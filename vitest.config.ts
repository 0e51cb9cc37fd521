import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

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

const slowFiles = [...agentCliFiles, ...containerFiles, ...sandboxFiles];

/**
 * Tests beside the code that mount overlays and run bubblewrap sandboxes: end-to-end in cost (185 s
 * of the unit tier's 568 s at load 25), so they run with the end-to-end tier.
 */
const besideTheCodeEndToEndFiles = ["src/bench/run/patch-snapshot.test.ts"];

/**
 * Time limits, sized for a loaded two-core machine (load 15-25 measured, docs/testing.md): a unit
 * test's work takes milliseconds, so 30 s is a wide margin; an end-to-end test starts processes,
 * sandboxes and servers, which took up to 45 s each under that load, so its default is 120 s;
 * the slow tiers' default is 300 s. A test whose own work is longer gives its own limit.
 */
const unitLimitMs = 30_000;
const endToEndLimitMs = 120_000;
const slowLimitMs = 300_000;

function slowTier(name: string, include: string[]): TestProjectInlineConfiguration {
  return { extends: true, test: { name, include, testTimeout: slowLimitMs } };
}

export default defineConfig({
  test: {
    testTimeout: unitLimitMs,
    hookTimeout: 120_000,
    reporters: ["default", "./test/support/slowest-files-reporter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["src/**/*.test.ts", "test/support/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...besideTheCodeEndToEndFiles],
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/**/*.test.ts", ...besideTheCodeEndToEndFiles],
          testTimeout: endToEndLimitMs,
          exclude: [...configDefaults.exclude, "test/support/**", ...slowFiles],
        },
      },
      slowTier("slow-agent-cli", agentCliFiles),
      slowTier("slow-containers", containerFiles),
      slowTier("slow-sandboxes", sandboxFiles),
    ],
  },
});
