import { describe, expect, it } from "vitest";
import { definedFields } from "./defined.js";

describe("definedFields", () => {
  it("drops undefined fields and keeps every other falsy value", () => {
    const maybe = (value: number | undefined) => value;
    const fields = definedFields({ a: maybe(undefined), b: 0, c: null, d: "", e: false, f: "x" });
    expect(fields).toEqual({ b: 0, c: null, d: "", e: false, f: "x" });
    expect(Object.keys(fields)).not.toContain("a");
  });

  it("types a maybe-undefined field as optional, so it fits exact optional options", () => {
    const take = (options: { readonly k?: number; readonly name: string }) => options;
    const k: number | undefined = [3][1];
    expect(take({ name: "n", ...definedFields({ k }) })).toEqual({ name: "n" });
    expect(take({ name: "n", ...definedFields({ k: 4 }) })).toEqual({ name: "n", k: 4 });
  });
});
