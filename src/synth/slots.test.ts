import { describe, expect, it } from "vitest";
import { InputError } from "../core/errors.js";
import {
  applySlotPatch,
  diffSlotLibraries,
  maxSlotCharacters,
  parseSlotLibrary,
  type SlotLibrary,
  type SlotOperation,
} from "./slots.js";
import { initialLibrary } from "./store.js";

const library: SlotLibrary = {
  version: "v1",
  input: [
    { id: "a", text: "read A" },
    { id: "b", text: "read B" },
  ],
  output: [{ id: "c", text: "write C" }],
};

describe("slot library limits", () => {
  it("accepts the shipped initial library", () => {
    const shipped = initialLibrary();
    expect(shipped.version).toBe("v1");
    expect(shipped.input.length).toBeGreaterThan(0);
    expect(shipped.output.length).toBeGreaterThan(0);
  });

  it("rejects a slot over 1,200 characters and a ninth slot, naming the slot and the limit", () => {
    const long = { ...library, input: [{ id: "long", text: "x".repeat(1_201) }] };
    expect(() => parseSlotLibrary(long, "lib.json")).toThrow(InputError);
    expect(() => parseSlotLibrary(long, "lib.json")).toThrow(
      /lib\.json: .*input slot "long": 1201 characters, at most 1200/,
    );
    const many = {
      ...library,
      output: Array.from({ length: 9 }, (_, index) => ({ id: `s${index}`, text: "t" })),
    };
    expect(() => parseSlotLibrary(many, "lib.json")).toThrow(/output slots: 9 slots, at most 8/);
    // Exactly at the limits is fine.
    const edge = {
      ...library,
      output: Array.from({ length: 8 }, (_, index) => ({
        id: `s${index}`,
        text: "y".repeat(maxSlotCharacters),
      })),
    };
    expect(parseSlotLibrary(edge, "lib.json").output).toHaveLength(8);
  });
});

describe("slot patches", () => {
  it("applies add, replace, delete and move in order", () => {
    const operations: SlotOperation[] = [
      { op: "add", category: "output", id: "d", text: "write D", position: 0 },
      { op: "replace", category: "input", id: "a", text: "read A carefully" },
      { op: "delete", category: "input", id: "b" },
      { op: "move", category: "output", id: "c", position: 0 },
    ];
    const result = applySlotPatch(library, operations, "v2");
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value).toEqual({
      version: "v2",
      input: [{ id: "a", text: "read A carefully" }],
      output: [
        { id: "c", text: "write C" },
        { id: "d", text: "write D" },
      ],
    });
    const diff = diffSlotLibraries(library, result.value);
    expect(diff.split("\n")).toEqual([
      "--- v1",
      "+++ v2",
      "- [input/a] read A",
      "+ [input/a] read A carefully",
      "- [input/b] read B",
      "+ [output/d] write D",
    ]);
  });

  it("rejects a patch touching five slots, whatever the operations", () => {
    const operations: SlotOperation[] = ["p", "q", "r", "s", "t"].map((id) => ({
      op: "add",
      category: "input",
      id,
      text: "new",
    }));
    const result = applySlotPatch(library, operations, "v2");
    expect(result).toEqual({
      ok: false,
      error:
        "the patch touches 5 slots (input/p, input/q, input/r, input/s, input/t); at most 4 are allowed",
    });
    // Four distinct slots, one of them edited twice, is within the bound.
    const four: SlotOperation[] = [
      { op: "add", category: "input", id: "p", text: "1" },
      { op: "replace", category: "input", id: "p", text: "2" },
      { op: "delete", category: "input", id: "a" },
      { op: "delete", category: "input", id: "b" },
      { op: "replace", category: "output", id: "c", text: "3" },
    ];
    expect(applySlotPatch(library, four, "v2").ok).toBe(true);
  });

  it("rejects a patch whose result breaks the limits or that names a missing slot", () => {
    const tooLong = applySlotPatch(
      library,
      [{ op: "replace", category: "input", id: "a", text: "z".repeat(1_300) }],
      "v2",
    );
    expect(tooLong.ok).toBe(false);
    if (!tooLong.ok) expect(tooLong.error).toMatch(/input slot "a": 1300 characters, at most 1200/);
    const full: SlotLibrary = {
      ...library,
      input: Array.from({ length: 8 }, (_, index) => ({ id: `i${index}`, text: "t" })),
    };
    const ninth = applySlotPatch(
      full,
      [{ op: "add", category: "input", id: "n", text: "t" }],
      "v2",
    );
    expect(ninth.ok).toBe(false);
    if (!ninth.ok) expect(ninth.error).toMatch(/input slots: 9 slots, at most 8/);
    const missing = applySlotPatch(library, [{ op: "delete", category: "output", id: "zz" }], "v2");
    expect(missing).toEqual({ ok: false, error: "operation 1 (delete output/zz): no such slot" });
  });
});
