/**
 * Parts of the pytest plugin (`skillsmith_verifier_channel.py`) in a plain interpreter, no
 * channel: layer 2's one-pass comparison (`_Watch`) must see every replacement the entry-by-entry
 * walk saw, including ones built to fool an equality test, and accept pytest's own as before; the
 * tests read from a module's source (`_defined_tests`) pin instances given through a module-level
 * constant as a literal written in the mark does, and only when nothing else can change it.
 */
import { execFileSync } from "node:child_process";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { pluginSourcePath } from "./plugin.js";

const hasPytest = (() => {
  try {
    execFileSync("python3", ["-m", "pytest", "--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** What `script` prints (one JSON value), run with the plugin importable and no channel. */
function pluginScript(script: string): unknown {
  const { SKILLSMITH_VERIFIER_CHANNEL: _channel, ...env } = process.env;
  const output = execFileSync("python3", ["-c", script], {
    encoding: "utf8",
    env: { ...env, PYTHONPATH: dirname(pluginSourcePath()) },
  });
  return JSON.parse(output);
}

// Each step changes the process, then asks the plugin what it sees; steps run in order.
const IDENTITIES = `
import json, pathlib, subprocess, unittest
import _pytest.main
import skillsmith_verifier_channel as plugin

class AlwaysEqual:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
    def __call__(self, *args, **kwargs):
        return None

seen = {}
seen["untouched"] = plugin._changed_identities()
read_text = pathlib.Path.read_text
pathlib.Path.read_text = AlwaysEqual()
seen["equal to everything"] = plugin._changed_identities()
pathlib.Path.read_text = read_text
seen["restored"] = plugin._changed_identities()
run = subprocess.run
del subprocess.run
seen["deleted"] = plugin._changed_identities()
subprocess.run = run
debug = unittest.TestCase.debug
unittest.TestCase.debug = _pytest.main.pytest_cmdline_main
seen["pytest's own"] = plugin._changed_identities()
unittest.TestCase.debug = lambda self: None
seen["after pytest's own"] = plugin._changed_identities()
unittest.TestCase.debug = debug
seen["end"] = plugin._changed_identities()
print(json.dumps(seen))
`;

// A verifier module read from source: for each test, the instances it has at least and whether
// that number is exact (more instances in a run were then added by someone else: tampering).
const DEFINED = `
import json
import skillsmith_verifier_channel as plugin

class Config:
    def getini(self, name):
        raise ValueError(name)

SOURCE = """
import pytest
CASES = [1, 2, pytest.param(3, id="three")]
PAIRS = ((1, 2), (3, 4))
GROWN = [1]
GROWN.append(2)
@pytest.mark.parametrize("x", CASES)
def test_constant(x): pass
@pytest.mark.parametrize("x", CASES)
@pytest.mark.parametrize("a,b", PAIRS, ids=["p", "q"])
def test_stacked(x, a, b): pass
@pytest.mark.parametrize("x", GROWN)
def test_grown(x): pass
@pytest.mark.parametrize("x", [pytest.param(1), pytest.param(2, marks=pytest.mark.skip)])
def test_params(x): pass
"""

def shown(source):
    return {test["base"]: [test["min"], test["exact"]] for test in plugin._defined_tests(source, "t.py", Config())}

print(json.dumps({"plain": shown(SOURCE), "globals": shown(SOURCE + "globals()['CASES'].append(9)\\n")}))
`;

describe.skipIf(!hasPytest)("the pytest plugin's parts (needs python3 with pytest)", () => {
  it("flags replaced and deleted callables in one pass, even one equal to everything", () => {
    expect(pluginScript(IDENTITIES)).toEqual({
      untouched: [],
      "equal to everything": ["pathlib.Path.read_text"],
      restored: [],
      deleted: ["subprocess.run"],
      "pytest's own": [],
      "after pytest's own": ["unittest.case.TestCase.debug"],
      end: [],
    });
  });

  it("pins instances from a module-level constant, stacked marks and pytest.param, not from a changed constant", () => {
    expect(pluginScript(DEFINED)).toEqual({
      plain: {
        "t.py::test_constant": [3, true],
        "t.py::test_stacked": [6, true],
        // Appended to after it was bound: not provably what the mark sees.
        "t.py::test_grown": [1, false],
        "t.py::test_params": [2, true],
      },
      // `globals()` anywhere in the module: no constant is trusted.
      globals: {
        "t.py::test_constant": [1, false],
        "t.py::test_stacked": [1, false],
        "t.py::test_grown": [1, false],
        "t.py::test_params": [2, true],
      },
    });
  });
});
