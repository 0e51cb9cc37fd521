import { describe, expect, it } from "vitest";
import { visibleView } from "./family.js";
import { pathsInDiff, renderRequirement, SuiteTaskFamily } from "./suite-family.js";

describe("pathsInDiff", () => {
  it("lists the new-side path of every file header, new and changed files alike", () => {
    const diff = [
      "diff --git a/invoicer/totals.py b/invoicer/totals.py",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/invoicer/totals.py",
      "@@ -0,0 +1 @@",
      "+x = 1",
      "diff --git a/README.md b/README.md",
      "--- a/README.md",
      "+++ b/README.md",
    ].join("\n");
    expect(pathsInDiff(diff)).toEqual(["invoicer/totals.py", "README.md"]);
    expect(pathsInDiff("")).toEqual([]);
  });

  it("keeps paths with spaces whole (git ends such a name with a tab on ---/+++)", () => {
    // What `git diff` prints for a changed "docs/read me.md" (checked against git 2.39 by hand).
    const diff = [
      "diff --git a/docs/read me.md b/docs/read me.md",
      "index 7898192..0f7bc76 100644",
      "--- a/docs/read me.md\t",
      "+++ b/docs/read me.md\t",
      "@@ -1 +1,2 @@",
      " a",
      "+c",
    ].join("\n");
    expect(pathsInDiff(diff)).toEqual(["docs/read me.md"]);
  });
});

describe("the suite family's prompt and self-check", () => {
  const family = {
    name: "suite-demo",
    visibleFields: ["background", "requirement", "fileOperations", "acceptanceCriteria"],
    hiddenFields: ["verifier"],
  };
  const task = visibleView(family, {
    id: "s/r1",
    fields: {
      background: "A package.",
      requirement: "Add totals.",
      fileOperations: "- pkg/totals.py\n- pkg/extra.py",
      acceptanceCriteria: "- `f(1)` is `1`.",
    },
    hidden: { verifier: "SECRET" },
  });

  it("renders the visible fields as the requirement's sections, in protocol order", () => {
    expect(renderRequirement(task)).toBe(
      "## Background\n\nA package.\n\n## Requirement\n\nAdd totals.\n\n## File Operations\n\n- pkg/totals.py\n- pkg/extra.py\n\n## Acceptance Criteria\n\n- `f(1)` is `1`.",
    );
  });

  it("scores a candidate diff by the share of File Operations paths it touches", async () => {
    // No model call and no workspace: the check reads the visible field and the diffs only.
    const suite = new SuiteTaskFamily({
      directory: "/nonexistent",
      sandbox: {
        specificationVersion: "v1",
        kind: "unsafe",
        exec: () => Promise.reject(new Error("unused")),
      },
    });
    const one = "diff --git a/pkg/totals.py b/pkg/totals.py\n";
    const both = `${one}diff --git a/pkg/extra.py b/pkg/extra.py\n`;
    const result = await suite.selfCheck(undefined as never, task, ["", one, both]);
    expect(result.scores).toEqual([0, 0.5, 1]);
    expect(result.calls).toBe(0);
  });
});
