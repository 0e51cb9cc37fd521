import { configDefaults, defineConfig } from "vitest/config";

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

export default defineConfig({
  test: {
    // A unit test's work takes milliseconds; 30 s is a wide margin even on a loaded machine.
    // Tests with bounded work of seconds (a sandbox, a CLI, a container) give their own limit.
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ["default", "./test/support/slowest-files-reporter.ts"],
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["src/**/*.test.ts", "test/support/**/*.test.ts"] },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/support/**", ...slowFiles],
        },
      },
      { extends: true, test: { name: "slow-agent-cli", include: agentCliFiles } },
      { extends: true, test: { name: "slow-containers", include: containerFiles } },
      { extends: true, test: { name: "slow-sandboxes", include: sandboxFiles } },
    ],
  },
});
