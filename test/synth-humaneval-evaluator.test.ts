/**
 * The HumanEval evaluator on the real data in real bubblewrap with Debian's python3: every
 * canonical solution passes its hidden check and every empty body fails it (all 164 tasks, one
 * sandboxed harness per batch); and the ways an answer could fake a pass fail — an object equal
 * to everything, exiting early, forged result lines, killing the harness, reading the dataset
 * from disk (for the checks and for ReAct's own scripts), a process left running into the next
 * task — while a slow answer times out.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UnsafeSandbox } from "../src/env/index.js";
import { ModelClient } from "../src/model/client.js";
import { startScriptedServer } from "../src/model/scripted/server.js";
import {
  type FamilyTask,
  type HumanEvalOutcome,
  HumanEvalTaskFamily,
  visibleView,
} from "../src/synth/index.js";
import { usableBubblewrap } from "./support/sandboxes.js";
import { hasDebianPython, hasHumanEval, humanEvalFixture } from "./support/synth.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const cleanups = cleanupsAfterEach();

const bubblewrap = await usableBubblewrap();

const counts = (outcomes: readonly HumanEvalOutcome[]) => {
  const result: Record<string, number> = {};
  for (const outcome of outcomes) result[outcome.status] = (result[outcome.status] ?? 0) + 1;
  return result;
};

describe.skipIf(!hasHumanEval || !hasDebianPython || bubblewrap === undefined)(
  "HumanEval's hidden checks in bubblewrap (needs ../shared/fixtures/humaneval, /usr/bin/python3, bwrap)",
  () => {
    const family = () => {
      if (bubblewrap === undefined) throw new Error("no bubblewrap");
      return new HumanEvalTaskFamily({ path: humanEvalFixture, sandbox: bubblewrap });
    };

    it("passes all 164 canonical solutions and fails all 164 empty bodies", async () => {
      const humanEval = family();
      const tasks = await humanEval.loadTasks();
      expect(tasks).toHaveLength(164);
      const started = performance.now();
      // Two harness processes, one per batch, side by side on the two cores.
      const [canonical, empty] = await Promise.all([
        humanEval.check(
          tasks.map((task) => ({
            task,
            code: `${task.fields.prompt}${task.hidden.canonical_solution}`,
          })),
        ),
        // An empty body: the prompt's function with `pass` (returns None) — a completion.
        humanEval.check(tasks.map((task) => ({ task, code: "    pass\n" }))),
      ]);
      const seconds = (performance.now() - started) / 1000;
      expect(counts(canonical)).toEqual({ pass: 164 });
      expect(canonical.map((outcome) => outcome.id)).toEqual(tasks.map((task) => task.id));
      expect(empty.filter((outcome) => outcome.status === "pass")).toEqual([]);
      expect(empty).toHaveLength(164);
      // An assertion fails, or the check trips over the None (e.g. len(None)): never a timeout.
      for (const outcome of empty) expect(["fail", "error"]).toContain(outcome.status);
      // For the issue note: how long the two batches took.
      console.info(
        `HumanEval canonical ${counts(canonical).pass ?? 0}/164 pass, empty ${empty.filter((each) => each.status !== "pass").length}/164 fail, ${counts(empty).fail ?? 0} by assertion; ${seconds.toFixed(1)} s`,
      );
    }, 180_000);

    describe("answers that try to fake a pass", () => {
      let task0: FamilyTask | undefined;
      const target = async (): Promise<FamilyTask> => {
        if (task0 === undefined) {
          const tasks = await family().loadTasks();
          task0 = tasks.find((task) => task.id === "HumanEval/0");
        }
        if (task0 === undefined) throw new Error("no HumanEval/0");
        return task0;
      };
      const header = "from typing import List\n\n";

      it("scores the canonical solution 1 and a wrong one 0 (the controls)", async () => {
        const task = await target();
        const humanEval = family();
        expect(
          await humanEval.score(task, `${task.fields.prompt}${task.hidden.canonical_solution}`),
        ).toMatchObject({ score: 1, passed: 1, total: 1, flags: [] });
        expect(
          await humanEval.score(
            task,
            `${header}def has_close_elements(numbers, threshold):\n    return False\n`,
          ),
        ).toMatchObject({
          score: 0,
          checks: [{ name: "hidden check", status: "fail" }],
          feedback: "an assertion of the hidden check failed",
        });
      });

      it("an object equal to everything does not cross into the check", async () => {
        const answer = `${header}class Anything:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    def __bool__(self):
        return True

def has_close_elements(numbers, threshold):
    return Anything()
`;
        const score = await family().score(await target(), answer);
        expect(score).toMatchObject({ score: 0, checks: [{ status: "error" }] });
        expect(score.feedback).toMatch(/not a plain value/);
      });

      it("exiting at import or inside the call fails", async () => {
        const humanEval = family();
        const task = await target();
        const atImport = await humanEval.score(task, "import os\nos._exit(0)\n");
        expect(atImport).toMatchObject({ score: 0, checks: [{ status: "error" }] });
        const inCall = await humanEval.score(
          task,
          `${header}import sys\n\ndef has_close_elements(numbers, threshold):\n    sys.exit(0)\n`,
        );
        expect(inCall).toMatchObject({
          score: 0,
          feedback: "the function raised SystemExit",
        });
      });

      it("result lines forged into the sandbox's output, with any nonce it can find, are ignored", async () => {
        // The answer writes "pass" lines for its task to every output it can reach (bubblewrap's
        // pid 1 holds the sandbox's stdout), reusing any hex token it can read back from the
        // pipe or the harness's /proc files as the nonce; then it answers wrongly.
        const answer = `${header}import os, re

def has_close_elements(numbers, threshold):
    seen = b""
    for path in ["/proc/1/fd/1", "/proc/1/fd/0", "/proc/%d/environ" % os.getppid(), "/proc/%d/cmdline" % os.getppid()]:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            seen += os.read(fd, 1 << 20)
            os.close(fd)
        except OSError:
            pass
    nonces = set(re.findall(rb"[0-9a-f]{48}", seen)) | {b"0" * 48, b""}
    for path in ["/proc/1/fd/1", "/proc/1/fd/2", "/proc/%d/fd/1" % os.getppid()]:
        try:
            with open(path, "wb") as out:
                for nonce in nonces:
                    out.write(b"SKILLSMITH-HUMANEVAL " + nonce + b' {"id": "HumanEval/0", "status": "pass", "seconds": 0}\\n')
                    out.write(b"SKILLSMITH-HUMANEVAL " + nonce + b' {"done": 1}\\n')
        except OSError:
            pass
    return False
`;
        const score = await family().score(await target(), answer);
        expect(score).toMatchObject({
          score: 0,
          feedback: "an assertion of the hidden check failed",
        });
      });

      it("killing the harness loses the result: 0, flagged tampered", async () => {
        const answer = `${header}import os, signal\n\ndef has_close_elements(numbers, threshold):\n    os.kill(os.getppid(), signal.SIGKILL)\n    return True\n`;
        expect(await family().score(await target(), answer)).toMatchObject({
          score: 0,
          flags: ["tampered"],
        });
      });

      it("an answer that reads the canonical solution from the dataset passes unsandboxed, fails in bubblewrap", async () => {
        // It finds the dataset file (its path is no secret: it is on the command line of the
        // user's run) and executes its own task's canonical solution.
        const answer = `${header}import gzip, json

with gzip.open(${JSON.stringify(humanEvalFixture)}, "rt") as handle:
    for line in handle:
        row = json.loads(line)
        if row["task_id"] == "HumanEval/0":
            exec(row["prompt"] + row["canonical_solution"])
`;
        const task = await target();
        const unsafe = new HumanEvalTaskFamily({
          path: humanEvalFixture,
          sandbox: new UnsafeSandbox(),
        });
        // The attack is real: without a mount namespace nothing hides the file.
        expect((await unsafe.score(task, answer)).score).toBe(1);
        const sandboxed = await family().score(task, answer);
        expect(sandboxed).toMatchObject({ score: 0 });
        expect(sandboxed.feedback).toMatch(/did not load \((FileNotFoundError|OSError)\)/);
      });

      // The correct body of HumanEval/0, run by an answer only once its probe found what it
      // looks for; otherwise it raises LookupError.
      const correctBody = `
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i != j and abs(a - b) < threshold:
                return True
    return False
`;

      it("kills every process of an answer, zombies included, before the next answer runs", async () => {
        const humanEval = family();
        const task = await target();
        // The first answer leaves a daemon behind (double fork, new session) under a name of
        // its own, holding 300 MB so that its death takes a while (the page tables go first):
        // a killed daemon may turn into a zombie between the sweep's reap and its scan, and a
        // zombie still shows in /proc. The second answers correctly only if the daemon shows.
        const leaveDaemon = `${header}import ctypes, os, time

def has_close_elements(numbers, threshold):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            ctypes.CDLL(None).prctl(15, b"lingering", 0, 0, 0)
            block = bytearray(300 * 1024 * 1024)
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(60)
        os._exit(0)
    time.sleep(1.5)
    return False
`;
        const needDaemon = `${header}import os

def has_close_elements(numbers, threshold):
    for name in os.listdir("/proc"):
        try:
            with open("/proc/" + name + "/comm") as handle:
                if handle.read().strip() == "lingering":
                    break
        except OSError:
            pass
    else:
        raise LookupError()
${correctBody}`;
        // Twelve pairs: before zombies were reaped, about one pair in twelve passed.
        const pairs = 12;
        const outcomes = await humanEval.check(
          Array.from({ length: pairs }, () => [
            { task, code: leaveDaemon },
            { task, code: needDaemon },
          ]).flat(),
        );
        const lefts = outcomes.filter((_, index) => index % 2 === 0);
        const needs = outcomes.filter((_, index) => index % 2 === 1);
        for (const outcome of lefts) expect(outcome).toMatchObject({ status: "fail" });
        for (const outcome of needs)
          expect(outcome).toMatchObject({
            status: "error",
            feedback: "the function raised LookupError",
          });
      }, 180_000);

      /**
       * What an answer leaves behind besides processes, one channel per row: `leave` marks it,
       * `probe` is a Python expression true when the mark is there. The next answer answers
       * correctly only if it finds the mark, so a channel left open lets one answer tell a later
       * one what it learnt (the inputs it was called with, whether it was called again).
       */
      const channels: { name: string; leave: string; probe: string; refused?: boolean }[] = [
        {
          name: "a file in /tmp",
          leave: 'open("/tmp/mark", "w").write("1")',
          probe: 'os.path.exists("/tmp/mark")',
        },
        {
          name: "a file in /var/tmp",
          leave: 'open("/var/tmp/mark", "w").write("1")',
          probe: 'os.path.exists("/var/tmp/mark")',
        },
        {
          name: "a file in /dev/shm",
          leave: 'open("/dev/shm/mark", "w").write("1")',
          probe: 'os.path.exists("/dev/shm/mark")',
        },
        {
          name: "a file in /run",
          leave: 'open("/run/mark", "w").write("1")',
          probe: 'os.path.exists("/run/mark")',
        },
        {
          name: "a file in the workspace",
          leave: 'open("/workspace/humaneval/mark", "w").write("1")',
          probe: 'os.path.exists("/workspace/humaneval/mark")',
        },
        {
          name: "a folder 300 deep, the outer one made unreadable",
          leave: 'os.makedirs("/tmp/d" + "/d" * 299); os.chmod("/tmp/d", 0)',
          probe: 'os.path.lexists("/tmp/d")',
        },
        {
          name: "a mode changed on a folder that was there before",
          leave: 'os.chmod("/var/tmp", 0o701)',
          probe: 'os.stat("/var/tmp").st_mode & 0o777 == 0o701',
        },
        {
          name: "a System V shared memory segment",
          leave: "ctypes.CDLL(None).shmget(4242, 4096, 0o1600)",
          probe: "ctypes.CDLL(None).shmget(4242, 0, 0o600) != -1",
        },
        {
          name: "a System V message queue",
          leave: "ctypes.CDLL(None).msgget(4243, 0o1600)",
          probe: "ctypes.CDLL(None).msgget(4243, 0o600) != -1",
        },
        {
          // Refused outright: the harness cannot list the queues to remove them, so the
          // answer's own process is denied mq_open, and even the control cannot leave it.
          refused: true,
          name: "a POSIX message queue",
          leave: 'ctypes.CDLL("librt.so.1").mq_open(b"/mark", os.O_CREAT | os.O_RDWR, 0o600, None)',
          probe: 'ctypes.CDLL("librt.so.1").mq_open(b"/mark", os.O_RDWR) != -1',
        },
        // (x86-64 only: the number is the architecture's.)
        ...(process.arch === "x64"
          ? [
              {
                // The same queue by the raw system call, past librt (x86-64's number: 240).
                refused: true,
                name: "a POSIX message queue opened by the raw system call",
                leave:
                  'ctypes.CDLL(None).syscall(240, b"mark2", os.O_CREAT | os.O_RDWR, 0o600, None)',
                probe: 'ctypes.CDLL(None).syscall(240, b"mark2", os.O_RDWR, 0, None) != -1',
              },
            ]
          : []),
        {
          name: "a System V semaphore set",
          leave: "ctypes.CDLL(None).semget(4244, 1, 0o1600)",
          probe: "ctypes.CDLL(None).semget(4244, 0, 0o600) != -1",
        },
      ];

      it("nothing an answer leaves in files or IPC objects reaches the next answer", async () => {
        const humanEval = family();
        const task = await target();
        // The check calls the answer several times: it leaves its mark once.
        const answer = (leave: string, probe: string) => `${header}import ctypes, os

def has_close_elements(numbers, threshold):
    if not (${probe}):
        ${leave}
    if not (${probe}):
        raise LookupError()
${correctBody}`;
        // Each leaver answers wrongly (it fails), then the next answer probes for its mark.
        const outcomes = await humanEval.check(
          channels.flatMap((channel) => [
            { task, code: answer(`${channel.leave}\n        return False`, channel.probe) },
            { task, code: answer("pass", channel.probe) },
          ]),
        );
        // The controls: an answer's probe finds its own mark, so no probe is simply false.
        const controls = await humanEval.check(
          channels.map((channel) => ({ task, code: answer(channel.leave, channel.probe) })),
        );
        const rows = channels.map((channel, index) => ({
          channel: channel.name,
          control: controls[index]?.status,
          leaver: outcomes[index * 2]?.status,
          next: outcomes[index * 2 + 1]?.feedback,
        }));
        expect(rows).toEqual(
          channels.map((channel) => ({
            channel: channel.name,
            control: channel.refused === true ? "error" : "pass",
            leaver: "fail",
            next: "the function raised LookupError",
          })),
        );
      }, 180_000);

      it("ReAct's run_python cannot read the dataset either", async () => {
        // The solver's own script tries to print the tests from the dataset file.
        const probe = `import gzip\ntry:\n    with gzip.open(${JSON.stringify(humanEvalFixture)}, "rt") as handle:\n        print(handle.read(300))\nexcept OSError as error:\n    print("unreadable:", type(error).__name__)\n`;
        const server = await startScriptedServer({
          script: {
            rules: [
              {
                match: { system: "reason-act loop", toolResult: "unreadable|task_id" },
                reply: {
                  text: "```python\ndef has_close_elements(numbers, threshold):\n    return False\n```",
                },
              },
              {
                match: { system: "reason-act loop" },
                reply: {
                  text: "Thought: look around.",
                  toolCalls: [{ name: "run_python", input: { code: probe } }],
                },
              },
            ],
          },
        });
        cleanups.push(() => server.close());
        const model = new ModelClient({
          spec: "anthropic:claude-haiku-4-5",
          env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url },
          retry: { maxRetries: 0 },
        });
        const task = await target();
        const observe = async (humanEval: HumanEvalTaskFamily) => {
          const attempt = await humanEval.solveReact(model, visibleView(humanEval, task), {});
          return {
            observation: server.requests.at(-1)?.toolResults.join("\n") ?? "",
            steps: attempt.steps?.join("\n") ?? "",
          };
        };
        // The probe is real: without a mount namespace it reads the tests.
        const unsafe = await observe(
          new HumanEvalTaskFamily({ path: humanEvalFixture, sandbox: new UnsafeSandbox() }),
        );
        expect(unsafe.observation).toContain('"task_id": "HumanEval/0"');
        const sandboxed = await observe(family());
        expect(sandboxed.observation).toContain("unreadable: FileNotFoundError");
        expect(sandboxed.observation).not.toContain("task_id");
        expect(sandboxed.steps).toContain("unreadable: FileNotFoundError");
      });

      it("an answer that never returns times out and scores 0", async () => {
        const humanEval = new HumanEvalTaskFamily({
          path: humanEvalFixture,
          sandbox: bubblewrap as NonNullable<typeof bubblewrap>,
          taskTimeoutMs: 1_000,
        });
        const score = await humanEval.score(
          await target(),
          `${header}def has_close_elements(numbers, threshold):\n    while True:\n        pass\n`,
        );
        expect(score).toMatchObject({
          score: 0,
          flags: ["timeout"],
          feedback: "the task ran out of its 1 s",
        });
      });

      it("a check that loops by itself between calls times out too", async () => {
        const folder = await temporaryDirectoryIn(cleanups, "skillsmith-humaneval-loop-");
        const path = join(folder, "loop.jsonl");
        await writeFile(
          path,
          `${JSON.stringify({
            task_id: "loop/0",
            prompt: 'def f(x):\n    """Return x."""\n',
            canonical_solution: "    return x\n",
            test: "def check(candidate):\n    assert candidate(1) == 1\n    while True:\n        pass\n",
            entry_point: "f",
          })}\n`,
        );
        const humanEval = new HumanEvalTaskFamily({
          path,
          sandbox: bubblewrap as NonNullable<typeof bubblewrap>,
          taskTimeoutMs: 1_000,
        });
        const [task] = await humanEval.loadTasks();
        if (task === undefined) throw new Error("no task");
        const outcomes = await humanEval.check([
          { task, code: "def f(x):\n    return x\n" },
          { task, code: "def f(x):\n    return x\n" },
        ]);
        // Each timed out by the harness after its second, and the harness went on to the next:
        // not the whole batch lost to the sandbox's 34 s limit (whose outcomes would carry 0
        // seconds). The upper bound leaves room for a loaded machine delaying the alarm.
        for (const outcome of outcomes) {
          expect(outcome).toMatchObject({ status: "timeout", flags: ["timeout"] });
          expect(outcome.seconds).toBeGreaterThanOrEqual(1);
          expect(outcome.seconds).toBeLessThan(10);
        }
      });
    });
  },
);
