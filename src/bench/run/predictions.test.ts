import { describe, expect, it } from "vitest";
import { InputError } from "../../core/errors.js";
import { Predictions } from "./predictions.js";

describe("Predictions", () => {
  const line = (value: object) => JSON.stringify(value);

  it("prefers a configuration's own prediction and treats a missing one as no change", () => {
    const predictions = Predictions.parse(
      [
        line({ skill: "s", requirement: "r", arm: "with", patch: "general" }),
        line({ skill: "s", requirement: "r", arm: "with", config: "c2", patch: "for c2" }),
        "",
      ].join("\n"),
      "p.jsonl",
    );
    expect(predictions.patchFor({ config: "c1", skill: "s", requirement: "r", arm: "with" })).toBe(
      "general",
    );
    expect(predictions.patchFor({ config: "c2", skill: "s", requirement: "r", arm: "with" })).toBe(
      "for c2",
    );
    expect(
      predictions.patchFor({ config: "c1", skill: "s", requirement: "r", arm: "without" }),
    ).toBe("");
  });

  it.each([
    ["not JSON", "{nope", /p\.jsonl, line 2: not a JSON object/],
    [
      "a bad arm",
      line({ skill: "s", requirement: "r", arm: "both", patch: "" }),
      /p\.jsonl, line 2, field "arm"/,
    ],
    [
      "a missing patch",
      line({ skill: "s", requirement: "r", arm: "with" }),
      /line 2, field "patch"/,
    ],
    [
      "a duplicate",
      line({ skill: "s", requirement: "r", arm: "with", patch: "x" }),
      /line 2: a second prediction/,
    ],
  ])("rejects %s naming the file and line", (_name, second, message) => {
    const text = `${line({ skill: "s", requirement: "r", arm: "with", patch: "" })}\n${second}\n`;
    expect(() => Predictions.parse(text, "p.jsonl")).toThrow(InputError);
    expect(() => Predictions.parse(text, "p.jsonl")).toThrow(message);
  });
});
