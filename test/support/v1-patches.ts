/**
 * Recorded patches for python-packaging batch1 of the SWE-Skills-Bench v1 data, on pypa/packaging
 * at its pinned commit. Measured by hand (test/bench-v1-real.test.ts): the demo script alone
 * passes 4 of the verifier's 11 checks; with the edge-case tests added, 11 of 11.
 */

/** A unified diff creating each file with the given lines. */
export function newFiles(files: Record<string, string[]>): string {
  return Object.entries(files)
    .map(
      ([path, lines]) =>
        `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}`).join("\n")}\n`,
    )
    .join("");
}

export const demo = newFiles({
  "scripts/demo_packaging.py": [
    "from packaging.version import Version",
    "",
    'for left, right in [("1.0a1", "1.0"), ("1!1.0", "2.0")]:',
    '    print(f"Version({left!r}) < Version({right!r}):", Version(left) < Version(right))',
  ],
});
export const edgeCases = newFiles({
  "tests/test_version_edge_cases.py": [
    "from packaging.version import Version",
    "",
    "",
    "def test_prerelease_order():",
    '    assert Version("1.0a1") < Version("1.0b2") < Version("1.0rc1") < Version("1.0")',
    "",
    "",
    "def test_epoch_wins():",
    '    assert Version("1!2.0") > Version("3.0")',
    "",
    "",
    "def test_local_version():",
    '    assert Version("1.0+local.7").local == "local.7"',
    "",
    "",
    "def test_post_and_dev():",
    '    assert Version("1.0.dev1") < Version("1.0") < Version("1.0.post1")',
  ],
});
