import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical-json.js";

describe("canonicalJson", () => {
  it("sorts keys at every depth, so key order does not change the text", () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    expect(canonicalJson({ a: [{ c: 3, d: 2 }], b: 1 })).toBe(
      canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] }),
    );
  });

  it("sorts integer-like keys as text, not in the order objects enumerate them", () => {
    // An object lists "9" before "10"; sorted as text, "10" < "9".
    expect(canonicalJson({ 9: "x", 10: "y", a: "z" })).toBe('{"10":"y","9":"x","a":"z"}');
  });

  it("leaves out undefined members and functions; null in arrays", () => {
    expect(canonicalJson({ a: undefined, b: () => 1, c: null })).toBe('{"c":null}');
    expect(canonicalJson([undefined, () => 1, 1])).toBe("[null,null,1]");
    expect(canonicalJson(undefined)).toBe("null");
  });

  it("writes bytes, URLs, dates and bigints as text", () => {
    expect(canonicalJson(new Uint8Array([1, 2, 255]))).toBe('{"$bytes":"AQL/"}');
    expect(canonicalJson(new URL("https://example.com/a?b=1"))).toBe('"https://example.com/a?b=1"');
    expect(canonicalJson(new Date(Date.UTC(2026, 0, 2, 3, 4, 5)))).toBe(
      '"2026-01-02T03:04:05.000Z"',
    );
    expect(canonicalJson(12345678901234567890n)).toBe('"12345678901234567890"');
  });
});
