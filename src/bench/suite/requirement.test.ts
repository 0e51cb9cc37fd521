import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { listItems, mentionedPaths, parseRequirementMarkdown } from "./requirement.js";

const fixture = resolve(import.meta.dirname, "../../../../shared/fixtures/swe-skills-bench");
const hasFixture = existsSync(fixture);
const task = (path: string) => readFileSync(join(fixture, "tasks", path), "utf8");

describe("parseRequirementMarkdown: the protocol's four fields", () => {
  const document = [
    "# Add a retry helper",
    "",
    "## Background",
    "The client has no retries.",
    "",
    "## Requirement",
    "Add `retry()` to the client.",
    "",
    "### Details",
    "Three attempts.",
    "",
    "## File Operations",
    "- `src/retry.py` (create) — the helper, using `client.Session`",
    "- src/client.py (modify): wire it in",
    "",
    "## Acceptance Criteria",
    "1. `retry()` retries three times",
    "   on connection errors.",
    "2. 4xx responses are not retried",
    "",
  ].join("\n");

  it("reads each field, keeps deeper headings in the requirement and folds continuation lines", () => {
    const { requirement, problems } = parseRequirementMarkdown("r1", document);
    expect(problems).toEqual([]);
    expect(requirement.form).toBe("sections");
    expect(requirement.background).toBe("The client has no retries.");
    expect(requirement.requirement).toBe(
      "Add `retry()` to the client.\n\n### Details\nThree attempts.",
    );
    // `client.Session` sits in the description, after " — ": not a file operation.
    expect(requirement.fileOperations).toEqual(["src/retry.py", "src/client.py"]);
    expect(requirement.acceptanceCriteria).toEqual([
      "`retry()` retries three times on connection errors.",
      "4xx responses are not retried",
    ]);
    expect(requirement.raw).toBe(document);
  });

  it("reports every missing or empty section at once, with the level it deserves", () => {
    const { problems } = parseRequirementMarkdown(
      "r2",
      "## Background\n\nSome context.\n\n## Requirements\n\n## Notes\nnothing here\n",
    );
    expect(problems).toEqual([
      {
        severity: "error",
        field: "requirement",
        line: 5,
        message: 'section "Requirement" is empty',
      },
      {
        severity: "warning",
        field: "fileOperations",
        message: 'missing section "File Operations"',
      },
      {
        severity: "error",
        field: "acceptanceCriteria",
        message: 'missing section "Acceptance Criteria"',
      },
    ]);
  });

  it("ignores headings inside fenced code blocks", () => {
    const { requirement } = parseRequirementMarkdown(
      "r3",
      "## Requirement\nWrite this file:\n```md\n## Acceptance Criteria\n- fake\n```\n## Acceptance Criteria\n- real\n",
    );
    expect(requirement.acceptanceCriteria).toEqual(["real"]);
    expect(requirement.requirement).toContain("## Acceptance Criteria\n- fake");
  });

  it("accepts a document without any known heading as a free-form requirement (Harbor)", () => {
    const { requirement, problems } = parseRequirementMarkdown(
      "hello",
      "Create `/app/hello.txt` containing `Hello, world!`.\n",
    );
    expect(problems).toEqual([]);
    expect(requirement.form).toBe("free");
    expect(requirement.requirement).toBe("Create `/app/hello.txt` containing `Hello, world!`.");
    expect(requirement.acceptanceCriteria).toEqual([]);
  });

  it("reports an empty document", () => {
    expect(parseRequirementMarkdown("empty", "  \n").problems).toEqual([
      { severity: "error", field: "requirement", message: "the document is empty" },
    ]);
  });
});

describe("list helpers", () => {
  it("falls back to paragraphs when a section has no list", () => {
    expect(listItems("First criterion\nstill first.\n\nSecond.")).toEqual([
      "First criterion still first.",
      "Second.",
    ]);
  });

  it("takes the first word of an item without code spans, and skips words that are not paths", () => {
    expect(
      mentionedPaths("- examples/demo.py (new)\n- notebooks/x.ipynb (optional)\n- nothing here"),
    ).toEqual(["examples/demo.py", "notebooks/x.ipynb"]);
  });
});

describe.skipIf(!hasFixture)(
  "parseRequirementMarkdown on the public v1 data (needs ../shared/fixtures/swe-skills-bench)",
  () => {
    it("reads batch1/python-resilience (Files to Create/Modify, Requirements)", () => {
      const { requirement, problems } = parseRequirementMarkdown(
        "batch1",
        task("batch1/python-resilience.md"),
      );
      expect(problems).toEqual([]);
      expect(requirement.fileOperations).toEqual(["httpx/_transports/resilient.py"]);
      expect(requirement.acceptanceCriteria).toEqual([
        "`httpx/_transports/resilient.py` compiles without syntax errors",
        "`ResilientTransport` correctly implements retry and circuit breaker behavior",
        "Error handling covers all specified scenarios",
      ]);
      expect(requirement.background).toMatch(/^We need to add a resilient transport module/);
      expect(requirement.requirement).toMatch(/^### ResilientTransport Class/);
    });

    it("reads batch1/risk-metrics-calculation: bare paths, and the Expected Functionality section", () => {
      const { requirement } = parseRequirementMarkdown(
        "batch1",
        task("batch1/risk-metrics-calculation.md"),
      );
      expect(requirement.fileOperations).toEqual([
        "examples/risk_metrics_demo.py",
        "tests/test_risk_metrics.py",
        "notebooks/risk_metrics.ipynb",
      ]);
      expect(requirement.acceptanceCriteria).toEqual([
        "Example script produces valid output",
        "Metrics calculated within acceptable tolerance",
      ]);
      expect(requirement.requirement).toContain("### Expected Functionality");
      expect(requirement.requirement).toContain("Max drawdown correctly identifies peak-to-trough");
    });

    it("reads batch2/risk-metrics-calculation (the 'Files to Create' variant)", () => {
      const { requirement, problems } = parseRequirementMarkdown(
        "batch2",
        task("batch2/risk-metrics-calculation.md"),
      );
      expect(problems).toEqual([]);
      expect(requirement.fileOperations).toEqual(["examples/risk_metrics_demo.py"]);
      expect(requirement.acceptanceCriteria).toHaveLength(5);
    });

    it("keeps class names of descriptions out of file operations (batch5/python-resilience)", () => {
      const { requirement } = parseRequirementMarkdown(
        "batch5",
        task("batch5/python-resilience.md"),
      );
      expect(requirement.fileOperations).toEqual([
        "httpx/_transports/retry.py",
        "httpx/_config.py",
        "tests/test_retry_transport.py",
      ]);
      expect(requirement.acceptanceCriteria).toHaveLength(6);
    });

    it("reads batch6/risk-metrics-calculation's seven files", () => {
      const { requirement } = parseRequirementMarkdown(
        "batch6",
        task("batch6/risk-metrics-calculation.md"),
      );
      expect(requirement.fileOperations).toEqual([
        "risk/metrics.py",
        "risk/portfolio.py",
        "risk/drawdown.py",
        "risk/ratios.py",
        "risk/stress_test.py",
        "risk/report.py",
        "tests/test_risk_metrics.py",
      ]);
      expect(requirement.acceptanceCriteria).toHaveLength(11);
    });
  },
);
