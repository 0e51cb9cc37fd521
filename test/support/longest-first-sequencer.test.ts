import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type FileToOrder, longestFirst, measuredSeconds } from "./longest-first-sequencer.js";

describe("longestFirst", () => {
  const files: Record<string, FileToOrder> = {
    "unit-a": { group: 0, expectedMs: 1_000, sizeBytes: 100 },
    "e2e-unknown-1": { group: 1, expectedMs: undefined, sizeBytes: 100 },
    "e2e-short": { group: 1, expectedMs: 20_000, sizeBytes: 100 },
    "unit-b": { group: 0, expectedMs: 5_000, sizeBytes: 100 },
    "containers-long": { group: 2, expectedMs: 900_000, sizeBytes: 100 },
    "e2e-unknown-2": { group: 1, expectedMs: undefined, sizeBytes: 100 },
    "e2e-unknown-large": { group: 1, expectedMs: undefined, sizeBytes: 9_000 },
    "e2e-long": { group: 1, expectedMs: 500_000, sizeBytes: 10 },
    "e2e-middle": { group: 1, expectedMs: 200_000, sizeBytes: 100 },
  };
  const order = (names: readonly string[]) =>
    longestFirst(names, (name) => files[name] as FileToOrder);

  it("keeps the groups in order, longest first within each, unknown files last, largest first", () => {
    expect(order(Object.keys(files))).toEqual([
      "unit-b",
      "unit-a",
      "e2e-long",
      "e2e-middle",
      "e2e-short",
      "e2e-unknown-large",
      "e2e-unknown-1",
      "e2e-unknown-2",
      "containers-long",
    ]);
  });

  it("gives the same order whatever order vitest handed over, except among unknown files", () => {
    const known = Object.keys(files).filter((name) => !name.includes("unknown"));
    expect(order([...known].reverse())).toEqual(order(known));
    expect(order(["e2e-unknown-2", "e2e-unknown-1"])).toEqual(["e2e-unknown-2", "e2e-unknown-1"]);
  });
});

describe("measuredSeconds", () => {
  it("names test files that exist", () => {
    const root = resolve(import.meta.dirname, "..", "..");
    const missing = Object.keys(measuredSeconds).filter((path) => !existsSync(join(root, path)));
    expect(missing).toEqual([]);
  });
});
