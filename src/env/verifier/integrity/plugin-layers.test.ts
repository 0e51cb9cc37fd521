/**
 * Parts of the pytest plugin (`skillsmith_verifier_channel.py`) in a plain interpreter, no
 * channel: layer 2's one-pass comparison (`_Watch`) must see every replacement the entry-by-entry
 * walk saw, including ones built to fool an equality test, and accept pytest's own as before; the
 * tests read from a module's source (`_defined_tests`) pin instances given through a module-level
 * constant as a literal written in the mark does, and only when nothing else can change it.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { pluginSourcePath } from "./plugin.js";

function withPytest(python: string): boolean {
  try {
    execFileSync(python, ["-m", "pytest", "--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const hasPytest = withPytest("python3");
// Debian's interpreter and pytest (7.2 here), the one bubblewrap runs verifiers with: its fixtures
// are wrapper functions, where pytest 8.4 and later make objects of their own.
const systemPython = "/usr/bin/python3";
const hasSystemPytest = withPytest(systemPython);

/** What `script` prints (one JSON value), run with the plugin importable and no channel. */
function pluginScript(script: string, python = "python3"): unknown {
  const { SKILLSMITH_VERIFIER_CHANNEL: _channel, ...env } = process.env;
  const output = execFileSync(python, ["-c", script], {
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

// Objects that are not callables: a module attribute, a sys.modules entry, sys.modules itself,
// and a finder on sys.meta_path from a temporary folder (untrusted code) or from the plugin's own
// interpreter (a library: accepted).
const IMPORT_STATE = `
import json, os, sys, tempfile, types, unittest
import skillsmith_verifier_channel as plugin

seen = {"untouched": plugin._changed_identities() + plugin._IMPORT_HOOKS.changed()}
mock = unittest.mock
unittest.mock = types.ModuleType("unittest.mock")
seen["module attribute"] = plugin._changed_identities()
unittest.mock = mock
real = sys.modules["json"]
sys.modules["json"] = types.ModuleType("json")
seen["sys.modules entry"] = plugin._changed_identities()
sys.modules["json"] = real
modules = sys.modules
sys.modules = dict(modules)
seen["sys.modules replaced"] = plugin._changed_identities()
sys.modules = modules
seen["restored"] = plugin._changed_identities()

folder = tempfile.mkdtemp()
with open(os.path.join(folder, "planted_finder.py"), "w") as handle:
    handle.write("class Finder:\\n    def find_spec(self, name, path=None, target=None):\\n        return None\\n")
sys.path.insert(0, folder)
import planted_finder
sys.meta_path.insert(0, planted_finder.Finder())
seen["untrusted finder"] = [line.split(" from ")[0] for line in plugin._IMPORT_HOOKS.changed()]
del sys.meta_path[0]
class Trusted:
    def find_spec(self, name, path=None, target=None):
        return None
sys.meta_path.append(Trusted())
seen["trusted finder"] = plugin._IMPORT_HOOKS.changed()
print(json.dumps(seen))
`;

// A verifier module checked against its source: foreign names, rebound imports, changed constants,
// a builtin added that it reads and never binds; and what honest code does to a module.
const NAMESPACE = `
import builtins, json, os, sys, tempfile, types
import pytest
import skillsmith_verifier_channel as plugin

SOURCE = """
import json
import os.path
from os.path import join
import pytest
CASES = [(1, 2), (3, 4)]
LIMIT = 3
NAMES = ("a", "b")
CACHE = {}
REGISTRY = []
EXPECTED = {"sum": 5, "names": ["a", "b"]}
LOOKUP = {"a": 1}
@pytest.mark.parametrize(("a", "b"), CASES)
def test_pairs(a, b):
    assert json.loads("1") and os.path.join and join and undefined_helper()
def test_data():
    assert EXPECTED["sum"] == 5 and EXPECTED["names"][0] == "a" and LOOKUP.get("a") == 1
    assert len(EXPECTED) == 2 and [key for key in LOOKUP] == ["a"]
def setup_module(module):
    module.STATE = 1
    CACHE["filled"] = True
    helper(REGISTRY)
def helper(*arguments):
    return 1
def twice():
    return 1
def twice():
    return 2
AGAIN = 1
AGAIN = 2
@pytest.fixture
def expected_total():
    return 3
@pytest.fixture(scope="module")
def settings():
    return {"mode": "exact"}
class TestTotals:
    'Totals.'
    TOTAL = 5
    LABELS = ("t",)
    def expected(self):
        return 5
    @pytest.mark.parametrize("n", [1])
    def test_total(self, n):
        assert self.expected() == self.TOTAL and self.LABELS and n
    def setup_method(self, method):
        self.count = 1
"""

def load(name, change):
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as handle:
        handle.write(SOURCE)
    module = types.ModuleType(name)
    module.__file__ = path
    exec(compile(SOURCE, path, "exec"), module.__dict__)
    change(module)
    plugin._index_snapshot()
    found = plugin._watch_namespace(module, path)
    return module, [line.replace("the verifier's module %s " % name, "") for line in found]

def rebind(module):
    module.json = types.ModuleType("json")
    module.join = lambda *parts: ""

def constants(module):
    module.CASES.append((5, 6))
    module.NAMES = ("a", "c")
    module.LIMIT = True

def data(module):
    module.EXPECTED["sum"] = 0
    module.LOOKUP["a"] = 2

def rebound_twice(module):
    module.twice = lambda: 2
    module.AGAIN = 3

def fixtures(module):
    import functools
    module.expected_total = pytest.fixture(lambda: 0)
    module.settings = functools.wraps(module.settings)(lambda: {"mode": "any"})

def fixture_compiled_in_place(module):
    # Same name, file and line as the source's fixture, another body.
    line = SOURCE.split("\\n").index("def expected_total():")
    scope = {"pytest": pytest}
    exec(compile("\\n" * (line - 1) + "@pytest.fixture\\ndef expected_total():\\n    return 0\\n", module.__file__, "exec"), scope)
    module.expected_total = scope["expected_total"]

def class_attributes(module):
    module.TestTotals.TOTAL = 0
    module.TestTotals.expected = lambda self: 0
    # Decorated: watched from collection on, like a decorated helper of the module.
    module.TestTotals.test_total = lambda self, n: None

def honest(module):
    # pytest's own fixtures for xunit-style setup, an attribute the source sets on instances.
    setattr(module.TestTotals, "_Class__pytest_setup_method", None)
    module.TestTotals.count = 2
    module.CACHE["x"] = 1
    module.REGISTRY.append(1)
    module.STATE = 2
    module.__warningregistry__ = {}
    setattr(module, "_Module__pytest_setup_module", None)

seen = {}
seen["foreign name"] = load("m1", lambda module: setattr(module, "open", open))[1]
seen["replaced helper"] = load("m5", lambda module: setattr(module, "helper", lambda: 2))[1]
seen["rebound imports"] = sorted(load("m2", rebind)[1])
seen["changed constants"] = sorted(load("m3", constants)[1])
seen["changed data"] = sorted(load("m6", data)[1])
seen["bound twice"] = sorted(load("m7", rebound_twice)[1])
seen["fixtures"] = sorted(load("m8", fixtures)[1])
seen["fixture compiled in place"] = load("m9", fixture_compiled_in_place)[1]
seen["class attributes"] = sorted(load("m10", class_attributes)[1])
module, seen["honest"] = load("m4", honest)
module.CACHE.clear()
module.REGISTRY.extend([2, 3])
seen["honest later"] = plugin._namespace_changes() + plugin._changed_identities()
class AlwaysEqual:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
module.EXPECTED["names"][1] = AlwaysEqual()
module.TestTotals.TOTAL = 0
module.open = open
builtins.undefined_helper = lambda: True
prefix = "the verifier's module m4 "
seen["later"] = sorted(line[len(prefix):] if line.startswith(prefix) else line for line in plugin._namespace_changes() if " m4 " in line)
seen["later class"] = plugin._changed_identities()
print(json.dumps(seen))
`;

// A verifier laid out as a package (`tests/__init__.py`) under a folder with its own
// `conftest.py`: pytest imports `tests/conftest.py` as `tests.conftest`, the other as `conftest`.
// The module beside the tests is compared under the name it is imported by, so the honest layout
// is not reported and a planted `sys.modules["tests.helper"]` is.
const PACKAGED_VERIFIER = `
import json, os, sys, tempfile, types
import skillsmith_verifier_channel as plugin

root = tempfile.mkdtemp()
os.makedirs(os.path.join(root, "tests"))
for name, text in {
    "conftest.py": "ROOT = 1\\n",
    "tests/__init__.py": "",
    "tests/conftest.py": "PACKAGE = 1\\n",
    "tests/helper.py": "def expected():\\n    return 1\\n",
    "tests/test_a.py": "from tests import helper\\ndef test_a():\\n    assert helper.expected()\\n",
}.items():
    path = os.path.join(root, name)
    with open(path, "w") as handle:
        handle.write(text)
    # Read-only verifier files in a real run; here, told so (the folder is under /tmp).
    plugin._trusted_files[path] = True
sys.path.insert(0, root)
import conftest, tests.conftest, tests.test_a

class Item:
    path = os.path.join(root, "tests", "test_a.py")

plugin._note_verifier_modules([Item()])
seen = {"honest": plugin._shadowed_verifier_modules()}
planted = types.ModuleType("tests.helper")
planted.__file__ = os.path.join(tempfile.mkdtemp(), "helper.py")
sys.modules["tests.helper"] = planted
seen["planted"] = [line.split(" was loaded")[0] for line in plugin._shadowed_verifier_modules()]
print(json.dumps(seen))
`;

// Layer 1 attributes an event to the file a code object names, and that name is whatever its
// compiler was told. Each line marked `# attack:` makes code that claims another origin and reads
// a frame (or loads bytecode) with it; the tripwire must name that line, or the made-up file.
const ORIGIN_ATTACKS = `import importlib._bootstrap as bootstrap
import importlib._bootstrap_external as external
import importlib.machinery
import importlib.util
import ast, codeop, marshal, os, sys, timeit

PAYLOAD = "import sys\\nframe = sys._getframe(1)\\n"
OS = os.__file__
PLANTED = os.path.join(os.path.dirname(__file__), "planted.bin")
exec(compile(PAYLOAD, "/opt/skillsmith-nowhere/helpers.py", "exec"))  # attack: a name no file backs
exec(compile(PAYLOAD, OS, "exec"))  # attack: compiled as os.py
exec(codeop.compile_command("import sys; sys._getframe(0)", OS, "exec"))  # attack: codeop as os.py
exec(importlib.machinery.SourceFileLoader("x", OS).source_to_code(PAYLOAD.encode(), OS))  # attack: source_to_code as os.py
bootstrap._call_with_frames_removed(exec, compile(ast.parse(PAYLOAD), OS, "exec"), {})  # attack: syntax tree as os.py, run by the import system
timeit.timeit("import sys; sys._getframe(0)", number=1)  # attack: string run by timeit
DATA = marshal.dumps(compile(PAYLOAD, "<payload>", "exec"))
external._compile_bytecode(DATA, name="x")  # attack: marshal through the import system
with open(PLANTED, "wb") as handle:
    handle.write(importlib.util.MAGIC_NUMBER + bytes(12) + DATA)
importlib.machinery.SourcelessFileLoader("planted", PLANTED).get_code("planted")  # attack: bytecode by a loader called directly
`;

// What honest code does that looks like the above: strings run, syntax trees compiled under their
// own names, generated classes, standard-library modules imported (after a tree was compiled too),
// a module loaded through its spec.
const ORIGIN_HONEST = `import ast, collections, dataclasses, enum, functools, importlib, importlib.util, inspect
import json, logging, pathlib, re, subprocess, typing

exec("x = 1 + 1")
assert eval("2 * 3") == 6
@dataclasses.dataclass
class Point:
    x: int
    y: int = 0
Pair = collections.namedtuple("Pair", "a b")
class Colour(enum.Enum):
    RED = 1
logging.getLogger("honest").info("a message")
assert eval(compile(ast.parse("1 + 2", mode="eval"), "<expression>", "eval")) == 3
namespace = {}
exec(compile(ast.parse("def f():\\n    return 4\\n"), "<generated>", "exec"), namespace)
import fractions, csv, textwrap, difflib
spec = importlib.util.spec_from_file_location("helper_plugin", str(pathlib.Path(__file__).with_name("helper_plugin.py")))
loaded = importlib.util.module_from_spec(spec)
spec.loader.exec_module(loaded)
assert loaded.greet() == "hi" and importlib.import_module("helper_plugin").greet() == "hi"
inspect.signature(Point)
subprocess.run(["true"], check=True)
json.dumps({"a": Point(1, 2).x, "b": Pair(1, 2).a})
re.compile(r"a+b")
functools.lru_cache(maxsize=None)(lambda n: n)(3)
typing.get_type_hints(Point)
`;

const origins: string[] = [];
afterAll(() => {
  for (const folder of origins) rmSync(folder, { recursive: true, force: true });
});

/** The tripwire records made while importing `source` as a workspace module: `[file or marked line, event]`. */
function originRecords(source: string): string[][] {
  const root = mkdtempSync(join(tmpdir(), "skillsmith-origin-"));
  origins.push(root);
  const workspace = join(root, "workspace");
  mkdirSync(workspace);
  writeFileSync(join(workspace, "deliverable.py"), source);
  writeFileSync(join(workspace, "helper_plugin.py"), 'def greet():\n    return "hi"\n');
  const script = `
import json, os, sys
import skillsmith_verifier_channel as plugin
# Where skillsmith's runs look for bytecode (PYTHONPYCACHEPREFIX; set here, after pytest and the
# plugin were imported from the interpreter's own caches, so they are not compiled again).
sys.pycache_prefix = ${JSON.stringify(join(root, "pycache"))}
sys.path.insert(0, ${JSON.stringify(workspace)})
import deliverable
print(json.dumps([[record["file"], record["line"], record["event"]] for record in plugin._tripwire_pending]))
`;
  const { SKILLSMITH_VERIFIER_CHANNEL: _channel, ...env } = process.env;
  const output = execFileSync("python3", ["-B", "-c", script], {
    encoding: "utf8",
    cwd: root,
    env: {
      ...env,
      PYTHONPATH: dirname(pluginSourcePath()),
      SKILLSMITH_WORKSPACE: workspace,
    },
  });
  const lines = source.split("\n");
  return (JSON.parse(output) as [string, number, string][]).map(([file, line, event]) => {
    const marker =
      basename(file) === "deliverable.py" ? lines[line - 1]?.split("# attack: ")[1] : undefined;
    return [marker ?? file, event];
  });
}

describe.skipIf(!hasPytest)("the pytest plugin's parts (needs python3 with pytest)", () => {
  it("flags a replaced module attribute, sys.modules entry or sys.modules, and an untrusted import hook", () => {
    expect(pluginScript(IMPORT_STATE)).toEqual({
      untouched: [],
      "module attribute": ["unittest.mock"],
      "sys.modules entry": ["sys.modules['json']"],
      "sys.modules replaced": ["sys.modules"],
      restored: [],
      "untrusted finder": ["sys.meta_path: an import hook"],
      "trusted finder": [],
    });
  });

  it.each([
    ["python3", true],
    [systemPython, hasSystemPytest],
  ])(
    "checks a verifier module's namespace against its source, and accepts what honest code does (%s)",
    (python, available) => {
      if (!available) {
        // Named, not skipped silently: the system interpreter without pytest only loses this row.
        expect(hasSystemPytest, `${python} has no pytest`).toBe(false);
        return;
      }
      expect(pluginScript(NAMESPACE, python)).toEqual({
        "foreign name": ["holds open, which its source never binds"],
        "replaced helper": ["has helper replaced (not what its source defines)"],
        "rebound imports": [
          "has join rebound (not what its import gives)",
          "has json rebound (not what its import gives)",
        ],
        "changed constants": [
          "has CASES changed from what its source assigns",
          "has LIMIT changed from what its source assigns",
          "has NAMES changed from what its source assigns",
        ],
        // Containers the source only reads; CACHE (filled by the source) and REGISTRY (handed to
        // a function) are the verifier's to change.
        "changed data": [
          "has EXPECTED changed from what its source assigns",
          "has LOOKUP changed from what its source assigns",
        ],
        // Bound twice at the top level: the second binding is what the module holds.
        "bound twice": [
          "has AGAIN changed from what its source assigns",
          "has twice replaced (not what its source defines)",
        ],
        // Replaced before collection (no identity was taken yet): a fixture pytest made of another
        // function, a look-alike wrapping the real one, and one compiled at the source's own line.
        fixtures: [
          "has expected_total replaced (not the fixture its source defines)",
          "has settings replaced (not the fixture its source defines)",
        ],
        "fixture compiled in place": [
          "has expected_total replaced (the fixture's bytecode is not the compile of its source)",
        ],
        // A test class's constant and undecorated method, changed before collection.
        "class attributes": [
          "has TestTotals.TOTAL changed from what its source assigns",
          "has TestTotals.expected replaced (not what its source defines)",
        ],
        honest: [],
        "honest later": [],
        later: [
          "builtins.undefined_helper was added, a name the verifier's module m4 reads and never binds",
          "has EXPECTED changed in place from what its source assigns",
          "holds open, which its source never binds",
        ],
        // Changed after collection (a deliverable setting it from inside a test).
        "later class": ["m4.TestTotals.TOTAL"],
      });
    },
  );

  it("compares a packaged verifier's modules under the names they are imported by", () => {
    expect(pluginScript(PACKAGED_VERIFIER)).toEqual({
      honest: [],
      planted: ["the verifier's module tests.helper"],
    });
  });

  it("attributes code to where it came from, not to the file its name claims", () => {
    expect(originRecords(ORIGIN_ATTACKS)).toEqual([
      ["/opt/skillsmith-nowhere/helpers.py", "sys._getframe"],
      ["compiled as os.py", "compile"],
      ["codeop as os.py", "compile"],
      ["source_to_code as os.py", "compile"],
      ["syntax tree as os.py, run by the import system", "exec"],
      ["string run by timeit", "sys._getframe"],
      ["marshal through the import system", "marshal.loads"],
      ["bytecode by a loader called directly", "marshal.loads"],
    ]);
  });

  it("leaves honest strings run, syntax trees compiled, generated classes and dynamic imports alone", () => {
    expect(originRecords(ORIGIN_HONEST)).toEqual([]);
  });

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
