import { describe, expect, it } from "vitest";
import { visibleView } from "./family.js";
import { initialLibrary } from "./store.js";
import { checkSynthesisedSkill, extractSkillMarkdown, synthesisPrompt } from "./synthesise.js";

const valid =
  "---\nname: roman-numerals\ndescription: Guidance for converting Roman numerals.\n---\n\n## When to use\nNow.\n\n## Approach\n1. Map symbols.\n\n## Pitfalls\n- IV.\n\n## Checks\n- IX is 9.\n";

describe("synthesised skill checks", () => {
  it("accepts a valid skill with every required section in order", async () => {
    expect(await checkSynthesisedSkill(valid)).toEqual([]);
  });

  it("reports a missing section, sections out of order, and validator findings", async () => {
    const missing = valid.replace("## Pitfalls\n- IV.\n\n", "");
    expect(await checkSynthesisedSkill(missing)).toEqual([
      'missing or misplaced section "## Pitfalls"',
    ]);
    const swapped = valid
      .replace("## When to use", "## TEMP")
      .replace("## Checks", "## When to use")
      .replace("## TEMP", "## Checks");
    expect((await checkSynthesisedSkill(swapped)).length).toBeGreaterThan(0);
    const badName = valid.replace("name: roman-numerals", "name: Roman_Numerals");
    const problems = await checkSynthesisedSkill(badName);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join("\n")).toMatch(/name/i);
    expect(await checkSynthesisedSkill("just prose, no frontmatter")).not.toEqual([]);
  });

  it("takes the skill out of a fenced answer", () => {
    expect(extractSkillMarkdown(`Here it is:\n\`\`\`markdown\n${valid}\`\`\``)).toBe(valid);
    expect(extractSkillMarkdown(valid)).toBe(valid);
  });
});

describe("synthesis prompt", () => {
  it("puts the slots in the system prompt and only visible fields of the target in the user prompt", () => {
    const library = initialLibrary();
    const task = visibleView(
      { name: "demo", visibleFields: ["instruction"], hiddenFields: ["tests"] },
      { id: "t", fields: { instruction: "sum digits" }, hidden: { tests: "HIDDEN-TEST-TEXT" } },
    );
    const { system, prompt } = synthesisPrompt(library, { kind: "task", task }, []);
    for (const slot of [...library.input, ...library.output]) expect(system).toContain(slot.text);
    expect(system).toContain('"## When to use", "## Approach", "## Pitfalls", "## Checks"');
    expect(prompt).toContain("instruction:\nsum digits");
    expect(prompt).toContain("(no related attempts)");
    expect(`${system}${prompt}`).not.toContain("HIDDEN-TEST-TEXT");
  });
});
