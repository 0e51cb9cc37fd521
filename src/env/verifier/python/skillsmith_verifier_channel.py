"""skillsmith's pytest plugin: each test's outcome, streamed to skillsmith over a private channel.

pytest loads this module with ``-p`` (skillsmith sets ``PYTEST_ADDOPTS`` and ``PYTHONPATH``)
before any conftest or test module is imported, so it runs before the code under test. At import
it connects to the Unix socket named by ``SKILLSMITH_VERIFIER_CHANNEL`` (the listener accepts
exactly one connection, then disappears) and reads one line from skillsmith: a per-run key, the
mode and the run's canary test ids. The key never passes through the environment or argv. Every
record it sends is a JSON object with a sequence number, authenticated with HMAC-SHA256 under
that key; skillsmith rejects a record out of sequence or with a bad tag.

What it reports is what it observed, not only what pytest's reports say: plain test functions
are wrapped at call time, so a report saying "passed" for a function that raised (or never ran)
shows up as a contradiction; pytest's runner internals are checked for replacement before each
test; test functions are checked against the code collected; plugins registered after the
session started are reported. skillsmith's side (``integrity/assess.ts``) decides.

Modes: ``inventory`` collects without running anything and reports the collected test ids, the
modules that failed to collect (with the test ids their source defines, read with ``ast``), and
ends the session with exit status 1 so skillsmith learns whether the command passes pytest's exit
status on; ``run`` runs the tests and reports every outcome; ``inventory-run`` is both at once,
for a run on the untouched repository (``bench check``'s), which no agent's code is near: it runs
and reports like ``run`` (no canaries), reads failed modules' sources like ``inventory``, and ends
a session that would exit 0 with status 1 (any other status is kept), so skillsmith learns the
same things from one pytest session instead of two.

One file of about 800 lines on purpose: pytest loads it by module name with ``-p``, and every
further module it imported would be one more name the code under test could shadow on sys.path.

Written for Python >= 3.6 and pytest >= 6.2, standard library only. The source of truth for the
protocol is ``src/env/verifier/integrity/channel.ts``; see ``src/env/verifier/README.md``.
"""

import ast
import builtins
import fnmatch
import hashlib
import hmac
import json
import operator
import os
import random
import socket
import sys
import traceback

import _pytest.main
import _pytest.python
import _pytest.reports
import _pytest.runner
import pytest

PROTOCOL = 1
_MESSAGE_LIMIT = 2000

# Bound now: code under test that later replaces module attributes (json.dumps, hmac.new, ...)
# does not change what this plugin calls.
_dumps = json.dumps
_loads = json.loads
_hmac_new = hmac.new
_sha256 = hashlib.sha256
_getpid = os.getpid
_format_exception = traceback.format_exception
_gettrace = sys.gettrace
_getprofile = sys.getprofile
_SHUT_RDWR = socket.SHUT_RDWR

# The shared bytecode cache (``integrity/bytecode-cache.ts``): skillsmith mounts it writable, and
# sets this variable, only for an inventory, where no agent's code has run. Read (and removed from
# what children see) before the cache prefix is moved to a fresh folder below.
_bytecode_fill = (
    sys.pycache_prefix if os.environ.pop("SKILLSMITH_VERIFIER_BYTECODE_FILL", None) == "1" else None
)


def _unwrap(value):
    return getattr(value, "__func__", value)


def _internals():
    """The runner internals whose replacement would let code under test forge outcomes."""
    watched = [
        ("_pytest.python.Function.runtest", lambda: _pytest.python.Function.runtest),
        ("_pytest.python.Function.setup", lambda: _pytest.python.Function.setup),
        ("_pytest.python.pytest_pyfunc_call", lambda: _pytest.python.pytest_pyfunc_call),
        ("_pytest.runner.runtestprotocol", lambda: _pytest.runner.runtestprotocol),
        ("_pytest.runner.call_and_report", lambda: _pytest.runner.call_and_report),
        ("_pytest.runner.call_runtest_hook", lambda: _pytest.runner.call_runtest_hook),
        ("_pytest.runner.pytest_runtest_protocol", lambda: _pytest.runner.pytest_runtest_protocol),
        ("_pytest.runner.pytest_runtest_call", lambda: _pytest.runner.pytest_runtest_call),
        ("_pytest.runner.pytest_runtest_makereport", lambda: _pytest.runner.pytest_runtest_makereport),
        ("_pytest.runner.CallInfo.from_call", lambda: _unwrap(_pytest.runner.CallInfo.from_call)),
        (
            "_pytest.reports.TestReport.from_item_and_call",
            lambda: _unwrap(_pytest.reports.TestReport.from_item_and_call),
        ),
        ("_pytest.reports.TestReport.__init__", lambda: _pytest.reports.TestReport.__init__),
        ("_pytest.main.pytest_runtestloop", lambda: _pytest.main.pytest_runtestloop),
        ("builtins.AssertionError", lambda: builtins.AssertionError),
    ]
    try:
        import pluggy._callers as callers

        watched.append(("pluggy._callers._multicall", lambda: callers._multicall))
    except ImportError:  # pluggy < 1.0 keeps it elsewhere; the hook results are still checked
        pass
    present = []
    for name, get in watched:
        try:
            present.append((name, get, _unwrap(get())))
        except AttributeError:  # not in this pytest version
            pass
    return present


_WATCHED = _internals()


def _replaced_internals():
    replaced = []
    for name, get, original in _WATCHED:
        try:
            current = _unwrap(get())
        except Exception:  # deleted outright
            current = None
        if current is not original:
            replaced.append(name)
    return replaced


def _describe(value):
    kind = value if isinstance(value, type) else type(value)
    module = getattr(kind, "__module__", "?")
    name = getattr(kind, "__qualname__", kind.__name__)
    return name if module == "builtins" else "%s.%s" % (module, name)


def _tracer_untrusted(tracer, module):
    """Whether the tracer's code lives in untrusted files (a name is not a location: a tracer
    calling its module ``coverage`` but written by the code under test is not coverage's)."""
    code = getattr(_unwrap(tracer), "__code__", None)
    if code is not None:
        return _untrusted_file(code.co_filename)
    loaded = sys.modules.get(module)
    file = getattr(loaded, "__file__", None)
    return file is None or _untrusted_file(file)


def _foreign_tracer(tracer):
    """A trace or profile function that is not coverage's or the debugger's, described."""
    if tracer is None:
        return None
    module = str(getattr(tracer, "__module__", None) or type(tracer).__module__)
    if module.startswith(("coverage", "pdb", "bdb")) and not _tracer_untrusted(tracer, module):
        return None
    name = getattr(tracer, "__qualname__", None) or type(tracer).__qualname__
    return "%s (%s)" % (name, module)


def _message(report):
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    text = getattr(crash, "message", None)
    if text is None:
        longrepr = getattr(report, "longrepr", None)
        if isinstance(longrepr, tuple) and len(longrepr) == 3:
            text = str(longrepr[2])
        elif longrepr is not None:
            lines = str(longrepr).strip().splitlines()
            text = lines[-1] if lines else None
    if not text:
        return None
    return str(text)[:_MESSAGE_LIMIT]


class _Channel:
    """The connection to skillsmith: one socket, one key, one sequence."""

    __slots__ = ("_connection", "_send", "_mac", "_sequence", "_open", "mode", "canaries", "error")

    def __init__(self, path):
        self._open = False
        self._sequence = 0
        self.error = None
        self.mode = "run"
        self.canaries = ()
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(30)
        connection.connect(path)
        received = b""
        while not received.endswith(b"\n"):
            chunk = connection.recv(65536)
            if not chunk:
                raise ConnectionError("skillsmith closed the channel during the handshake")
            received += chunk
        hello = _loads(received.decode("utf-8"))
        if hello.get("protocol") != PROTOCOL:
            raise ConnectionError("skillsmith speaks channel protocol %r" % hello.get("protocol"))
        self._mac = _hmac_new(bytes.fromhex(hello["key"]), digestmod=_sha256)
        self.mode = hello.get("mode", "run")
        self.canaries = tuple(hello.get("canaries", ()))
        self._connection = connection
        self._send = connection.sendall
        self._open = True

    def send(self, record):
        if not self._open:
            return
        self._sequence += 1
        record = dict(record)
        record["seq"] = self._sequence
        body = _dumps(record, sort_keys=True, default=str).encode("utf-8")
        tag = self._mac.copy()
        tag.update(body)
        try:
            self._send(tag.hexdigest().encode("ascii") + b" " + body + b"\n")
        except OSError as error:
            # The channel was closed under us: skillsmith sees the records stop.
            self._open = False
            self.error = str(error)

    def ready(self):
        return self._open

    def close(self):
        """No record after the session's last: the socket is shut and closed, not only idle."""
        self._open = False
        try:
            self._connection.shutdown(_SHUT_RDWR)
        except OSError:
            pass
        self._connection.close()


def _connect():
    path = os.environ.get("SKILLSMITH_VERIFIER_CHANNEL")
    if not path:
        return None
    return _Channel(path)


def _preloaded_from_workspace():
    """Modules already imported from the workspace when pytest loads this plugin: code under test
    that ran before any plugin (a shadowed standard-library module, a ``PYTHONPATH`` into the
    workspace). An honest session has none: test code is imported later."""
    workspace = os.environ.get("SKILLSMITH_WORKSPACE")
    if not workspace:
        return []
    root = os.path.abspath(workspace) + os.sep
    found = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and os.path.abspath(file).startswith(root):
            found.append("%s (%s)" % (name, file))
    return sorted(found)


def _leave_children_plain():
    """Processes the verifier starts inherit this environment, and a verifier's test may run the
    repository's own pytest (``python -m pytest tests/...``, SWE-Skills-Bench does). The channel
    serves this process only: its listener accepts one connection, so a nested pytest loading
    this plugin again fails at import and a correct solution scores lower. Children therefore see
    the verifier's environment without the channel's variables (its own options and path stay)."""
    os.environ.pop("SKILLSMITH_VERIFIER_CHANNEL", None)
    addopts = os.environ.get("PYTEST_ADDOPTS")
    if addopts is not None:
        words = addopts.split()
        if words[:2] == ["-p", __name__]:
            words = words[2:]
            # skillsmith's cache folder for this session (the verifier's folder is read-only).
            if words[:1] == ["-o"] and len(words) > 1 and words[1].startswith("cache_dir="):
                words = words[2:]
        if words:
            os.environ["PYTEST_ADDOPTS"] = " ".join(words)
        else:
            del os.environ["PYTEST_ADDOPTS"]
    # A test may compile on purpose (``py_compile.compile`` here, ``python -m py_compile`` in a
    # child) and must be able to write the .pyc it asks for; the read-only cache the verifier
    # starts with would fail it. This process moves to a fresh, empty cache folder of its own
    # (nothing in it was planted before this point, and code under test that opens a .pyc here
    # trips the audit hook); its children get another one, never read by this process.
    # Both live in the run's scratch folder, which skillsmith creates and removes after the
    # verifier has ended (whatever way it ended); without one, in the temporary folder.
    scratch = os.environ.pop("SKILLSMITH_VERIFIER_SCRATCH", None)
    if os.environ.get("PYTHONPYCACHEPREFIX"):
        import tempfile

        def fresh(prefix):
            if scratch:
                try:
                    return tempfile.mkdtemp(prefix=prefix, dir=scratch)
                except OSError:
                    pass
            return tempfile.mkdtemp(prefix=prefix)

        try:
            sys.pycache_prefix = fresh("skillsmith-pycache-")
        except OSError:
            pass
        try:
            os.environ["PYTHONPYCACHEPREFIX"] = fresh("skillsmith-child-pycache-")
        except OSError:
            os.environ.pop("PYTHONPYCACHEPREFIX", None)
    path = os.environ.get("PYTHONPATH")
    if path is not None:
        here = os.path.dirname(os.path.abspath(__file__))
        entries = path.split(os.pathsep)
        if entries and entries[0] and os.path.abspath(entries[0]) == here:
            entries = entries[1:]
        if entries:
            os.environ["PYTHONPATH"] = os.pathsep.join(entries)
        else:
            del os.environ["PYTHONPATH"]


# ---------------------------------------------------------------------------------------------
# Layer 1, the tripwire: a PEP 578 audit hook, registered here, before any conftest or test module
# (and so before the code under test) is imported. Audit hooks cannot be removed. It records, with
# the file and line of the Python code that asked, the audited operations an honest deliverable
# almost never performs and tampering needs: frame access, trace and profile functions, ctypes,
# code objects made or assigned, gc scans, bytecode caches opened. Only operations whose immediate
# caller is untrusted code count (a file in the workspace that is not one of the verifier's
# read-only files, or in a temporary folder): the standard library, pytest and site-packages use
# several of these on their own. CPython 3.11 raises no audit event for attribute writes on
# modules or classes: the identity snapshots below cover those.

_getframe = sys._getframe
_abspath = os.path.abspath
_access = os.access
_W_OK = os.W_OK
_sep = os.sep
_workspace_root = os.environ.get("SKILLSMITH_WORKSPACE")
_workspace_root = _abspath(_workspace_root) + _sep if _workspace_root else None
_temporary_roots = tuple(root + _sep for root in ("/tmp", "/var/tmp", "/dev/shm"))
# A suite verifier's folder, when it is read-only (bubblewrap, containers): whatever is writable in
# it (the JUnit file's own writable mount) is not the verifier's code, whatever its name.
_verifier_root = os.environ.get("SKILLSMITH_VERIFIER")
_verifier_root = (
    _abspath(_verifier_root) + _sep if _verifier_root and not os.access(_verifier_root, os.W_OK) else None
)
_here = os.path.dirname(_abspath(__file__))
# Frames that only pass a request on: the untrusted caller is further up.
_transparent_files = (_abspath(getattr(sys.modules.get("inspect"), "__file__", None) or "inspect.py"),)
_FRAME_EVENTS = frozenset(("sys._getframe", "sys._current_frames"))
_FRAME_ATTRIBUTES = frozenset(("tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"))
_FUNCTION_ATTRIBUTES = frozenset(("__code__", "__defaults__", "__kwdefaults__", "__globals__"))
_ALWAYS = frozenset(
    (
        "sys.settrace",
        "sys.setprofile",
        "code.__new__",
        "function.__new__",
        "gc.get_referrers",
        "gc.get_referents",
        "gc.get_objects",
        "ctypes.dlsym",
        "ctypes.dlsym/handle",
        "ctypes.cdata",
        "ctypes.cdata/buffer",
        "ctypes.addressof",
        "ctypes.string_at",
        "ctypes.wstring_at",
        "ctypes.call_function",
        "ctypes.dlopen",
        "marshal.loads",
        "marshal.load",
        "sys.addaudithook",
    )
)
# Events that say where code came from: a code object's file name is whatever its compiler was
# told, so the hook checks the claim where code is made (``compile``) and run (``exec``).
_ORIGIN_EVENTS = frozenset(("compile", "exec"))
_WATCHED_EVENTS = (
    _ALWAYS | _FRAME_EVENTS | _ORIGIN_EVENTS | frozenset(("object.__getattr__", "object.__setattr__", "open", "os.rename"))
)
_TRIPWIRE_LIMIT = 64
_trusted_files = {}
_tripwire_seen = set()
_tripwire_pending = []
_tripwire_busy = [False]
_channel = None
_isfile = os.path.isfile
_exists = os.path.exists
_dirname = os.path.dirname
# The import system's entry points: frozen frames below one of these are an import statement (or
# ``importlib.import_module``) at work; a frozen frame entered any other way (``source_to_code``,
# ``exec_module``, ``_compile_bytecode`` called directly) acts for its caller.
_IMPORT_ENTRIES = frozenset(("_find_and_load", "_gcd_import", "_handle_fromlist"))
# Code that compiles syntax trees of files it read itself: pytest's assertion rewriter and this
# plugin (``_compiled_source``).
_TREE_COMPILERS = (
    _abspath(os.path.join(_dirname(_pytest.main.__file__), "assertion", "rewrite.py")),
    _abspath(__file__),
)
# Code objects with a ``<…>`` name that untrusted code had run (``exec`` of a string, directly or
# through a trusted helper such as ``timeit``), each with the untrusted file and line that ran it.
_untrusted_codes = {}
# Whether untrusted code has compiled a syntax tree: the ``compile`` event does not name the file
# such code will claim, so from then on code that claims a trusted file is compared with it when run.
_trees_compiled = [False]
_own_compiles = {}
_not_compiled = object()
# Bound now, before code under test exists: a replaced ``open`` or ``compile`` must not answer
# the checks below.
_open_file = open
_compile_source = compile
_isinstance = isinstance
_type = type


def _backed_by_file(path):
    """Whether ``path`` is a file (or a member of an archive file, as zipimport names them)."""
    if _isfile(path):
        return True
    parent = _dirname(path)
    while parent and parent != path and not _exists(parent):
        path, parent = parent, _dirname(parent)
    return _isfile(parent)


def _untrusted_file(filename):
    """Whether code from ``filename`` is the code under test's (cached per file)."""
    known = _trusted_files.get(filename)
    if known is not None:
        return not known
    path = _abspath(filename)
    untrusted = False
    if filename.startswith("<"):
        untrusted = False  # ``<string>``, ``<frozen …>``: the frame walks look at their callers
    elif not _backed_by_file(path):
        # A name no file backs (``compile(payload, "/opt/none.py", …)``) is nobody's code: trusting
        # it would trust whatever was compiled under it.
        untrusted = True
    elif path.startswith(_here + _sep):
        untrusted = False
    elif _verifier_root is not None and path.startswith(_verifier_root):
        untrusted = _access(path, _W_OK)
    elif _workspace_root is not None and path.startswith(_workspace_root):
        # The verifier's own files are bind-mounted read-only over their copy in the workspace.
        untrusted = _access(path, _W_OK)
    elif path.startswith(_temporary_roots):
        untrusted = True
    _trusted_files[filename] = not untrusted
    return untrusted


def _past_import_system(frame):
    """``(the first frame below the frozen import system, whether an import statement entered it)``."""
    outermost = frame
    while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
        outermost = frame
        frame = frame.f_back
    return frame, outermost.f_code.co_name in _IMPORT_ENTRIES


def _untrusted_frame(frame):
    """``(file, line)`` when ``frame`` runs untrusted code, else None (``<…>`` code: see callers)."""
    code = frame.f_code
    filename = code.co_filename
    if filename.startswith("<"):
        return _untrusted_codes.get(code)
    if _untrusted_file(filename):
        return filename, frame.f_lineno
    return None


def _untrusted_caller():
    """``(file, line)`` of the Python code that triggered the event, when it is untrusted."""
    frame = _getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith("<frozen"):
            frame, imported = _past_import_system(frame)
            if imported:
                return None  # an import statement at work: the import system acts on its own
            continue
        if filename.startswith("<") or filename in _transparent_files:
            found = _untrusted_codes.get(frame.f_code)
            if found is not None:
                return found
            frame = frame.f_back
            continue
        return _untrusted_frame(frame)
    return None


def _untrusted_in_stack():
    """The innermost untrusted frame anywhere on the stack (a trusted helper may act for it)."""
    frame = _getframe(2)
    while frame is not None:
        found = _untrusted_frame(frame)
        if found is not None:
            return found
        frame = frame.f_back
    return None


def _file_bytes(path):
    try:
        with _open_file(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _lines(data):
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _claims_trusted_file(filename):
    return _isinstance(filename, str) and not filename.startswith("<") and not _untrusted_file(filename)


def _compile_claim(source, filename):
    """A ``compile`` event: source text must be the file it claims to be (a syntax tree's event
    names no file, so it is remembered and checked when its code runs)."""
    if _isinstance(source, (bytes, str)):
        if not _claims_trusted_file(filename):
            return None
        text = source.encode("utf-8") if _isinstance(source, str) else bytes(source)
        written = _file_bytes(filename)
        if text == written or (written is not None and _lines(text) == _lines(written)):
            return None  # the file itself (read in text mode, its line endings become "\n")
        return "code compiled as %s is not that file's source" % filename
    if _abspath(_getframe(3).f_code.co_filename) not in _TREE_COMPILERS:
        if _untrusted_in_stack() is not None:
            _trees_compiled[0] = True
    return None


def _remember_untrusted(code, origin):
    _untrusted_codes[code] = origin
    for constant in code.co_consts:
        if _type(constant) is _type(code):
            _remember_untrusted(constant, origin)


def _own_compile(filename):
    own = _own_compiles.get(filename, _not_compiled)
    if own is _not_compiled:
        source = _file_bytes(filename)
        try:
            own = None if source is None else _compile_source(source, filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            own = None
        _own_compiles[filename] = own
    return own


def _exec_claim(code):
    """An ``exec`` event: ``<…>`` code untrusted code runs is remembered as untrusted; after a
    syntax tree was compiled, code claiming a trusted file must be that file's compile."""
    filename = code.co_filename
    if filename.startswith("<"):
        if not filename.startswith("<frozen"):
            origin = _untrusted_in_stack()
            if origin is not None:
                _remember_untrusted(code, origin)
        return None
    if not _trees_compiled[0] or not _claims_trusted_file(filename):
        return None
    if _abspath(_getframe(3).f_code.co_filename) in _TREE_COMPILERS or _untrusted_in_stack() is None:
        return None
    if code == _own_compile(filename):
        return None
    return "code run as %s is not that file's compile" % filename


def _origin_problem(event, arguments):
    if event == "compile":
        return _compile_claim(arguments[0], arguments[1])
    return _exec_claim(arguments[0]) if _type(arguments[0]).__name__ == "code" else None


def _tripwire_detail(event, arguments):
    if event in _ALWAYS or event in _FRAME_EVENTS:
        return "" if event != "ctypes.dlopen" else str(arguments[0])[:200]
    if event == "object.__getattr__":
        return arguments[1] if arguments[1] in _FRAME_ATTRIBUTES else None
    if event == "object.__setattr__":
        return arguments[1] if arguments[1] in _FUNCTION_ATTRIBUTES else None
    if event == "open":
        path = arguments[0]
        if isinstance(path, bytes):
            path = path.decode("utf-8", "replace")
        path = str(path)
        return path if path.endswith((".pyc", ".pyo")) or "__pycache__" in path else None
    if event == "os.rename":
        target = str(arguments[1])
        return target if target.endswith((".pyc", ".pyo")) or "__pycache__" in target else None
    return None


def _planted_location(path):
    path = _abspath(path)
    prefix = sys.pycache_prefix
    if prefix and path.startswith(_abspath(prefix) + _sep):
        return False  # this process's own fresh cache (``_leave_children_plain``)
    if path.startswith(_temporary_roots) or (_workspace_root is not None and path.startswith(_workspace_root)):
        return True
    return _access(_dirname(path), _W_OK)


def _record_tripwire(event, detail, caller):
    key = (event, detail, caller[0], caller[1])
    if key in _tripwire_seen or len(_tripwire_seen) >= _TRIPWIRE_LIMIT:
        return
    _tripwire_seen.add(key)
    record = {"type": "tripwire", "event": event, "detail": detail, "file": caller[0], "line": caller[1]}
    if _channel is None or not _channel.ready():
        _tripwire_pending.append(record)
    else:
        _channel.send(record)


def _tripwire(event, arguments):
    if event not in _WATCHED_EVENTS or _tripwire_busy[0]:
        return
    _tripwire_busy[0] = True
    try:
        if event in _ORIGIN_EVENTS:
            problem = _origin_problem(event, arguments)
            caller = None if problem is None else _untrusted_in_stack()
            if caller is not None:
                _record_tripwire(event, problem, caller)
            return
        detail = _tripwire_detail(event, arguments)
        if detail is None:
            return
        caller = _untrusted_caller()
        if caller is not None and event in ("open", "os.rename") and _getframe(1).f_code.co_filename.startswith("<frozen"):
            # A loader called directly (``spec.loader.exec_module``) looks up caches on its own:
            # only a bytecode file somewhere code under test could have written counts.
            caller = caller if _planted_location(detail) else None
        if caller is not None:
            _record_tripwire(event, detail, caller)
    except Exception:  # an audit hook that raises would break the operation it watches
        pass
    finally:
        _tripwire_busy[0] = False


sys.addaudithook(_tripwire)

# ---------------------------------------------------------------------------------------------
# Layer 2, identity snapshots: every callable the tests may reach in the modules below (module
# attributes, and the members of the classes those modules define), recorded now, before the code
# under test exists in this process, and compared before each test and at the end. Replacing
# ``unittest.TestCase.assertEqual``, ``pytest.approx``, ``builtins.open``, ``Path.read_text`` or
# ``subprocess.run`` shows here whoever did it and however (module and class attribute writes raise
# no audit event).

_SNAPSHOT_MODULES = (
    "builtins",
    "io",
    "os",
    "posixpath",
    "pathlib",
    "subprocess",
    "json",
    "json.decoder",
    "json.encoder",
    "re",
    "shutil",
    "glob",
    "fnmatch",
    "tempfile",
    "importlib",
    "importlib.util",
    "importlib.machinery",
    "importlib.abc",
    "importlib._bootstrap",
    "importlib._bootstrap_external",
    "zipimport",
    "difflib",
    "filecmp",
    "math",
    "operator",
    "functools",
    "inspect",
    "traceback",
    "types",
    "hashlib",
    "hmac",
    "socket",
    "ast",
    "unittest",
    "unittest.case",
    "unittest.mock",
    "pytest",
    "pluggy",
)
# Attributes pytest itself sets and resets around each test.
_SNAPSHOT_VOLATILE = frozenset(
    (
        "_pytest.assertion.util._reprcompare",
        "_pytest.assertion.util._assertion_pass",
        "_pytest.assertion.util._config",
    )
)
_callable = callable
_vars = vars
_id = id
_tuple = tuple
_map = map
_getitem = operator.getitem
_is = operator.is_
_all = all
_any = any
_len = len
_ModuleType = type(sys)
_SYS_IMPORT_STATE = ("modules", "meta_path", "path_hooks", "path_importer_cache")
# Modules not snapshotted attribute by attribute whose ``sys.modules`` entry is still watched.
_SNAPSHOT_SYS_MODULES = ("sys", "builtins", "os.path", "unittest.mock", "collections", "typing", "enum", "dataclasses")


def _snapshot_modules():
    names = list(_SNAPSHOT_MODULES)
    names.extend(name for name in sorted(sys.modules) if name.startswith(("_pytest.", "pluggy.")))
    modules = []
    for name in names:
        module = sys.modules.get(name)
        if module is None:
            try:
                module = __import__(name, fromlist=["_"])
            except Exception:  # not in this Python
                continue
        modules.append((name, module))
    return modules


def _snapshot():
    """``[(module or class, attribute, label, object)]`` of every watched callable."""
    if _channel is not None and _channel.mode == "inventory":
        return []
    entries = []
    seen_classes = set()
    for name, module in _snapshot_modules():
        for attribute, value in list(_vars(module).items()):
            label = name + "." + attribute
            if label in _SNAPSHOT_VOLATILE:
                continue
            if _callable(value) or _isinstance(value, (staticmethod, classmethod, property, _ModuleType)):
                entries.append((module, attribute, label, value))
            if (
                _isinstance(value, _type)
                and id(value) not in seen_classes
                and getattr(value, "__module__", None) in (name, module.__name__)
            ):
                seen_classes.add(id(value))
                for member, member_value in list(_vars(value).items()):
                    if member in ("__dict__", "__weakref__", "__doc__", "__module__", "__abstractmethods__"):
                        continue
                    if not (_callable(member_value) or _isinstance(member_value, (staticmethod, classmethod, property))):
                        continue
                    entries.append((value, member, label + "." + member, member_value))
    # The import system's state: the module table and the hook lists themselves (their contents
    # are compared by ``_import_hooks_changed``), and the table's entry of every watched module, so
    # ``sys.modules["json"] = fake`` (served to every later ``import json``) is a replacement too.
    for attribute in _SYS_IMPORT_STATE:
        entries.append((sys, attribute, "sys." + attribute, getattr(sys, attribute)))
    modules = sys.modules
    for name in sorted(set(_SNAPSHOT_MODULES + _SNAPSHOT_SYS_MODULES) | {name for name, _ in _snapshot_modules()}):
        if name in modules:
            entries.append((modules, name, "sys.modules[%r]" % name, modules[name]))
    return entries


_missing = object()


_pytest_folder = os.path.dirname(_abspath(_pytest.main.__file__)) + _sep


def _pytest_own(value):
    """pytest patches a few of its own classes while it configures (``legacypath`` installs
    ``Config._getini_unknown_type``): a replacement whose code is pytest's own is not evidence."""
    code = getattr(_unwrap(value), "__code__", None)
    return code is not None and _abspath(code.co_filename).startswith(_pytest_folder)


class _Watch:
    """The snapshot flattened for one pass in C before every test.

    ``map(getitem, namespaces, attributes)`` fetches every watched attribute from its module's or
    class's namespace and ``map(is_, ..., accepted)`` compares each with what was accepted, by
    identity, inside the interpreter's C loops; ``all`` stops at the first difference. No Python
    loop over 6,000 callables per test, and nothing of the replacement runs: ``is`` calls no
    ``__eq__`` (a tuple ``==`` would ask a replacement whether it equals the original). Only when
    something differs (or was deleted) is the snapshot walked entry by entry, with the rule of
    ``_changed_identities``."""

    def __init__(self, entries):
        self.entries = []
        namespaces = {}
        for entry in entries:
            owner = entry[0]
            if _id(owner) not in namespaces:
                if _type(owner) is dict:
                    namespaces[_id(owner)] = owner
                else:
                    try:
                        namespaces[_id(owner)] = _vars(owner)
                    except TypeError:
                        namespaces[_id(owner)] = None
            if namespaces[_id(owner)] is not None:
                self.entries.append(entry)
        self.namespaces = _tuple(namespaces[_id(entry[0])] for entry in self.entries)
        self.attributes = _tuple(entry[1] for entry in self.entries)
        self.accepted = self.originals()

    def extend(self, entries):
        """Watch more entries from now on (the verifier's own modules' bindings, at collection),
        each accepted as given: they are checked against the source before they are added."""
        accepted = list(self.accepted)
        for entry in entries:
            self.entries.append(entry)
            accepted.append(entry[3])
        self.namespaces = self.namespaces + _tuple(
            entry[0] if _type(entry[0]) is dict else _vars(entry[0]) for entry in entries
        )
        self.attributes = self.attributes + _tuple(entry[1] for entry in entries)
        self.accepted = _tuple(accepted)

    def originals(self):
        return _tuple(entry[3] for entry in self.entries)

    def current(self):
        """The watched objects now; None when one was deleted."""
        try:
            return _tuple(_map(_getitem, self.namespaces, self.attributes))
        except KeyError:
            return None

    def unchanged(self):
        try:
            return _all(_map(_is, _map(_getitem, self.namespaces, self.attributes), self.accepted))
        except KeyError:
            return False


def _changed_identities():
    if _WATCH.unchanged():
        return []
    changed = []
    for (owner, attribute, label, value), namespace in zip(_WATCH.entries, _WATCH.namespaces):
        now = namespace.get(attribute, _missing)
        if now is not value and not _pytest_own(now):
            changed.append(label)
    current = _WATCH.current()
    if not changed and current is not None:
        # Only pytest replaced its own (accepted, as always): the fast path holds again.
        _WATCH.accepted = current
    return changed


def _origin_of(hook):
    """The file whose code a finder, loader or path hook runs (None when it has no Python code:
    the import system's own, built in or frozen)."""
    candidates = [hook]
    kind = hook if _isinstance(hook, _type) else _type(hook)
    for name in ("find_spec", "find_module", "__call__", "exec_module", "load_module"):
        candidates.append(getattr(kind, name, None))
    for candidate in candidates:
        code = getattr(_unwrap(candidate), "__code__", None)
        if code is not None:
            return code.co_filename
    module = sys.modules.get(getattr(kind, "__module__", None) or "")
    file = getattr(module, "__file__", None)
    return file if _isinstance(file, str) else None


class _ImportHooks:
    """``sys.meta_path``, ``sys.path_hooks`` and the finders cached in ``sys.path_importer_cache``:
    where later imports come from. A finder, path hook or cached finder added by untrusted code
    (the workspace, a temporary folder) can serve a fake module to the verifier's next ``import``,
    whatever ``sys.modules`` held when the snapshot was taken; removing one of the import system's
    own is reported too. Ones whose code lives elsewhere (pytest's assertion rewriter, a library of
    the environment, the stdlib's ``FileFinder`` for a new folder) are accepted. Compared before
    each test: the two lists by identity in one pass, the cache by the set of its finders' types."""

    def __init__(self):
        self.meta_path = _tuple(sys.meta_path)
        self.path_hooks = _tuple(sys.path_hooks)
        self.cache_types = frozenset(_map(_type, sys.path_importer_cache.values()))
        self.reported = set()

    @staticmethod
    def _same(now, accepted):
        return _len(now) == _len(accepted) and _all(_map(_is, now, accepted))

    def changed(self):
        meta_path, path_hooks = sys.meta_path, sys.path_hooks
        cache = sys.path_importer_cache
        if (
            self._same(meta_path, self.meta_path)
            and self._same(path_hooks, self.path_hooks)
            and frozenset(_map(_type, cache.values())) <= self.cache_types
        ):
            return []
        problems = []
        for label, now, accepted in (
            ("sys.meta_path", _tuple(meta_path), self.meta_path),
            ("sys.path_hooks", _tuple(path_hooks), self.path_hooks),
        ):
            known = {_id(hook) for hook in accepted}
            for hook in now:
                if _id(hook) in known:
                    continue
                origin = _origin_of(hook)
                if origin is not None and _untrusted_file(origin):
                    problems.append("%s: an import hook from %s was inserted (%s)" % (label, origin, _describe(hook)))
            present = {_id(hook) for hook in now}
            for hook in accepted:
                if _id(hook) not in present and _origin_of(hook) is None:
                    problems.append("%s: the import system's %s was removed" % (label, _describe(hook)))
        accepted_types = set(self.cache_types)
        for folder, finder in list(cache.items()):
            kind = _type(finder)
            if kind in accepted_types:
                continue
            origin = _origin_of(finder)
            if origin is not None and _untrusted_file(origin):
                problems.append(
                    "sys.path_importer_cache: a finder from %s serves %s (%s)" % (origin, folder, _describe(finder))
                )
            else:
                accepted_types.add(kind)
        if not problems:
            # Only trusted code changed them (pytest's rewriter, a library): the fast path holds.
            self.meta_path, self.path_hooks = _tuple(meta_path), _tuple(path_hooks)
            self.cache_types = frozenset(accepted_types)
        return problems


def _rebaseline_import_hooks():
    global _IMPORT_HOOKS
    if _IMPORT_HOOKS is not None:
        _IMPORT_HOOKS = _ImportHooks()


# Connected first: an inventory runs no test, so it compares nothing against a snapshot (what its
# last record says was replaced is not read) and skips the imports the snapshot needs. Modules
# preloaded from the workspace are still looked for after the snapshot imported its modules.
_channel = _connect()
# The modes that report an inventory (collected ids, failed modules' sources, the exit status).
_LISTING_MODES = ("inventory", "inventory-run")
_IDENTITIES = _snapshot()
_WATCH = _Watch(_IDENTITIES)
_IMPORT_HOOKS = _ImportHooks() if _IDENTITIES else None
_identity_reported = set()

_preloaded = _preloaded_from_workspace()
_leave_children_plain()
_armed = False
_session_items = {}
_tests = {}
_collected_code = {}
_module_sources = {}
_canary_items = {}


def _send(record):
    if _channel is not None:
        _channel.send(record)


def _safely(function, *args):
    """Our hooks never break pytest: an internal failure becomes a record and the run goes on."""
    try:
        return function(*args)
    except Exception as error:
        try:
            _send(
                {
                    "type": "plugin-error",
                    "where": function.__name__,
                    "error": "".join(_format_exception(type(error), error, error.__traceback__))[-_MESSAGE_LIMIT:],
                }
            )
        except Exception:
            pass
        return None


def _path_of(node):
    path = getattr(node, "path", None)
    if path is None:
        path = getattr(node, "fspath", None)
    return None if path is None else str(path)


def _python_patterns(config, name, default):
    try:
        value = config.getini(name)
    except (ValueError, KeyError):
        return list(default)
    return list(value) if value else list(default)


def _matches(name, patterns):
    for pattern in patterns:
        if name.startswith(pattern):
            return True
        if any(character in pattern for character in "*?[") and fnmatch.fnmatch(name, pattern):
            return True
    return False


def _dotted(node):
    if isinstance(node, ast.Attribute):
        return _dotted(node.value) + "." + node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


def _assigned_name(statement):
    """The name a plain ``NAME = value`` statement binds, else None."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    return None


def _literal_values(node):
    return isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(element, ast.Starred) for element in node.elts)


def _constant_lists(tree):
    """Module-level names bound once to a literal list or tuple and used nowhere but as a
    ``parametrize`` mark's values: provably what the mark sees, so they pin instances as a literal
    written in the mark does. Any other binding or use of the name (``CASES.append``, ``CASES +=``,
    ``global CASES``, an import or ``del`` of it, a ``for`` over it), or ``globals``/``vars``/
    ``setattr``/``__dict__``/a star import anywhere in the module, and the name is not resolved."""
    marks_values = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _dotted(node.func).endswith("parametrize"):
            values = node.args[1] if len(node.args) > 1 else None
            for keyword in node.keywords:
                if keyword.arg == "argvalues":
                    values = keyword.value
            if isinstance(values, ast.Name):
                marks_values.add(id(values))
    candidates = {}
    for statement in tree.body:
        name = _assigned_name(statement)
        if name is not None and _literal_values(statement.value):
            candidates[name] = None if name in candidates else (statement.targets[0], statement.value)
    unsafe = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in candidates:
            binding = candidates[node.id]
            if binding is None or (node is not binding[0] and id(node) not in marks_values):
                unsafe.add(node.id)
            if node.id in ("globals", "vars", "setattr"):
                return {}
        elif isinstance(node, ast.Name) and node.id in ("globals", "vars", "setattr"):
            return {}
        elif isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return {}
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            unsafe.update(node.names)
        elif isinstance(node, ast.alias):
            if node.name == "*":
                return {}
            unsafe.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            unsafe.add(node.name)
        else:
            for field in ("name", "rest"):
                value = getattr(node, field, None)
                if isinstance(value, str) and not isinstance(node, ast.alias):
                    unsafe.add(value)
    return {name: binding[1] for name, binding in candidates.items() if binding is not None and name not in unsafe}


def _argvalues(decorator, constants):
    """A ``parametrize`` mark's values as a literal list or tuple node, or None."""
    values = decorator.args[1] if len(decorator.args) > 1 else None
    for keyword in decorator.keywords:
        if keyword.arg == "argvalues":
            values = keyword.value
    if isinstance(values, ast.Name):
        values = constants.get(values.id)
    return values if _literal_values(values) else None


def _parametrize_count(decorator, constants):
    """Instances a ``parametrize`` mark makes at least (1 when its values are not a literal)."""
    if not isinstance(decorator, ast.Call) or not _dotted(decorator.func).endswith("parametrize"):
        return None
    values = _argvalues(decorator, constants)
    return 1 if values is None else max(1, len(values.elts))


def _marks_count(decorators, constants):
    count, parametrised = 1, False
    for decorator in decorators:
        instances = _parametrize_count(decorator, constants)
        if instances is not None:
            count *= instances
            parametrised = True
    return count, parametrised


def _argnames(decorator):
    """The argument names a literal ``parametrize`` mark sets, or None when not literal."""
    names = decorator.args[0] if decorator.args else None
    for keyword in decorator.keywords:
        if keyword.arg == "argnames":
            names = keyword.value
    if isinstance(names, ast.Constant) and isinstance(names.value, str):
        return {name.strip() for name in names.value.split(",") if name.strip()}
    if isinstance(names, (ast.List, ast.Tuple)) and all(
        isinstance(element, ast.Constant) and isinstance(element.value, str) for element in names.elts
    ):
        return {element.value for element in names.elts}
    return None


def _exact_instances(definition, decorators, open_ended, constants):
    """Whether the literal marks fix a test's instances exactly: every mark is a literal list and
    every argument of the function is one they set (no fixture of the function can multiply it),
    in a module with no ``pytest_generate_tests`` or autouse fixture (``open_ended``). Tests
    inflated past that number (read hundreds of times from source) are then caught."""
    if open_ended:
        return False
    covered = set()
    for decorator in decorators:
        if _parametrize_count(decorator, constants) is None:
            continue
        names = _argnames(decorator)
        literal = _argvalues(decorator, constants) is not None
        if names is None or not literal or decorator.keywords and any(k.arg == "indirect" for k in decorator.keywords):
            return False
        covered |= names
    arguments = {argument.arg for argument in definition.args.args + definition.args.kwonlyargs}
    return arguments - {"self", "cls"} <= covered


def _pytestmark(body):
    marks = []
    for statement in body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in statement.targets
        ):
            value = statement.value
            marks.extend(value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value])
    return marks


def _plugin_names(value):
    """The module names a ``pytest_plugins`` value declares (a string or a sequence of them)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [name for name in value if isinstance(name, str)]
    return []


def _declared_in_source(source):
    """``pytest_plugins`` declared at the top of a module's source (literal values only)."""
    names = []
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytest_plugins" for target in statement.targets
        ):
            try:
                names.extend(_plugin_names(ast.literal_eval(statement.value)))
            except ValueError:
                pass
    return names


def _defined_tests(source, module_nodeid, config):
    """Test ids a module's source defines, for a module that could not be collected."""
    functions = _python_patterns(config, "python_functions", ["test"])
    classes = _python_patterns(config, "python_classes", ["Test"])
    tree = ast.parse(source)
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    open_ended = "pytest_generate_tests" in text or "autouse" in text
    constants = _constant_lists(tree)
    found = []
    module_marks = _pytestmark(tree.body)
    top_classes = {statement.name: statement for statement in tree.body if isinstance(statement, ast.ClassDef)}

    def methods_of(definition, seen):
        members = {}
        for base in definition.bases:
            name = _dotted(base)
            if name in top_classes and name not in seen:
                members.update(methods_of(top_classes[name], seen | {name}))
        for statement in definition.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                members[statement.name] = statement
        return members

    def visit_class(definition, prefix, inherited_marks):
        bases = [_dotted(base) for base in definition.bases]
        unittest_case = any(name.endswith("TestCase") for name in bases)
        if not unittest_case:
            if not _matches(definition.name, classes):
                return
            if any(
                isinstance(statement, ast.FunctionDef) and statement.name in ("__init__", "__new__")
                for statement in definition.body
            ):
                return
        marks = inherited_marks + list(definition.decorator_list) + _pytestmark(definition.body)
        for name, member in sorted(methods_of(definition, {definition.name}).items()):
            if (name.startswith("test") if unittest_case else _matches(name, functions)):
                decorators = marks + list(member.decorator_list)
                count, parametrised = _marks_count(decorators, constants)
                found.append(
                    {
                        "base": prefix + "::" + definition.name + "::" + name,
                        "min": count,
                        "parametrised": parametrised,
                        "exact": _exact_instances(member, decorators, open_ended, constants),
                    }
                )
        for statement in definition.body:
            if isinstance(statement, ast.ClassDef) and not unittest_case:
                visit_class(statement, prefix + "::" + definition.name, marks)

    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and _matches(statement.name, functions):
            decorators = module_marks + list(statement.decorator_list)
            count, parametrised = _marks_count(decorators, constants)
            found.append(
                {
                    "base": module_nodeid + "::" + statement.name,
                    "min": count,
                    "parametrised": parametrised,
                    "exact": _exact_instances(statement, decorators, open_ended, constants),
                }
            )
        elif isinstance(statement, ast.ImportFrom):
            for alias in statement.names:
                name = alias.asname or alias.name
                if _matches(name, functions):
                    found.append({"base": module_nodeid + "::" + name, "min": 1, "parametrised": False})
        elif isinstance(statement, ast.ClassDef):
            visit_class(statement, module_nodeid, module_marks)
    return found


def _definition_lines(path):
    """``qualified name -> (def line, first decorator line)`` of a test file, read once."""
    if path in _module_sources:
        return _module_sources[path]
    lines = {}
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read())

        def visit(body, prefix):
            for statement in body:
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    first = statement.decorator_list[0].lineno if statement.decorator_list else statement.lineno
                    lines[prefix + statement.name] = (statement.lineno, first)
                elif isinstance(statement, ast.ClassDef):
                    visit(statement.body, prefix + statement.name + ".")

        visit(tree.body, "")
    except (OSError, SyntaxError, ValueError):
        pass
    _module_sources[path] = lines
    return lines


# ---------------------------------------------------------------------------------------------
# Layer 3, what runs is what was written: each collected test's code is compared with this
# plugin's own compile of the test's read-only source (through pytest's assertion rewriter when
# pytest rewrote the module), at collection and again before the test runs. Bytecode rewritten in
# place (ctypes on the same code object), a function swapped at collection or a code object built
# elsewhere all differ.

_compile = compile
_read_source_cache = {}


def _rewrite_asserts():
    try:
        from _pytest.assertion.rewrite import rewrite_asserts

        return rewrite_asserts
    except ImportError:  # a pytest without the rewriter: nothing is rewritten
        return None


_rewrite = _rewrite_asserts()


def _compiled_source(path, rewritten, config):
    """The module code skillsmith compiles from ``path``'s source (None when it cannot)."""
    key = (path, rewritten)
    if key in _read_source_cache:
        return _read_source_cache[key]
    code = None
    try:
        with open(path, "rb") as handle:
            source = handle.read()
        tree = ast.parse(source, filename=path)
        if rewritten and _rewrite is not None:
            _rewrite(tree, source, path, config)
        code = _compile(tree, path, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError, TypeError):
        code = None
    _read_source_cache[key] = code
    return code


def _find_code(module_code, name, line):
    pending = [module_code]
    while pending:
        code = pending.pop()
        for constant in code.co_consts:
            if _type(constant) is _type(module_code):
                if constant.co_name == name and constant.co_firstlineno == line:
                    return constant
                pending.append(constant)
    return None


def _same_constant(left, right):
    if _type(left) is not _type(right):
        return False
    if _type(left) is _type(_same_code.__code__):
        return _same_code(left, right)
    if _type(left) in (tuple, frozenset):
        if len(left) != len(right):
            return False
        if _type(left) is frozenset:
            return left == right
        return all(_same_constant(a, b) for a, b in zip(left, right))
    return left == right or (left != left and right != right)


def _deopt_table():
    """CPython 3.11 keeps a code object's bytecode inline and rewrites it as it specialises;
    ``co_code`` is a copy made once and cached, so a rewrite in place (ctypes) after the first
    read does not show there. This reads the live bytes and undoes specialisation and inline
    caches the way CPython's own ``co_code`` does."""
    try:
        import ctypes
        import dis
        import opcode

        deopt = {}
        for base, specialised in opcode._specializations.items():
            for name in specialised:
                deopt[dis._all_opmap[name]] = opcode.opmap[base]
        deopt[dis._all_opmap["EXTENDED_ARG_QUICK"]] = opcode.opmap["EXTENDED_ARG"]
        return ctypes.string_at, deopt, list(opcode._inline_cache_entries)
    except (ImportError, AttributeError, KeyError):  # another Python: co_code is live there
        return None


_DEOPT = _deopt_table() if sys.version_info[:2] == (3, 11) else None


def _live_code(code):
    if _DEOPT is None:
        return code.co_code
    string_at, deopt, caches = _DEOPT
    length = len(code.co_code)
    raw = string_at(id(code) + _type(code).__basicsize__, length)
    out = bytearray()
    index = 0
    while index < length:
        operation = deopt.get(raw[index], raw[index])
        out.append(operation)
        out.append(raw[index + 1])
        count = caches[operation] if operation < len(caches) else 0
        out.extend(b"\0\0" * count)
        index += 2 + 2 * count
    return bytes(out)


def _same_code(left, right):
    return (
        _live_code(left) == _live_code(right)
        and left.co_names == right.co_names
        and left.co_varnames == right.co_varnames
        and len(left.co_consts) == len(right.co_consts)
        and all(_same_constant(a, b) for a, b in zip(left.co_consts, right.co_consts))
    )


def _expected_code(function, config):
    """This plugin's compile of the test function's source, or a reason it has none."""
    code = function.__code__
    path = code.co_filename
    if not os.path.isfile(path):
        return None, "its code comes from %s, which is not a file" % path
    rewritten = "@py_builtins" in getattr(function, "__globals__", {})
    module_code = _compiled_source(path, rewritten, config)
    if module_code is None:
        return None, None
    expected = _find_code(module_code, code.co_name, code.co_firstlineno)
    if expected is None:
        return None, "its code (%s, line %d) is not in the source of %s" % (code.co_name, code.co_firstlineno, path)
    return expected, None


def _test_callable(item):
    """The function a test item runs: a plain test function, or a unittest test method."""
    function = _function_of(item)
    if function is not None:
        return function
    parent = getattr(getattr(item, "parent", None), "obj", None)
    if _type(item).__name__ == "TestCaseFunction" and parent is not None:
        method = _unwrap(getattr(parent, str(getattr(item, "originalname", None) or item.name), None))
        return method if hasattr(method, "__code__") else None
    return None


def _function_of(item):
    if type(item) is not _pytest.python.Function:
        return None
    function = _unwrap(getattr(item, "obj", None))
    return function if hasattr(function, "__code__") else None


# ---------------------------------------------------------------------------------------------
# Hooks. pluggy passes arguments by the names in each hook's signature, so every hook is a plain
# function with pytest's parameter names that hands its work to ``_safely``.


def _rebaseline_identities():
    """Accept what the environment's own pytest plugins replaced before any workspace code ran.

    Entry-point plugins (``pytest11``: hypothesis patches ``FixtureFunctionMarker.__call__``, for
    one) load after this module and before the initial conftests, the first workspace code pytest
    imports. A replacement made by then whose code is not the workspace's (nor a temporary file's)
    is the environment's, not the code under test's; later replacements stay evidence."""
    for index, (owner, attribute, label, value) in enumerate(_WATCH.entries):
        current = _WATCH.namespaces[index].get(attribute, _missing)
        if current is value or current is _missing:
            continue
        code = getattr(_unwrap(current), "__code__", None)
        if code is not None and not _untrusted_file(code.co_filename):
            _WATCH.entries[index] = (owner, attribute, label, current)
    # The originals as now accepted: a deleted or untrusted replacement still differs.
    _WATCH.accepted = _WATCH.originals()
    # pytest's assertion rewriter is on sys.meta_path by now; an environment plugin's hook too.
    _rebaseline_import_hooks()


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config):
    _safely(lambda _config: _rebaseline_identities(), early_config)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    _safely(_configure, config)


def _configure(config):
    config.pluginmanager.register(_CallObserver(), "skillsmith-verifier-observer")
    _send(
        {
            "type": "start",
            "mode": _channel.mode if _channel is not None else None,
            "pid": _getpid(),
            "python": sys.version.split()[0],
            "pytest": pytest.__version__,
            "rootdir": str(getattr(config, "rootpath", getattr(config, "rootdir", ""))),
            "python_functions": _python_patterns(config, "python_functions", ["test"]),
            "preloaded": _preloaded,
        }
    )
    while _tripwire_pending:
        _send(_tripwire_pending.pop(0))


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    # Plugins registered from here on did not come from the command line or pytest itself.
    global _armed
    _armed = True


def pytest_plugin_registered(plugin, manager):
    _safely(_registered, plugin, manager)


def _registered(plugin, manager):
    if not _armed:
        return
    file = getattr(plugin, "__file__", None)
    _send(
        {
            "type": "registered",
            "name": str(manager.get_name(plugin)),
            "object": _describe(plugin) if file is None else str(getattr(plugin, "__name__", "?")),
            "file": None if file is None else str(file),
            "conftest": file is not None and os.path.basename(str(file)) == "conftest.py",
        }
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _safely(_collect_report, collector, outcome)


def _collect_report(collector, outcome):
    report = outcome.get_result()
    if not getattr(report, "failed", False):
        return
    path = _path_of(collector)
    record = {"type": "collect-error", "nodeid": report.nodeid, "message": _message(report), "path": path}
    if isinstance(collector, pytest.Module):
        if _channel is not None and _channel.mode in _LISTING_MODES and path is not None:
            with open(path, "rb") as handle:
                source = handle.read()
            record["defined"] = _defined_tests(source, report.nodeid, collector.config)
            record["declared_plugins"] = _declared_in_source(source)
    _send(record)


def pytest_itemcollected(item):
    _safely(_item_collected, item)


def _item_collected(item):
    # Canaries are named by file and function, not node id: pytest's root folder (and so every
    # node id's prefix) may differ between the inventory and this run.
    if _channel is not None and "%s::%s" % (_path_of(item), item.name) in _channel.canaries:
        _canary_items[item.nodeid] = item
    function = _test_callable(item)
    if function is None:
        return
    code = function.__code__
    record = {"function": function, "code": code, "origin": None, "expected": None}
    expected, reason = _expected_code(function, item.config)
    if expected is not None and not _same_code(code, expected):
        record["origin"] = "its bytecode is not the compile of its source"
    elif reason is not None:
        record["origin"] = reason
    record["expected"] = expected
    path = _path_of(item)
    if path is not None:
        qualified = getattr(function, "__qualname__", function.__name__)
        lines = _definition_lines(path)
        if qualified in lines:
            if os.path.abspath(code.co_filename) != os.path.abspath(path):
                record["origin"] = "its code comes from %s, not from %s" % (code.co_filename, path)
            elif code.co_firstlineno not in lines[qualified]:
                record["origin"] = "its code starts at line %d, the definition at line %d" % (
                    code.co_firstlineno,
                    lines[qualified][0],
                )
    _collected_code[item.nodeid] = record


def _insertion_points(items, start, end):
    """Indexes in ``items[start:end]`` (one module's run) where a canary can go without moving
    anything out of its class: the start, the end, and every boundary of a class or function."""
    points = [start, end]
    for index in range(start + 1, end):
        before, after = items[index - 1], items[index]
        if before.parent is not after.parent or isinstance(after.parent, pytest.Module):
            points.append(index)
    return sorted(set(points))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    _safely(_place_canaries, config, items)


def _place_canaries(config, items):
    if _channel is None or _channel.mode != "run" or not _canary_items:
        return
    canaries = [item for _, item in sorted(_canary_items.items())]
    remaining = [item for item in items if item.nodeid not in _canary_items]
    # A selection option of the verifier (-k, -m, --deselect) may have dropped the canaries:
    # they are skillsmith's, not the verifier's, so they go back in, inside their own module.
    module = canaries[0].parent
    positions = [index for index, item in enumerate(remaining) if item.parent is module or item.parent.parent is module]
    start, end = (positions[0], positions[-1] + 1) if positions else (len(remaining), len(remaining))
    # With -x / --maxfail / --sw the first failure ends the session: canaries go last, so the
    # must-fail one never stops the verifier's own checks.
    stops_early = bool(config.getoption("maxfail", 0)) or bool(config.getoption("stepwise", False))
    generator = random.SystemRandom()
    for canary in canaries:
        index = end if stops_early else generator.choice(_insertion_points(remaining, start, end))
        remaining.insert(index, canary)
        end += 1
    items[:] = remaining


def pytest_collection_finish(session):
    _safely(_collection_finish, session)


_verifier_modules = []


def _note_verifier_modules(items):
    """Modules beside the collected test files that are the verifier's own (read-only, so
    trusted): a planted package, extension or ``sys.modules`` entry of the same name would be
    imported instead of them."""
    folders = {os.path.dirname(_abspath(path)) for path in (_path_of(item) for item in items) if path}
    for folder in sorted(folders):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if name.endswith(".py") and name != "__init__.py" and not _untrusted_file(path):
                _verifier_modules.append((_dotted_name(folder, name[:-3]), path))


def _dotted_name(folder, stem):
    """The name ``stem`` in ``folder`` is imported under: dotted through the packages (folders
    holding ``__init__.py``) above it, as pytest's default import mode names a test module and its
    neighbours (``tests/conftest.py`` in a package is ``tests.conftest``, while a ``conftest.py``
    above the package is ``conftest``)."""
    parts = [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return ".".join(parts)


def _shadowed_verifier_modules():
    found = []
    for name, path in _verifier_modules:
        module = sys.modules.get(name)
        if module is None:
            continue
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or _abspath(file) != path:
            found.append("the verifier's module %s was loaded from %s, not from %s" % (name, file, path))
    return found


# ---------------------------------------------------------------------------------------------
# Layer 2, the verifier's own namespaces. A test reads ``os``, ``json``, ``pytest`` or ``open``
# through its module's globals, and its cases through module-level constants: rebinding
# ``test_module.json`` to a fake, defining ``open`` in the module (it shadows the builtin),
# rebinding or extending ``CASES``, or adding to ``builtins`` a name the module reads but never
# defines changes what the checks see with every watched object untouched. Each verifier module
# (the collected test modules and the modules beside them) is compared with its read-only source:
# names the source never binds must not appear in it, names bound once by an import of a watched
# module must be the snapshot's objects, constants bound once to an immutable literal (or a list
# used only as ``parametrize`` values) must still hold that literal; then, before each test, the
# bindings by identity (in the one-pass comparison) and the namespace's size.

_DYNAMIC_NAMES = frozenset(("globals", "vars", "setattr", "exec", "eval", "__import__", "locals"))
_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None))


def _pytest_name(key):
    """Names pytest itself puts into a test module: dunders, the assertion rewriter's ``@py_*``,
    and its xunit fixtures (``self.obj.__pytest_setup_module``, name-mangled by its class)."""
    return (key.startswith("__") and key.endswith("__")) or key.startswith("@") or "__pytest_" in key


def _same_literal(value, expected):
    """Equal and of exactly the same types all the way down, without asking ``value`` anything."""
    if _type(value) is not _type(expected):
        return False
    if _type(expected) in (tuple, list):
        return _len(value) == _len(expected) and _all(_map(_same_literal, value, expected))
    if _type(expected) is float:
        return repr(value) == repr(expected)
    return value == expected


def _immutable_literal(value):
    if _type(value) is tuple:
        return _all(_map(_immutable_literal, value))
    return _type(value) in _IMMUTABLE


def _same_data(value, expected):
    """``_same_literal`` for containers a test only reads (lists, dicts, sets, nested), without
    asking ``value`` anything: exact types all the way down, keys and members compared by the
    builtin types' own hashing."""
    kind = _type(expected)
    if _type(value) is not kind:
        return False
    if kind is dict:
        if _len(value) != _len(expected):
            return False
        for key, item in dict.items(value):
            if not _immutable_literal(key):
                return False
            wanted = expected.get(key, _missing)
            if wanted is _missing or not _same_data(item, wanted):
                return False
        return True
    if kind in (set, frozenset):
        return _len(value) == _len(expected) and _all(
            _immutable_literal(member) and member in expected for member in kind.__iter__(value)
        )
    if kind in (tuple, list):
        return _len(value) == _len(expected) and _all(_map(_same_data, value, expected))
    return _same_literal(value, expected)


def _literal_size(value):
    if _type(value) is dict:
        return 1 + _sum(_literal_size(key) + _literal_size(item) for key, item in value.items())
    if _type(value) in (list, tuple, set, frozenset):
        return 1 + _sum(_map(_literal_size, value))
    return 1


def _flat_literal(value):
    """A container whose members (a dict's values) are all immutable: reading one hands out
    nothing that can be changed."""
    members = value.values() if _type(value) is dict else value
    return _all(_map(_immutable_literal, members))


# Uses of a container that cannot change it. Builtins that hand its members out (``sorted``,
# ``.get``, a ``for``) only when those members are immutable themselves.
_READING_CALLS = frozenset(("len", "repr", "str", "bool", "print", "isinstance", "hash", "id", "type", "format"))
_MEMBER_CALLS = frozenset(
    ("sorted", "list", "tuple", "set", "frozenset", "dict", "sum", "min", "max", "any", "all", "enumerate", "zip", "reversed", "iter")
)
_READING_METHODS = frozenset(("get", "items", "keys", "values", "copy", "count", "index"))
# Largest literal compared before every test: 500 members cost 0.14-0.16 ms of CPU per comparison
# (measured with two busy loops beside it; 2,800 members cost 1.1 ms).
_DATA_WATCH_LIMIT = 500


def _read_only_use(node, parents, flat):
    """Whether what the source does with ``node`` (a use of a module-level container) only reads it."""
    while True:
        parent = parents.get(_id(node))
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if not isinstance(parent.ctx, ast.Load):
                return False
            if flat:
                return True
            node = parent  # a nested member: what is done with it decides
            continue
        if isinstance(parent, (ast.Compare, ast.FormattedValue)):
            return True
        if isinstance(parent, (ast.If, ast.While, ast.Assert, ast.IfExp)) and parent.test is node:
            return True
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            return True
        if isinstance(parent, ast.Call) and node in parent.args:
            called = parent.func.id if isinstance(parent.func, ast.Name) else None
            return called in _READING_CALLS or (flat and called in _MEMBER_CALLS)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            call = parents.get(_id(parent))
            return flat and parent.attr in _READING_METHODS and isinstance(call, ast.Call) and call.func is parent
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is node:
            return flat
        return False


def _parents(tree):
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[_id(child)] = node
    return parents


def _foreign_writes(tree):
    """Names this module may change in the verifier's other modules: imported by name, or used as
    ``module.NAME`` in any way but a plain read."""
    names = set()
    parents = None
    for node in ast.walk(tree):
        if isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[-1])
        elif isinstance(node, ast.Attribute):
            parents = parents or _parents(tree)
            if not isinstance(node.ctx, ast.Load) or not _read_only_use(node, parents, False):
                names.add(node.attr)
    return names


def _read_only_data(tree, sites, constants, foreign):
    """Module-level names bound once to a literal holding a list, dict or set, that the verifier's
    source only ever reads (compares, indexes, measures, prints): a change to their contents is
    not the verifier's doing. ``CACHE = {}`` filled by a test, or a list handed to any function,
    is not among them."""
    candidates = {}
    for statement in tree.body:
        name = _assigned_name(statement)
        if name is not None and sites.get(name) == 1 and name not in constants and name not in foreign:
            try:
                value = ast.literal_eval(statement.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            if not _immutable_literal(value) and _literal_size(value) <= _DATA_WATCH_LIMIT:
                candidates[name] = (statement.targets[0], value)
    if not candidates:
        return {}
    # ``sys.modules[__name__].NAME[…] = …`` in the module itself changes it too.
    for name in _foreign_writes(tree).intersection(candidates):
        del candidates[name]
    parents = _parents(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in candidates:
            binding, value = candidates[node.id]
            if node is not binding and not _read_only_use(node, parents, _flat_literal(value)):
                del candidates[node.id]
    return {name: value for name, (binding, value) in candidates.items()}


_original_modules = {}
_original_attributes = {}
_namespaces = []  # [module name, namespace, allowed names, size accepted, builtins' candidates]
_sum = sum
_data_watches = []  # (module name, name, the container, its literal): compared before each test
_builtins_namespace = vars(builtins)
_builtins_names = frozenset(vars(builtins))
_modules_seen = [0]


def _index_snapshot():
    for owner, attribute, label, value in _IDENTITIES:
        if owner is sys.modules:
            _original_modules[attribute] = value
        elif _type(owner) is _ModuleType:
            _original_attributes[(_id(owner), attribute)] = value


def _expected_import(statement, alias):
    """The snapshot's object an import statement binds, or ``_missing`` when it is not watched."""
    if isinstance(statement, ast.Import):
        name = alias.name if alias.asname else alias.name.split(".")[0]
        return _original_modules.get(name, _missing)
    if statement.level or not statement.module:
        return _missing
    submodule = _original_modules.get(statement.module + "." + alias.name)
    if submodule is not None:
        return submodule
    module = _original_modules.get(statement.module)
    if module is None:
        return _missing
    return _original_attributes.get((_id(module), alias.name), _missing)


def _source_bindings(tree):
    """``(every name the source may bind anywhere, sites binding each, names it reads)``, or None
    when the module binds names the source does not show (``globals()``, ``exec``, a star import)."""
    sites = {}
    loaded = set()

    def bind(name):
        sites[name] = sites.get(name, 0) + 1

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in _DYNAMIC_NAMES:
                return None
            if isinstance(node.ctx, ast.Load):
                loaded.add(node.id)
            else:
                bind(node.id)
        elif isinstance(node, ast.Attribute):
            if node.attr == "__dict__":
                return None
            if not isinstance(node.ctx, ast.Load):
                # ``module.STATE = …`` in a ``setup_module``: the source may set it on its module.
                bind(node.attr)
        elif isinstance(node, ast.alias):
            if node.name == "*":
                return None
            bind(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bind(name)
                bind(name)
        else:
            for field in ("name", "rest"):
                value = getattr(node, field, None)
                if isinstance(value, str):
                    bind(value)
    return sites, loaded


def _settled_bindings(tree, sites):
    """``name -> the statement that binds it last`` for names every binding of which is a
    top-level ``def``, ``class``, ``import`` or plain ``NAME = …`` (a helper defined twice, a
    constant assigned again): after import the module holds what that statement bound. A name
    also bound anywhere else (in a function, under ``if`` or ``try``, through ``global``) is not
    settled."""
    last = {}
    count = {}

    def bound(name, statement):
        last[name] = statement
        count[name] = count.get(name, 0) + 1

    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound(statement.name, statement)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            for alias in statement.names:
                bound(alias.asname or alias.name.split(".")[0], statement)
        elif _assigned_name(statement) is not None:
            bound(_assigned_name(statement), statement)
    return {name: statement for name, statement in last.items() if sites.get(name) == count[name]}


def _defined_here(value, statement, path, module_name):
    if isinstance(statement, ast.ClassDef):
        return (
            _isinstance(value, _type)
            and getattr(value, "__module__", None) == module_name
            and getattr(value, "__qualname__", None) == statement.name
        )
    code = getattr(value, "__code__", None)
    return (
        code is not None
        and _type(value) is _type(_defined_here)
        and code.co_name == statement.name
        and _abspath(code.co_filename) == _abspath(path)
        and code.co_firstlineno == statement.lineno
    )


def _verifier_tree(path):
    try:
        with open(path, "rb") as handle:
            return ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return None


def _fixture_function(value):
    """The function a fixture pytest made holds, or None when ``value`` is not one: pytest 8 and
    later make a ``FixtureFunctionDefinition``; earlier ones a wrapper function of their own with
    ``__pytest_wrapped__``. Exact types only, so a look-alike of the code under test's is none."""
    fixtures = sys.modules.get("_pytest.fixtures")
    if fixtures is None:
        return None
    definition = getattr(fixtures, "FixtureFunctionDefinition", None)
    if definition is not None and _type(value) is definition:
        return _vars(value).get("_fixture_function")
    if _type(value) is not _type(_defined_here) or _untrusted_file(value.__code__.co_filename):
        return None
    wrapper = _vars(value).get("__pytest_wrapped__")
    if _type(wrapper).__name__ != "_PytestWrapper" or _type(wrapper).__module__ != "_pytest.compat":
        return None
    if not _abspath(value.__code__.co_filename).startswith(_dirname(_abspath(fixtures.__file__)) + _sep):
        return None
    return getattr(wrapper, "obj", None)


def _fixture_problem(value, statement, path, config):
    """Why the fixture a verifier module holds is not the one its source defines, or None."""
    function = _fixture_function(value)
    first = statement.decorator_list[0].lineno
    if (
        _type(function) is not _type(_defined_here)
        or function.__code__.co_name != statement.name
        or _abspath(function.__code__.co_filename) != _abspath(path)
        or function.__code__.co_firstlineno != first
    ):
        return "has %s replaced (not the fixture its source defines)"
    expected, _reason = _expected_code(function, config)
    if expected is not None and not _same_code(function.__code__, expected):
        return "has %s replaced (the fixture's bytecode is not the compile of its source)"
    return None


def _is_fixture(statement):
    """Decorated by ``@pytest.fixture`` (or ``@fixture``, with or without arguments) alone."""
    decorators = statement.decorator_list
    return (
        isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
        and _len(decorators) == 1
        and _dotted(decorators[0]) in ("pytest.fixture", "fixture")
    )


# What a class body may hold for its bindings to be known from the source alone.
_PLAIN_CLASS_BODY = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.Expr, ast.Pass)


def _attribute_stores(tree):
    """Every attribute name the source assigns or deletes anywhere (``self.total = …``,
    ``TestX.count += 1``): a class attribute of that name is the source's own to change."""
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load)
    }


def _watch_class_body(cls, statement, path, module_name, written, entries):
    """A class the verifier's module defines (a test class, a helper class): its methods and its
    names bound once to an immutable literal in its body, checked against the source now and
    watched from now on (``TestCalc.EXPECTED = stub_result``, ``TestCalc.expected = lambda self:
    …``). A body holding anything else (``if``, ``for``, ``try``, ``del``) is left alone: what it
    binds is not known from the source alone; so are names the source assigns as attributes."""
    if not all(isinstance(node, _PLAIN_CLASS_BODY) for node in statement.body):
        return []
    names = []
    for node in statement.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        else:
            names.append(_assigned_name(node))
    namespace = _vars(cls)
    problems = []
    for node, name in zip(statement.body, names):
        if name is None or names.count(name) != 1 or name in written or isinstance(node, ast.ClassDef):
            continue
        where = "%s.%s" % (statement.name, name)
        value = namespace.get(name, _missing)
        if isinstance(node, ast.Assign):
            try:
                expected = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            if not _immutable_literal(expected):
                continue
            if value is _missing or not _same_literal(value, expected):
                problems.append("the verifier's module %s has %s changed from what its source assigns" % (module_name, where))
                continue
        elif value is _missing or (not node.decorator_list and not _defined_here(value, node, path, module_name)):
            problems.append("the verifier's module %s has %s replaced (not what its source defines)" % (module_name, where))
            continue
        entries.append((cls, name, "%s.%s" % (module_name, where), value))
    return problems


def _watch_namespace(module, path, tree=None, foreign=frozenset(), config=None):
    """Check one verifier module against its source now and watch it from now on; problems found.
    ``foreign``: names the verifier's other modules may change in it."""
    tree = tree or _verifier_tree(path)
    if tree is None:
        return []
    found = _source_bindings(tree)
    if found is None:
        return []
    sites, loaded = found
    namespace = _vars(module)
    name = getattr(module, "__name__", path)
    problems = []
    entries = []
    allowed = frozenset(sites)
    for key in list(namespace):
        if key not in allowed and not _pytest_name(key):
            problems.append("the verifier's module %s holds %s, which its source never binds" % (name, key))
    constants = _constant_lists(tree)
    data = _read_only_data(tree, sites, constants, foreign)
    settled = _settled_bindings(tree, sites)
    written = _attribute_stores(tree)
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and settled.get(statement.name) is statement:
            # A helper the tests call (``helpers.expected_greeting``, the test module's own
            # ``calc``) swapped for another function. Undecorated: it must be the function or
            # class this file defines at that line; decorated (a wrapper may live anywhere): only
            # watched from now on.
            value = namespace.get(statement.name, _missing)
            if value is _missing:
                continue
            if not statement.decorator_list and not _defined_here(value, statement, path, name):
                problems.append("the verifier's module %s has %s replaced (not what its source defines)" % (name, statement.name))
            elif _is_fixture(statement) and _fixture_problem(value, statement, path, config) is not None:
                # Replaced before collection, so before any identity was taken (code under test
                # imported at the bottom of the module, a thread): pytest would collect this one.
                problems.append(("the verifier's module %s " % name) + _fixture_problem(value, statement, path, config) % statement.name)
            else:
                entries.append((module, statement.name, "%s.%s" % (name, statement.name), value))
                if isinstance(statement, ast.ClassDef) and _defined_here(value, statement, path, name):
                    problems.extend(_watch_class_body(value, statement, path, name, written, entries))
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            for alias in statement.names:
                bound = alias.asname or alias.name.split(".")[0]
                expected = _expected_import(statement, alias)
                if expected is _missing or settled.get(bound) is not statement:
                    continue
                if namespace.get(bound, _missing) is not expected:
                    problems.append("the verifier's module %s has %s rebound (not what its import gives)" % (name, bound))
                else:
                    entries.append((module, bound, "%s.%s" % (name, bound), expected))
        elif (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and settled.get(statement.targets[0].id) is statement
        ):
            bound = statement.targets[0].id
            try:
                expected = ast.literal_eval(statement.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            if bound in data:
                value = namespace.get(bound, _missing)
                if value is _missing or not _same_data(value, expected):
                    problems.append("the verifier's module %s has %s changed from what its source assigns" % (name, bound))
                else:
                    entries.append((module, bound, "%s.%s" % (name, bound), value))
                    _data_watches.append((name, bound, value, expected))
                continue
            if not (_immutable_literal(expected) or (bound in constants and _type(expected) is list)):
                continue
            value = namespace.get(bound, _missing)
            if value is _missing or not _same_literal(value, expected):
                problems.append("the verifier's module %s has %s changed from what its source assigns" % (name, bound))
            else:
                entries.append((module, bound, "%s.%s" % (name, bound), value))
    _WATCH.extend(entries)
    candidates = _tuple(sorted(loaded - allowed - _builtins_names))
    _namespaces.append([name, namespace, allowed, _len(namespace), candidates])
    return problems


def _watch_verifier_namespaces(items):
    if not _IDENTITIES:
        return []
    _index_snapshot()
    _test_folders.extend(
        sorted({os.path.dirname(_abspath(path)) + _sep for path in (_path_of(item) for item in items) if path})
    )
    modules = {}
    for item in items:
        module = getattr(item, "module", None)
        file = getattr(module, "__file__", None)
        if _isinstance(module, _ModuleType) and _isinstance(file, str) and not _untrusted_file(file):
            modules[_id(module)] = (module, _abspath(file))
    for name, path in _verifier_modules:
        module = sys.modules.get(name)
        if module is not None and _abspath(getattr(module, "__file__", "") or "") == path:
            modules[_id(module)] = (module, path)
    problems = _stdlib_shadows()
    config = getattr(items[0], "config", None) if items else None
    trees = [(module, path, _verifier_tree(path)) for module, path in modules.values()]
    writes = [_foreign_writes(tree) if tree is not None else set() for _module, _path, tree in trees]
    for index, (module, path, tree) in enumerate(trees):
        if tree is not None:
            foreign = set().union(*(written for other, written in enumerate(writes) if other != index))
            problems.extend(_watch_namespace(module, path, tree, foreign, config))
    return problems


_stdlib_names = getattr(sys, "stdlib_module_names", frozenset())


_test_folders = []


def _stdlib_shadows():
    """Standard-library modules imported since the last look whose code is the workspace's (a
    folder put first on ``sys.path``, a finder, a cached ``FileFinder`` for a planted folder) or
    that no file backs (a module object put together at run time)."""
    modules = sys.modules
    if _len(modules) == _modules_seen[0]:
        return []
    _modules_seen[0] = _len(modules)
    problems = []
    for name, module in list(modules.items()):
        if name not in _stdlib_names or name in _original_modules or name in _stdlib_checked:
            continue
        _stdlib_checked.add(name)
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None)
        file = getattr(module, "__file__", None)
        if spec is None or (origin not in ("built-in", "frozen") and not _isinstance(file, str)):
            problems.append("the standard library's module %s is not backed by a file" % name)
        elif _isinstance(file, str) and _untrusted_file(file) and not _abspath(file).startswith(_tuple(_test_folders)):
            # A package holding the verifier's test files (a repository's ``test/``) is collected
            # under that name on purpose; anything else of the workspace named like the standard
            # library shadows it for every later import.
            problems.append("the standard library's module %s was loaded from %s" % (name, file))
    return problems


_stdlib_checked = set()


def _namespace_changes():
    """What changed, since collection, in the verifier's namespaces, ``builtins`` and the import
    system (the watched bindings themselves are in the one-pass comparison)."""
    if _IMPORT_HOOKS is None:
        return []
    problems = _IMPORT_HOOKS.changed()
    problems.extend(_stdlib_shadows())
    for name, bound, value, expected in _data_watches:
        if not _same_data(value, expected):
            problems.append("the verifier's module %s has %s changed in place from what its source assigns" % (name, bound))
    for entry in _namespaces:
        name, namespace, allowed, size, candidates = entry
        if _len(namespace) != size:
            for key in list(namespace):
                if key not in allowed and not _pytest_name(key):
                    problems.append("the verifier's module %s holds %s, which its source never binds" % (name, key))
            entry[3] = _len(namespace)
        if candidates and _any(_map(_builtins_namespace.__contains__, candidates)):
            for key in candidates:
                if key in _builtins_namespace:
                    problems.append("builtins.%s was added, a name the verifier's module %s reads and never binds" % (key, name))
    return problems


_namespace_problems = []


def _collection_finish(session):
    _note_verifier_modules(session.items)
    _namespace_problems.extend(_watch_verifier_namespaces(session.items))
    items = []
    declared = set()
    for item in session.items:
        _session_items[item.nodeid] = item
        declared.update(_plugin_names(getattr(getattr(item, "module", None), "pytest_plugins", ())))
        plain = type(item) is _pytest.python.Function and isinstance(item.parent, pytest.Module)
        items.append(
            {
                "nodeid": item.nodeid,
                "path": _path_of(item),
                "kind": "function" if plain else "other",
                "name": str(getattr(item, "originalname", None) or item.name),
            }
        )
    # Plugins the verifier's own test modules load (``pytest_plugins``) register during collection.
    _send({"type": "collected", "items": items, "declared_plugins": sorted(declared)})


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    # Inventory: collecting was the whole point; nothing runs.
    if _channel is not None and _channel.mode == "inventory":
        return True
    return None


def _state(nodeid):
    state = _tests.get(nodeid)
    if state is None:
        state = _tests[nodeid] = {
            "phases": {},
            "observed": "not-called",
            "wrapper": None,
            "probes": [],
            "messages": {},
        }
    return state


def _probe(item, state):
    problems = ["%s was replaced" % name for name in _replaced_internals()]
    problems.extend(_shadowed_verifier_modules())
    if "runtest" in vars(item):
        problems.append("the item's runtest was replaced")
    for label, tracer in (("trace", _gettrace()), ("profile", _getprofile())):
        foreign = _foreign_tracer(tracer)
        if foreign is not None:
            problems.append("a %s function is installed: %s" % (label, foreign))
    module = getattr(getattr(item, "module", None), "__dict__", {})
    if "AssertionError" in module:
        problems.append("the test module's AssertionError was replaced")
    collected = _collected_code.get(item.nodeid)
    function = _test_callable(item)
    if collected is not None:
        if collected["origin"] is not None:
            problems.append("the test function is not the one defined: " + collected["origin"])
        if function is not collected["function"]:
            problems.append("the test function was replaced after collection")
        elif function.__code__ is not collected["code"]:
            problems.append("the test function's code was replaced after collection")
        elif collected["expected"] is not None and not _same_code(function.__code__, collected["expected"]):
            problems.append("the test function's bytecode was rewritten after collection")
    state["probes"].extend(problems)


def _identity_probe(state):
    """Layer 2 before a test's fixtures run: each replaced callable reported once."""
    while _namespace_problems:
        problem = _namespace_problems.pop(0)
        if problem not in _identity_reported:
            _identity_reported.add(problem)
            state["probes"].append(problem)
    for label in _changed_identities():
        if label not in _identity_reported:
            _identity_reported.add(label)
            state["probes"].append("%s was replaced (identity snapshot)" % label)
    for problem in _namespace_changes():
        if problem not in _identity_reported:
            _identity_reported.add(problem)
            state["probes"].append(problem)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _safely(_before_setup, item)


def _before_setup(item):
    _identity_probe(_state(item.nodeid))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    _safely(_before_call, item)


def _before_call(item):
    state = _state(item.nodeid)
    _probe(item, state)
    function = _function_of(item)
    # Coroutine and async-generator functions (CO_COROUTINE | CO_ASYNC_GENERATOR) are left alone.
    if function is None or function.__code__.co_flags & 0x280:
        state["observed"] = "unobserved"
        return
    original = item.obj

    def observed(*args, **kwargs):
        state["observed"] = "called"
        try:
            result = original(*args, **kwargs)
        except BaseException as error:
            state["observed"] = "raised " + _describe(error)
            raise
        state["observed"] = "returned"
        return result

    state["restore"] = original
    item.obj = observed


def _restore(item, state):
    if "restore" in state:
        item.obj = state.pop("restore")


class _CallObserver:
    """The call phase as the hook sees it, for items whose function cannot be wrapped; also puts
    the test function back before pytest builds the report (tracebacks are cut at it)."""

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_call(self, item):
        outcome = yield
        _safely(self._after_call, item, outcome)

    @staticmethod
    def _after_call(item, outcome):
        state = _state(item.nodeid)
        _restore(item, state)
        excinfo = outcome.excinfo
        state["wrapper"] = "returned" if excinfo is None else "raised " + _describe(excinfo[0])


def pytest_runtest_logreport(report):
    _safely(_log_report, report)


def _log_report(report):
    if report.when not in ("setup", "call", "teardown"):
        return
    state = _state(report.nodeid)
    phases = state["phases"]
    if report.when in phases:
        state["probes"].append("the %s phase was reported twice" % report.when)
    phases[report.when] = report.outcome
    if hasattr(report, "wasxfail"):
        state["xfail"] = True
    if report.outcome != "passed":
        message = _message(report)
        if message is not None:
            state["messages"][report.when] = message


def pytest_runtest_logfinish(nodeid, location):
    _safely(_log_finish, nodeid)


def _log_finish(nodeid):
    state = _state(nodeid)
    item = _session_items.get(nodeid)
    if item is not None:
        _restore(item, state)
    _send(
        {
            "type": "result",
            "nodeid": nodeid,
            "phases": state["phases"],
            "observed": state["observed"],
            "wrapper": state["wrapper"],
            "xfail": bool(state.get("xfail")),
            "messages": state["messages"],
            "probes": state["probes"],
        }
    )
    _tests.pop(nodeid, None)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    _safely(_session_finish, session, exitstatus)
    if _channel is not None and _channel.mode in _LISTING_MODES:
        if _bytecode_fill:
            _safely(_fill_bytecode_cache)
        # Tell skillsmith whether the verifier's command passes pytest's exit status on: an
        # inventory always ends with 1; a run keeps a failing status (the check shows it) and
        # turns a passing one into 1, so the exit code differs from 0 either way.
        if _channel.mode == "inventory" or session.exitstatus == 0:
            session.exitstatus = 1


def _fill_bytecode_cache():
    """Compile the interpreter's own modules this session imported (pytest, pluggy, the standard
    library, site-packages) into the shared cache, so scored runs load them instead of compiling
    them again. Never a file of the workspace, the verifier, this plugin or a temporary folder:
    their bytecode would only be read while their source is unchanged, but they change per run."""
    import importlib.util
    import py_compile

    skipped = tuple(
        root for root in (_workspace_root, _verifier_root, _here + _sep) if root is not None
    ) + _temporary_roots
    moved = sys.pycache_prefix
    sys.pycache_prefix = _bytecode_fill
    try:
        for module in list(sys.modules.values()):
            source = getattr(module, "__file__", None)
            if not isinstance(source, str) or not source.endswith(".py"):
                continue
            source = _abspath(source)
            if source.startswith(skipped):
                continue
            target = importlib.util.cache_from_source(source)
            if os.path.exists(target):
                continue
            try:
                py_compile.compile(source, cfile=target, doraise=True)
            except (OSError, py_compile.PyCompileError, ValueError):
                pass
    finally:
        sys.pycache_prefix = moved


def _session_finish(session, exitstatus):
    _send(
        {
            "type": "finish",
            "exitstatus": int(exitstatus),
            "testsfailed": int(getattr(session, "testsfailed", 0)),
            "testscollected": int(getattr(session, "testscollected", 0)),
            "shouldstop": str(session.shouldstop) if session.shouldstop else None,
            "shouldfail": str(session.shouldfail) if session.shouldfail else None,
            "maxfail": int(session.config.getoption("maxfail", 0) or 0),
            "replaced": _replaced_internals()
            + [label for label in _changed_identities() if label not in _identity_reported]
            + [problem for problem in _namespace_changes() + _namespace_problems if problem not in _identity_reported]
            + _shadowed_verifier_modules(),
            "unfinished": sorted(_tests),
        }
    )
    if _channel is not None:
        _channel.close()
