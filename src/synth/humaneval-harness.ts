/**
 * The HumanEval evaluator: runs each task's hidden `check(candidate)` against an answer, in the
 * sandbox, with a time limit per task, and reports pass / fail / error / timeout. pass@1 is the
 * share of tasks whose check passes.
 *
 * The answer is untrusted code, and the obvious ways a model's code could fake a pass are shut:
 * - The answer never shares a process with the check. One Python process (the harness) runs the
 *   checks; each answer runs in a child process of its own, and every call the check makes goes
 *   over a pipe as plain data (None, bool, int, float, str, bytes, complex, list, tuple, set,
 *   frozenset, dict — decoded strictly by the harness), so an object whose `__eq__` always says
 *   True, a patched builtin or a swallowed assertion stays in the child.
 * - The child cannot report for the harness. The harness reads its whole input (tests included)
 *   from stdin before any answer runs, so nothing of it is left on disk or in a pipe; it makes
 *   itself non-dumpable, so a same-user process cannot open its `/proc` files, memory or pipes;
 *   it writes nothing at all until every process an answer started is dead (it is their child
 *   subreaper, so no orphan escapes the sweep), and each result line carries a nonce the answer
 *   never saw. A line an answer writes into the sandbox's output (bubblewrap's pid 1 holds it,
 *   readable and writable) lacks the nonce and is ignored; killing the harness loses the
 *   results, which scores 0 (`tampered`).
 * - Nothing an answer leaves behind reaches the next answer of the batch, which could otherwise
 *   learn what an earlier one found out (the inputs it was called with, whether it was called
 *   again): every process it started is killed and reaped (a zombie still shows in /proc and
 *   answers `kill(pid, 0)`); in the sandbox's writable folders (its scratch folders and every
 *   writable mount) whatever is new is removed and whatever changed is put back; its System V IPC
 *   objects are removed; its process is refused `mq_open` (POSIX message queues cannot be listed
 *   without an mqueue mount, so they cannot be swept). Bubblewrap refuses the kernel keyring's
 *   calls (`env/sandbox/seccomp.ts`), a container engine's default profile does too.
 * - Exiting early (`sys.exit(0)`, `os._exit(0)`) at import or in a call only ends the child: the
 *   check then fails on the missing answer.
 * - The dataset file is hidden inside the sandbox (`hiddenPaths`: an empty folder is mounted
 *   over it), so an answer cannot read the tests or canonical solutions from disk.
 * - Time: each task has one deadline, for loading the answer, every call and the check's own code
 *   (an alarm), so one slow task times out alone and the batch goes on.
 * Not defended: an answer that spends its time budget on purpose (it then times out, scoring 0);
 * in a container sandbox, a file written outside the scratch folders (the container's own root
 * is writable and too large to compare after every answer); anything at all under the unsafe
 * sandbox, which has no mount or pid namespace to hide behind.
 *
 * One file (over 400 lines) because about 380 of its lines are the Python harness program itself,
 * kept beside the TypeScript that drives it and checks its nonce-marked messages, so the protocol
 * between them is read in one place.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InfrastructureError } from "../core/errors.js";
import type { SandboxV1 } from "../env/index.js";
import { hidingMounts } from "./python-exec.js";

/** Debian's interpreter: the PATH's `python3` may be one a sandbox cannot see (pyenv under ~). */
export const defaultHumanEvalPython = "/usr/bin/python3";
/** Per task: loading the answer and running the whole check (HumanEval's own harness uses 3 s). */
export const defaultHumanEvalTaskTimeoutMs = 10_000;
/** Address-space limit of each answer's process. */
export const defaultHumanEvalMemoryBytes = 1024 * 1024 * 1024;

const linePrefix = "SKILLSMITH-HUMANEVAL";

/**
 * The harness, passed to the interpreter with `-c`. Python source; `String.raw` keeps its
 * backslashes as written.
 */
export const humanEvalHarnessSource = String.raw`
import ctypes
import json
import os
import select
import shutil
import re
import signal
import stat
import sys
import tempfile
import time

PREFIX = "SKILLSMITH-HUMANEVAL"
MAX_MESSAGE = 8 * 1024 * 1024

# Plain values only cross between the answer's process and the check: the answer encodes what
# it returns, the harness decodes it strictly into genuine builtins.
CODEC = r'''
import base64 as _base64

def _encode(value, depth=0):
    if depth > 64:
        raise ValueError("nested too deeply")
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is float or kind is str:
        return value
    if kind is list:
        return {"l": [_encode(item, depth + 1) for item in value]}
    if kind is tuple:
        return {"t": [_encode(item, depth + 1) for item in value]}
    if kind is set:
        return {"s": [_encode(item, depth + 1) for item in value]}
    if kind is frozenset:
        return {"f": [_encode(item, depth + 1) for item in value]}
    if kind is dict:
        return {"d": [[_encode(key, depth + 1), _encode(item, depth + 1)] for key, item in value.items()]}
    if kind is bytes:
        return {"b": _base64.b64encode(value).decode("ascii")}
    if kind is complex:
        return {"c": [value.real, value.imag]}
    raise TypeError("not a plain value: " + kind.__name__)

def _decode(value, depth=0):
    if depth > 64:
        raise ValueError("nested too deeply")
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is float or kind is str:
        return value
    if kind is dict and len(value) == 1:
        ((tag, inner),) = value.items()
        if tag in ("l", "t", "s", "f") and type(inner) is list:
            items = [_decode(item, depth + 1) for item in inner]
            return {"l": list, "t": tuple, "s": set, "f": frozenset}[tag](items)
        if tag == "d" and type(inner) is list:
            result = {}
            for pair in inner:
                if type(pair) is not list or len(pair) != 2:
                    raise ValueError("bad dict entry")
                result[_decode(pair[0], depth + 1)] = _decode(pair[1], depth + 1)
            return result
        if tag == "b" and type(inner) is str:
            return _base64.b64decode(inner, validate=True)
        if tag == "c" and type(inner) is list and len(inner) == 2 and all(type(part) in (int, float) for part in inner):
            return complex(inner[0], inner[1])
    raise ValueError("not a plain value")
'''

# The answer's process: load the visible prompt and the answer, then serve calls. Everything
# after the first exec is the answer's to tamper with; all it can change is what it replies.
SERVER = CODEC + r'''
import json as _json
import os as _os
import resource as _resource
import sys as _sys

def _refuse_message_queues():
    # POSIX message queues live in the IPC namespace, which the whole batch shares, and without
    # a mounted mqueue file system the harness cannot list them to remove them: the answer's
    # process is refused mq_open instead (seccomp, inherited by all it starts; a call through
    # another ABI, such as a 32-bit program's, is refused whatever it is).
    import ctypes, platform, struct
    native = {"x86_64": (0xC000003E, 240), "aarch64": (0xC00000B7, 180)}.get(platform.machine())
    if native is None:
        raise OSError("no seccomp numbers for " + platform.machine())
    arch, number = native
    refuse, allow = 0x00050001, 0x7FFF0000
    program = [
        (0x20, 0, 0, 4), (0x15, 0, 4, arch), (0x20, 0, 0, 0),
        (0x15, 2, 0, number), (0x15, 1, 0, number | 0x40000000),
        (0x06, 0, 0, allow), (0x06, 0, 0, refuse),
    ]
    code = b"".join(struct.pack("HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(code, len(code))

    class Program(ctypes.Structure):
        _fields_ = [("length", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "no_new_privs")
    if libc.prctl(22, 2, ctypes.byref(Program(len(program), ctypes.addressof(buffer))), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")


def _main():
    commands = _os.fdopen(int(_sys.argv[1]), "rb")
    replies = _os.fdopen(int(_sys.argv[2]), "wb")
    _os.chdir(_sys.argv[3])
    memory = int(_sys.argv[4])
    if memory > 0:
        _resource.setrlimit(_resource.RLIMIT_AS, (memory, memory))

    def send(message):
        replies.write(_json.dumps(message).encode("utf-8") + b"\n")
        replies.flush()

    job = _json.loads(commands.readline())
    try:
        _refuse_message_queues()
    except BaseException:
        send({"loaded": False, "kind": "SeccompUnavailable"})
        return
    namespace = {"__name__": "solution", "__builtins__": __builtins__}
    try:
        code = job["code"]
        try:
            compile(code, "solution.py", "exec")
            sources = [job["prompt"], code]
        except SyntaxError:
            # A completion (the function's body only) continues the prompt, as in HumanEval.
            sources = [job["prompt"] + code]
        for source in sources:
            exec(compile(source, "solution.py", "exec"), namespace)
        function = namespace.get(job["entry"])
        if not callable(function):
            send({"loaded": False, "kind": "MissingFunction"})
            return
    except BaseException as error:
        send({"loaded": False, "kind": type(error).__name__})
        return
    send({"loaded": True})
    for line in commands:
        args, kwargs = _decode(_json.loads(line))
        try:
            result = function(*args, **kwargs)
        except BaseException as error:
            send({"raised": type(error).__name__})
            continue
        try:
            encoded = _encode(result)
        except BaseException:
            send({"unplain": type(result).__name__})
            continue
        send({"ok": encoded})

_main()
'''

exec(CODEC)


class CandidateRaised(Exception):
    """The answer's function raised; the message is the exception's class name."""


class CandidateLost(Exception):
    """The answer's process did not load, died, or answered with something not a plain value."""


class TaskTimeout(BaseException):
    """The task's time is up. A BaseException, so a check cannot swallow it as an Exception."""


def identifier(text):
    cleaned = "".join(ch for ch in str(text) if ch.isalnum() or ch == "_")[:64]
    return cleaned or "unknown"


def protect():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE 0
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE) failed")
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER 1
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def descendants(zombies=False):
    me = os.getpid()
    parents = {}
    dead = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/" + name + "/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # A zombie stays in the map as a link of the chain: a process whose stat was read
        # while its parent was alive names that parent, which may have died (a zombie) by the
        # time its own stat is read. Dropping it would hide a live daemon from the kill.
        if fields[0] == b"Z":
            dead.add(int(name))
        parents[int(name)] = int(fields[1])
    found = []
    for pid in parents:
        if pid in dead and not zombies:
            continue
        current, hops = pid, 0
        while current in parents and hops < 4096:
            current = parents[current]
            hops += 1
            if current == me:
                found.append(pid)
                break
    return found


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_descendants():
    for _ in range(2000):
        reap()
        pids = descendants()
        # An empty scan is confirmed by a second one: /proc is read one entry at a time, so a
        # process can move (reparented as its parent exits) between the reads.
        if not pids and not descendants():
            # A process killed a moment ago may have become a zombie only after the reap above.
            # A zombie still answers kill(pid, 0) and keeps its /proc entry, so a later answer
            # would see it alive: reap it, and stop only when not even a zombie of ours is left.
            reap()
            if not descendants(zombies=True):
                return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.002)
    return False


# What an answer leaves behind besides processes: files in the sandbox's writable folders and
# System V IPC objects. Both outlive its processes, so without a sweep one answer could pass a
# later one what it learnt (the inputs the check called it with, whether it was called again).
# The state before the first answer is the baseline; after each answer everything new is removed
# and everything changed is put back. Only when the caller says these folders belong to this
# sandbox alone: under the unsafe sandbox /tmp is the host's, and nothing there is ours to remove.
SCRATCH_FOLDERS = ("/tmp", "/var/tmp", "/run", "/dev", "/dev/shm")
IPC_TABLES = (("shm", "shmctl"), ("sem", "semctl"), ("msg", "msgctl"))
IPC_RMID = 0
SMALL_FILE = 1024 * 1024


class Leftover(Exception):
    """Something an answer left behind could not be removed or put back."""


def writable_mounts():
    found = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            fields = line.split()
            point = re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), fields[4])
            if "rw" in fields[5].split(",") and point.split("/")[1] not in ("", "proc", "sys"):
                found.append(point)
    return found


def scratch_roots(extra):
    candidates = {path for path in (*SCRATCH_FOLDERS, *writable_mounts(), *extra) if os.path.isdir(path)}
    return sorted(
        root for root in candidates
        if not any(root != other and root.startswith(other.rstrip("/") + "/") for other in candidates)
    )


def entry_of(path):
    status = os.lstat(path)
    if stat.S_ISDIR(status.st_mode):
        # A folder's times change whenever anything inside it does: its entries are compared.
        return ("dir", status.st_mode, status.st_ino)
    if stat.S_ISLNK(status.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISREG(status.st_mode):
        # ctime too: a rewrite at the same size with its mtime set back still moves the ctime.
        return ("file", status.st_mode, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    return ("node", status.st_mode, status.st_ino, status.st_rdev)


def tree_of(root):
    state, stack = {}, [root]
    while stack:
        folder = stack.pop()
        try:
            state[folder] = entry_of(folder)
            names = os.listdir(folder) if state[folder][0] == "dir" else []
        except OSError:
            continue
        stack.extend(os.path.join(folder, name) for name in names)
    return state


def remove_tree(path):
    # Iterative, and every folder made writable first: an answer may nest folders thousands
    # deep or take its own folders' permissions away.
    stack, folders = [path], []
    while stack:
        current = stack.pop()
        if os.path.isdir(current) and not os.path.islink(current):
            os.chmod(current, 0o700)
            folders.append(current)
            stack.extend(os.path.join(current, name) for name in os.listdir(current))
        else:
            os.unlink(current)
    for folder in reversed(folders):
        os.rmdir(folder)


def ipc_ids():
    found = set()
    for table, _ in IPC_TABLES:
        try:
            with open("/proc/sysvipc/" + table) as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        found.update((table, int(row.split()[1])) for row in rows if row.strip())
    return found


class Baseline:
    def __init__(self, extra):
        self.roots = scratch_roots(extra)
        self.entries = {}
        self.contents = {}
        for root in self.roots:
            self.entries.update(tree_of(root))
        for path, entry in self.entries.items():
            if entry[0] == "file" and entry[3] <= SMALL_FILE:
                with open(path, "rb") as handle:
                    self.contents[path] = handle.read()
        self.ipc = ipc_ids()

    def restore(self):
        libc = ctypes.CDLL(None, use_errno=True)
        for table, identifier_ in ipc_ids() - self.ipc:
            control = getattr(libc, dict(IPC_TABLES)[table])
            arguments = (identifier_, 0, IPC_RMID) if table == "sem" else (identifier_, IPC_RMID, None)
            if control(*arguments) != 0:
                raise Leftover("an IPC object could not be removed")
        now = {}
        for root in self.roots:
            now.update(tree_of(root))
        # Shortest first: a folder is put back before what was inside it. Removed entries count
        # too: which of them is missing could carry bits as well as a new file.
        for path in sorted(set(now) | set(self.entries), key=len):
            if now.get(path) != self.entries.get(path):
                self.put_back(path, self.entries.get(path))

    def put_back(self, path, before):
        try:
            if before is not None and before[0] == "dir" and os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, stat.S_IMODE(before[1]))
                return
            if os.path.lexists(path):
                remove_tree(path)
            if before is None:
                return
            if before[0] == "link":
                os.symlink(before[1], path)
            elif before[0] == "dir":
                os.mkdir(path, stat.S_IMODE(before[1]))
            elif before[0] == "file" and path in self.contents:
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IMODE(before[1]))
                with os.fdopen(descriptor, "wb") as handle:
                    handle.write(self.contents[path])
            else:
                raise Leftover("a file that was there before could not be put back")
            self.entries[path] = entry_of(path)
        except OSError as error:
            raise Leftover("what an answer left behind could not be removed") from error


BASELINE = None


def end_answer():
    kill_descendants()
    if BASELINE is not None:
        BASELINE.restore()


class Candidate:
    def __init__(self, job, deadline, memory):
        self.deadline = deadline
        self.buffer = b""
        self.folder = tempfile.mkdtemp(prefix="answer-")
        command_read, self.command_write = os.pipe()
        self.reply_read, reply_write = os.pipe()
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_DUP2, command_read, 3),
            (os.POSIX_SPAWN_DUP2, reply_write, 4),
        ]
        environment = {
            "PATH": "/usr/bin:/bin",
            "HOME": self.folder,
            "TMPDIR": self.folder,
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        os.posix_spawn(
            sys.executable,
            [sys.executable, "-I", "-c", SERVER, "3", "4", self.folder, str(memory)],
            environment,
            file_actions=actions,
            setsid=True,
        )
        os.close(command_read)
        os.close(reply_write)
        self.send(job)
        reply = self.receive()
        if reply.get("loaded") is not True:
            raise CandidateLost("did not load (" + identifier(reply.get("kind")) + ")")

    def send(self, message):
        view = memoryview(json.dumps(message).encode("utf-8") + b"\n")
        while view:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise TaskTimeout()
            _, writable, _ = select.select([], [self.command_write], [], remaining)
            if not writable:
                raise TaskTimeout()
            try:
                written = os.write(self.command_write, view[:65536])
            except BrokenPipeError:
                raise CandidateLost("its process ended") from None
            view = view[written:]

    def receive(self):
        while b"\n" not in self.buffer:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise TaskTimeout()
            readable, _, _ = select.select([self.reply_read], [], [], remaining)
            if not readable:
                raise TaskTimeout()
            chunk = os.read(self.reply_read, 65536)
            if not chunk:
                raise CandidateLost("its process ended")
            self.buffer += chunk
            if len(self.buffer) > MAX_MESSAGE:
                raise CandidateLost("its answer is too large")
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            raise CandidateLost("its answer is not a message") from None
        if type(message) is not dict:
            raise CandidateLost("its answer is not a message")
        return message

    def call(self, *args, **kwargs):
        self.send(_encode([list(args), kwargs]))
        reply = self.receive()
        if "ok" in reply:
            try:
                return _decode(reply["ok"])
            except (ValueError, TypeError, RecursionError):
                raise CandidateLost("it returned something that is not a plain value") from None
        if "raised" in reply:
            raise CandidateRaised(identifier(reply["raised"]))
        if "unplain" in reply:
            raise CandidateLost("it returned something that is not a plain value")
        raise CandidateLost("its answer is not a message")

    def close(self):
        for fd in (self.command_write, self.reply_read):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.folder, ignore_errors=True)


def on_alarm(signum, frame):
    raise TaskTimeout()


def run_task(index, task, timeout, memory):
    started = time.monotonic()
    candidate = None
    outcome = {"index": index, "id": task["id"]}
    # The deadline also binds the check's own code between calls (a slow loop in the test).
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout + 0.5)
    try:
        candidate = Candidate(
            {"prompt": task["prompt"], "code": task["code"], "entry": task["entry"]},
            started + timeout,
            memory,
        )
        checks = {"__name__": "__check__"}
        exec(compile(task["prompt"], "prompt.py", "exec"), checks)
        # As in HumanEval's own program (prompt + completion + test), the entry point's global
        # name is the answer too: some tests call it by name.
        checks[task["entry"]] = candidate.call
        exec(compile(task["test"], "test.py", "exec"), checks)
        checks["check"](candidate.call)
        outcome.update(status="pass")
    except TaskTimeout:
        outcome.update(status="timeout")
    except CandidateRaised as error:
        outcome.update(status="error", kind="raised", name=identifier(error))
    except CandidateLost as error:
        outcome.update(status="error", kind="lost", detail=str(error)[:120])
    except AssertionError:
        outcome.update(status="fail", kind="assertion")
    except BaseException as error:
        outcome.update(status="error", kind="check", name=identifier(type(error).__name__))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if candidate is not None:
            candidate.close()
        end_answer()
    outcome["seconds"] = round(time.monotonic() - started, 3)
    return outcome


def run_guarded(index, task, timeout, memory):
    # The alarm may also fire while run_task handles another exception or cleans up.
    try:
        return run_task(index, task, timeout, memory)
    except TaskTimeout:
        signal.setitimer(signal.ITIMER_REAL, 0)
        end_answer()
        return {"index": index, "id": task["id"], "status": "timeout", "seconds": timeout}


def main():
    batch = json.loads(sys.stdin.buffer.read())
    nonce = batch["nonce"]

    def emit(messages):
        sys.stdout.write("".join(PREFIX + " " + nonce + " " + json.dumps(message) + "\n" for message in messages))
        sys.stdout.flush()

    # Nothing is written before every answer's process is dead: an answer can read the output
    # pipe (through bubblewrap's pid 1) as well as write to it, so it must never see the nonce.
    global BASELINE
    try:
        protect()
        if batch["scratch"] is not None:
            BASELINE = Baseline(batch["scratch"])
    except BaseException as error:
        emit([{"error": str(error)}])
        return 3
    try:
        outcomes = [
            run_guarded(index, task, batch["timeoutSeconds"], batch["memoryBytes"])
            for index, task in enumerate(batch["tasks"])
        ]
    except Leftover as error:
        kill_descendants()
        emit([{"error": str(error)}])
        return 3
    if not kill_descendants():
        emit([{"error": "processes of an answer survived every kill"}])
        return 3
    emit(outcomes + [{"done": len(outcomes)}])
    return 0


sys.exit(main())
`;

/** One answer to check: the task's visible prompt, its hidden test and entry point, the code. */
export interface HumanEvalCheck {
  readonly id: string;
  readonly prompt: string;
  readonly test: string;
  readonly entryPoint: string;
  /** A whole module (defining the entry point) or a completion continuing the prompt. */
  readonly code: string;
}

export type HumanEvalStatus = "pass" | "fail" | "error" | "timeout";

export interface HumanEvalOutcome {
  readonly id: string;
  readonly status: HumanEvalStatus;
  /**
   * What went wrong, in words a model may be shown: the failure's category and an exception's
   * class name at most — never test text, expected values or the entry point.
   */
  readonly feedback: string;
  /** Run flags (`timeout`, `tampered`) from `src/env/verifier/flags.ts`. */
  readonly flags: readonly string[];
  readonly seconds: number;
}

export interface HumanEvalCheckOptions {
  readonly sandbox: SandboxV1;
  /** The interpreter inside the sandbox; default `/usr/bin/python3`. */
  readonly python?: string;
  readonly taskTimeoutMs?: number;
  readonly memoryBytes?: number;
  /** Host folders an answer must not read (the dataset); an empty folder is mounted over each. */
  readonly hiddenPaths?: readonly string[];
  readonly signal?: AbortSignal;
}

const safeName = (value: unknown): string =>
  typeof value === "string" && /^[A-Za-z0-9_]{1,64}$/.test(value) ? value : "an exception";

/** The model-visible words for a harness outcome, from a fixed list. */
function feedbackOf(outcome: Record<string, unknown>, timeoutSeconds: number): string {
  switch (outcome.status) {
    case "pass":
      return "the hidden check passed";
    case "fail":
      return "an assertion of the hidden check failed";
    case "timeout":
      return `the task ran out of its ${timeoutSeconds} s`;
    default:
      if (outcome.kind === "raised") return `the function raised ${safeName(outcome.name)}`;
      if (outcome.kind === "check")
        return `the hidden check raised ${safeName(outcome.name)} on the function's results`;
      if (typeof outcome.detail === "string" && outcome.detail.startsWith("did not load"))
        return `the answer did not load (${safeName(/\(([^)]*)\)/.exec(outcome.detail)?.[1])})`;
      return "the answer's process failed or answered with something that is not a plain value";
  }
}

const statuses: ReadonlySet<string> = new Set(["pass", "fail", "error", "timeout"]);

/**
 * Check `items` in one sandboxed harness process, one after another (every process an answer
 * starts is killed before the next runs). Only results carrying this run's nonce count; an item
 * without one scores as `timeout` when the sandbox ran out of time, else as `tampered`.
 * Throws `InfrastructureError` when the harness failed by itself (no interpreter, a broken
 * sandbox, a platform without `prctl`).
 */
export async function runHumanEvalChecks(
  items: readonly HumanEvalCheck[],
  options: HumanEvalCheckOptions,
): Promise<HumanEvalOutcome[]> {
  if (items.length === 0) return [];
  const taskTimeoutMs = options.taskTimeoutMs ?? defaultHumanEvalTaskTimeoutMs;
  const timeoutSeconds = taskTimeoutMs / 1000;
  const nonce = randomBytes(24).toString("hex");
  const workspace = await mkdtemp(join(tmpdir(), "skillsmith-humaneval-"));
  const empty = await mkdtemp(join(tmpdir(), "skillsmith-humaneval-hidden-"));
  try {
    const unsafe = options.sandbox.kind === "unsafe";
    const hidden = hidingMounts(options.sandbox, options.hiddenPaths, empty);
    const execution = await options.sandbox.exec({
      command: [options.python ?? defaultHumanEvalPython, "-I", "-c", humanEvalHarnessSource],
      workspace,
      workspaceMountPath: "/workspace/humaneval",
      ...(unsafe ? { cwd: workspace } : {}),
      network: "none",
      env: { PYTHONDONTWRITEBYTECODE: "1" },
      // Each task has its own limit inside; this one only catches a harness that hangs.
      limits: { timeoutMs: items.length * (taskTimeoutMs + 1_000) + 30_000 },
      input: JSON.stringify({
        nonce,
        timeoutSeconds,
        // The folders to sweep after each answer besides the sandbox's own scratch folders; none
        // at all under the unsafe sandbox, whose /tmp and /run are the host's.
        scratch: unsafe ? null : ["/workspace/humaneval"],
        memoryBytes: options.memoryBytes ?? defaultHumanEvalMemoryBytes,
        tasks: items.map((item) => ({
          id: item.id,
          prompt: item.prompt,
          test: item.test,
          entry: item.entryPoint,
          code: item.code,
        })),
      }),
      ...(hidden.length === 0 ? {} : { extraMounts: hidden }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const messages = execution.stdout.split("\n").flatMap((line) => {
      const at = line.indexOf(`${linePrefix} ${nonce} `);
      if (at < 0) return [];
      try {
        const value: unknown = JSON.parse(line.slice(at + linePrefix.length + nonce.length + 2));
        return typeof value === "object" && value !== null && !Array.isArray(value)
          ? [value as Record<string, unknown>]
          : [];
      } catch {
        // A marked line that is not JSON (cut off by a kill mid-write) is no message: its task
        // then has no outcome and is scored below like any other answer without one.
        return [];
      }
    });
    const harnessError = messages.find((message) => typeof message.error === "string")?.error;
    const done = messages.some((message) => message.done === items.length);
    const python = options.python ?? defaultHumanEvalPython;
    if (harnessError !== undefined)
      throw new InfrastructureError(
        "synth.humaneval-harness",
        `the HumanEval harness (${python}) could not protect itself: ${String(harnessError)}`,
      );
    // Killed (by a signal: an answer, the memory limit) or out of time: the answers' fault, 0.
    const killed = execution.exitCode === null || execution.exitCode >= 128;
    if (!done && !execution.timedOut && !killed && !execution.oomKilled)
      throw new InfrastructureError(
        "synth.humaneval-harness",
        `the HumanEval harness (${python}) failed (exit ${execution.exitCode}): ${execution.stderr.trim().slice(-500) || "no output"}`,
      );
    // By position: one batch may check several answers to the same task.
    const byIndex = new Map<number, Record<string, unknown>[]>();
    for (const message of messages)
      if (typeof message.index === "number")
        byIndex.set(message.index, [...(byIndex.get(message.index) ?? []), message]);
    return items.map((item, index): HumanEvalOutcome => {
      const found = byIndex.get(index) ?? [];
      const outcome = found[0];
      if (
        done &&
        found.length === 1 &&
        outcome !== undefined &&
        outcome.id === item.id &&
        statuses.has(String(outcome.status))
      ) {
        const status = outcome.status as HumanEvalStatus;
        return {
          id: item.id,
          status,
          feedback: feedbackOf(outcome, timeoutSeconds),
          flags: status === "timeout" ? ["timeout"] : [],
          seconds: typeof outcome.seconds === "number" ? outcome.seconds : 0,
        };
      }
      if (execution.timedOut)
        return {
          id: item.id,
          status: "timeout",
          feedback: `the task ran out of its ${timeoutSeconds} s`,
          flags: ["timeout"],
          seconds: 0,
        };
      if (execution.oomKilled)
        return {
          id: item.id,
          status: "error",
          feedback: "the memory limit was reached",
          flags: ["oom"],
          seconds: 0,
        };
      return {
        id: item.id,
        status: "error",
        feedback: "the evaluator lost its result (its process was killed)",
        flags: ["tampered"],
        seconds: 0,
      };
    });
  } finally {
    await rm(workspace, { recursive: true, force: true });
    await rm(empty, { recursive: true, force: true });
  }
}
