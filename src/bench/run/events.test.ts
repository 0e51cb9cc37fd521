import { describe, expect, it } from "vitest";
import { type RunEvent, runEmitter, unenforcedLimitNotes } from "./events.js";

describe("unenforcedLimitNotes", () => {
  it("keeps the notes of limits the backend does not enforce, by its flags, not its wording", () => {
    const notes = [
      "memory: RLIMIT_DATA per process",
      "processes: not bound for root",
      "cpu: no writable cpu cgroup",
    ];
    expect(
      unenforcedLimitNotes({
        mechanism: "prlimit",
        memory: true,
        processes: false,
        cpu: false,
        detectsHits: false,
        notes,
      }),
    ).toEqual(["processes: not bound for root", "cpu: no writable cpu cgroup"]);
    // Every limit enforced: nothing to warn of, whatever the notes say.
    expect(
      unenforcedLimitNotes({
        mechanism: "container-engine",
        memory: true,
        processes: true,
        cpu: true,
        detectsHits: true,
        notes: ["memory: NOT a problem"],
      }),
    ).toEqual([]);
    // No mechanism at all: every note is a warning.
    expect(
      unenforcedLimitNotes({
        mechanism: "none",
        memory: false,
        processes: false,
        cpu: false,
        detectsHits: false,
        notes: ["unsafe: no isolation"],
      }),
    ).toEqual(["unsafe: no isolation"]);
  });
});

describe("runEmitter", () => {
  it("feeds one listener every event and each per-kind callback its own", () => {
    const events: RunEvent[] = [];
    const warnings: string[] = [];
    const lines: string[] = [];
    const emitter = runEmitter({
      onEvent: (event) => events.push(event),
      onWarning: (message) => warnings.push(message),
      onLog: (line) => lines.push(line),
    });
    emitter.warn("limits not enforced", "warning");
    emitter.log("checking");
    const key = { config: "c", skill: "s", requirement: "r", arm: "with" as const, repeat: 1 };
    emitter.emit({ type: "run-flagged", key, flags: ["weak-verifier"] });
    expect(events.map((event) => event.type)).toEqual(["warning", "log", "run-flagged"]);
    expect(events[0]).toEqual({
      type: "warning",
      severity: "warning",
      message: "limits not enforced",
    });
    expect(warnings).toEqual(["limits not enforced"]);
    expect(lines).toEqual(["checking"]);
    expect(emitter.listensToProgress).toBe(true);
    expect(runEmitter({ onWarning: () => undefined }).listensToProgress).toBe(false);
  });
});
