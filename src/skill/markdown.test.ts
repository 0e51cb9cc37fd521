import { describe, expect, it } from "vitest";
import { blankInlineCode, fencedLines, lineLocator } from "./markdown.js";

describe("fencedLines", () => {
  it("marks fence lines and their content, honouring fence character and length", () => {
    const lines = ["a", "```js", "x", "~~~", "``", "```", "b", "````", "```", "````", "c"];
    expect(fencedLines(lines)).toEqual([
      false,
      true,
      true,
      true, // ~~~ does not close a ``` fence
      true,
      true, // closes
      false,
      true,
      true, // shorter than the opening fence: content
      true, // closes
      false,
    ]);
  });

  it("leaves an unclosed fence open to the end", () => {
    expect(fencedLines(["```", "x", "y"])).toEqual([true, true, true]);
  });
});

describe("blankInlineCode", () => {
  it("blanks spans between runs of equal length and keeps the length", () => {
    const line = "a `b` c ``d ` e`` f";
    const blanked = blankInlineCode(line);
    expect(blanked).toBe(`a ${" ".repeat(3)} c ${" ".repeat(9)} f`);
    expect(blanked).toHaveLength(line.length);
  });

  it("keeps unmatched backticks as text", () => {
    expect(blankInlineCode("a ` b")).toBe("a ` b");
    expect(blankInlineCode("x `` y ` z")).toBe("x `` y ` z");
    expect(blankInlineCode("`a` and ``b")).toBe("    and ``b");
  });
});

describe("lineLocator", () => {
  it("maps offsets to 1-based lines across LF, CRLF and CR", () => {
    const text = "ab\ncd\r\nef\rgh";
    const lineOf = lineLocator(text);
    expect([0, 2, 3, 5, 6, 7, 9, 10, 11].map(lineOf)).toEqual([1, 1, 2, 2, 2, 3, 3, 4, 4]);
  });
});
