import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { skillId } from "./meta.js";

describe("skillId", () => {
  it("hashes domain, NUL, source path, NUL, decimal index", () => {
    // Built by hand from the documented encoding.
    const bytes = Buffer.from("web-frontend\u0000textkit\u000012", "utf8");
    expect(skillId("web-frontend", "textkit", 12)).toBe(
      createHash("sha1").update(bytes).digest("hex"),
    );
    // Computed outside this code: python3 -c "import hashlib; print(hashlib.sha1(b'd\x00p\x000').hexdigest())"
    expect(skillId("d", "p", 0)).toBe("cdf5bf0a4f82b05cc80a1f645ed84f725ee08f51");
  });

  it("separates fields so different triples never collide by concatenation", () => {
    expect(skillId("ab", "c", 1)).not.toBe(skillId("a", "bc", 1));
    expect(skillId("a", "b1", 1)).not.toBe(skillId("a", "b", 11));
  });

  it("rejects a negative or fractional index", () => {
    expect(() => skillId("a", "b", -1)).toThrow(RangeError);
    expect(() => skillId("a", "b", 1.5)).toThrow(RangeError);
  });
});
