"""Several verifiers' inventories from one interpreter: a fork server (``inventory-batch.ts``).

A verifier's inventory is its command (``python -m pytest ...``) run with skillsmith's plugin in
``inventory`` mode. Most of its cost is not the verifier's: starting the interpreter and
importing pytest and its built-in plugins. This server pays that once, then forks one child per
verifier; each child becomes that verifier's ``python -m pytest`` (its folder, environment,
``sys.path``, argv, exit status) and loads the plugin itself, over the verifier's own channel.

Why fork and not ``pytest.main`` again and again in one process: whatever a verifier's conftest
or test module does to the interpreter (``sys.modules``, a patched pytest hook or stdlib
function, an ``atexit`` handler, a thread) dies with its child; the next child starts from the
parent's state, in which no verifier code ever ran. What a child could still leave for the next
one is outside the interpreter: files. The verifier folders are read-only; the temporary
folders are compared before and after each child (a change: every later child is reported
``tainted`` and skillsmith takes it alone); the workspace is checked by skillsmith afterwards.

Usage: python skillsmith_inventory_batch.py JOBS_JSON OUTPUT_FOLDER. Prints one JSON line per job:
``{"job": i, "exit": code, "timedOut": bool, "tainted": reason-or-null, "lingering": bool,
"unsure": reason-or-null}``.
Standard library and pytest only; Python >= 3.6.
"""

import importlib
import json
import os
import signal
import sys
import time

_TEMPORARY = ("/tmp", "/var/tmp", "/dev/shm")


def _temporary_state(watched, names):
    """Every entry under the temporary folders, and pytest's configuration files (``names``)
    directly in the ``watched`` folders (those above the batch's verifier folders, where a
    planted ``conftest.py`` would apply to every verifier below), with its size and modification
    time."""
    state = {}
    for folder in watched:
        for name in names:
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            state[os.path.join(folder, name)] = (info.st_size, info.st_mtime_ns, info.st_mode)
    for root in _TEMPORARY:
        for folder, folders, files in os.walk(root):
            for name in folders + files:
                path = os.path.join(folder, name)
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                state[path] = (info.st_size, info.st_mtime_ns, info.st_mode)
    return state


def _warm():
    """Import what every inventory imports anyway: pytest, its built-in plugins, and the standard
    library modules skillsmith's plugin uses. Nothing of a verifier, the workspace or the plugin."""
    import pytest  # noqa: F401
    import _pytest.config

    for name in getattr(_pytest.config, "default_plugins", ()):
        try:
            importlib.import_module(name if "." in name else "_pytest." + name)
        except Exception:
            pass
    for name in ("ast", "fnmatch", "hashlib", "hmac", "operator", "random", "socket", "traceback", "runpy"):
        importlib.import_module(name)


def _exit_code(value):
    """What the interpreter would exit with for ``SystemExit(value)``."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    try:
        sys.stderr.write("%s\n" % (value,))
    except Exception:
        pass
    return 1


def _child(job, output, base_path, base_environ):
    """Become ``python -m pytest ARGS`` run in the job's folder with the job's environment."""
    code = 1
    try:
        os.setpgid(0, 0)
        for number, suffix in ((1, "stdout"), (2, "stderr")):
            descriptor = os.open(
                os.path.join(output, "%d.%s" % (job["index"], suffix)),
                os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                0o600,
            )
            os.dup2(descriptor, number)
            os.close(descriptor)
        os.chdir(job["cwd"])
        # The sandbox's environment, as the verifier's shell would pass it on, with the job's
        # (the channel's, the command's own assignments) over it.
        os.environ.clear()
        os.environ.update(base_environ)
        os.environ.update(job["env"])
        # As the interpreter sets them at start for ``-m``: the working folder first, then
        # PYTHONPATH, then the site folders.
        sys.path[:] = [job["cwd"]] + list(job["pythonPath"]) + base_path
        sys.pycache_prefix = job["env"].get("PYTHONPYCACHEPREFIX") or None
        sys.dont_write_bytecode = bool(job["env"].get("PYTHONDONTWRITEBYTECODE"))
        sys.argv = ["-m"] + list(job["args"])
        import runpy

        try:
            runpy.run_module("pytest", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exit:
            code = _exit_code(exit.code)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    try:
        import atexit
        import threading

        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code)


_cpu = [0.0]


def _wait(pid, deadline):
    """The child's exit code (a signal: 128 + its number, as a shell reports it), or None when
    its time ran out (it is killed)."""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done == pid:
            _cpu[0] = usage.ru_utime + usage.ru_stime
            if os.WIFSIGNALED(status):
                return 128 + os.WTERMSIG(status)
            return os.WEXITSTATUS(status)
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
            return None
        time.sleep(0.005)


def main():
    with open(sys.argv[1]) as handle:
        spec = json.load(handle)
    output = sys.argv[2]
    own = set(spec.get("parentPythonPath", ()))
    # What the batch set for this process alone (its PYTHONPATH, bytecode settings) is not the
    # sandbox's: the children get the sandbox's environment without it, then their own.
    base_environ = {
        name: value for name, value in os.environ.items() if name not in spec.get("batchEnvironment", ())
    }
    base_path = [entry for entry in sys.path[1:] if entry not in own]
    started = time.process_time()
    _warm()
    # What starting the batch cost (reported for the README's Cost section and the benchmark).
    sys.stdout.write(json.dumps({"warm": time.process_time() - started}) + "\n")
    tainted = None
    names = spec.get("configurationFiles", ())
    watched = spec.get("watchedFolders", ())
    for job in spec["jobs"]:
        unsure = None
        for folder in job.get("ownAncestors", ()):
            for name in names:
                if os.path.lexists(os.path.join(folder, name)):
                    unsure = "%s above its own mount path may change what pytest collects there" % os.path.join(folder, name)
        if unsure is not None:
            line = {"job": job["index"], "exit": None, "timedOut": False, "tainted": None, "lingering": False, "unsure": unsure}
            sys.stdout.write(json.dumps(line) + "\n")
            continue
        before = _temporary_state(watched, names)
        pid = os.fork()
        if pid == 0:
            _child(job, output, base_path, base_environ)
        _cpu[0] = 0.0
        code = _wait(pid, time.monotonic() + job["timeoutSeconds"])
        lingering = False
        try:
            # A process the child left behind (its group outlives it) would outlive the verifier
            # alone too, where the sandbox waits for it: not comparable, so not taken here.
            os.killpg(pid, 0)
            lingering = True
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        line = {
            "job": job["index"],
            "exit": code,
            "timedOut": code is None,
            "tainted": tainted,
            "lingering": lingering,
            "unsure": None,
            "cpu": _cpu[0],
        }
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
        after = _temporary_state(watched, names) if tainted is None else before
        if after != before:
            changed = sorted(set(after.items()) ^ set(before.items()))[0][0]
            tainted = "an earlier verifier of the batch (job %d) wrote %s" % (job["index"], changed)


if __name__ == "__main__":
    main()
