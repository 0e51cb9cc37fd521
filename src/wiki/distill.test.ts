import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../test/support/temporary.js";
import {
  type DistilledSkill,
  loadDistillerPrompt,
  normalisedName,
  postProcess,
} from "./distill.js";
import { completenessGate } from "./gates.js";
import { defaultThresholds, skillId } from "./meta.js";

const raw: DistilledSkill = {
  skill_name: "  Center   with Grid ",
  category_path: ["Layout & Boxes", "CSS Grid", "Centering", "Too deep"],
  applicability: "When\r\n\r\n\r\n  centering.  ",
  tags: ["CSS", "css ", "Grid", ""],
  text_body: "Line one.   \n\n\n\nLine two.",
  inputs: null,
  expected_effects: "Centered.",
  code_body: "\n\nprint('x')   \r\n\n",
  code_language: "PY",
  sample_input: null,
  visual_caption: null,
  visual_refs: [2, 2, 0],
  provenance: { source_path: " article.html ", node_index: 4 },
};

describe("postProcess", () => {
  it("normalises whitespace, tags, category path, code and language, and derives the id", () => {
    const candidate = postProcess("web", raw, 0, defaultThresholds);
    expect(candidate.skillName).toBe("Center with Grid");
    expect(candidate.categoryPath).toEqual(["layout-boxes", "css-grid", "centering"]);
    expect(candidate.applicability).toBe("When\n\n centering.");
    expect(candidate.tags).toEqual(["css", "grid"]);
    expect(candidate.textBody).toBe("Line one.\n\nLine two.");
    expect(candidate.inputs).toBe("");
    expect(candidate.codeBody).toBe("print('x')\n");
    expect(candidate.codeLanguage).toBe("python");
    expect(candidate.visualRefs).toEqual([2, 0]);
    expect(candidate.sourcePath).toBe("article.html");
    expect(candidate.skillId).toBe(skillId("web", "article.html", 4));
  });

  it("drops blank code and its language", () => {
    const candidate = postProcess("web", { ...raw, code_body: "  \n \n" }, 0, defaultThresholds);
    expect(candidate.codeBody).toBeNull();
    expect(candidate.codeLanguage).toBeNull();
  });

  it("compares names case- and punctuation-insensitively for deduplication", () => {
    expect(normalisedName("Slugify  TITLES!")).toBe(normalisedName("slugify titles"));
    expect(normalisedName("Slugify titles")).not.toBe(normalisedName("Slugify title"));
  });
});

describe("completeness gate", () => {
  it("names every missing part", () => {
    const candidate = postProcess(
      "web",
      { ...raw, skill_name: " ", category_path: ["!!"], tags: [], text_body: "short" },
      0,
      defaultThresholds,
    );
    const result = completenessGate(candidate, defaultThresholds);
    expect(result.status).toBe("fail");
    expect(result.detail).toBe(
      `skill_name is empty; category_path has no usable level; no tags; text_body has 5 characters, fewer than ${defaultThresholds.min_text_chars}`,
    );
  });
});

describe("loadDistillerPrompt", () => {
  const cleanups = cleanupsAfterEach();

  it("falls back to default.md only when the domain's prompt is missing", async () => {
    const folder = await temporaryDirectoryIn(cleanups, "distill-prompt-");
    await writeFile(join(folder, "default.md"), "the default prompt");
    await writeFile(join(folder, "web.md"), "the web prompt");
    expect(await loadDistillerPrompt("web", folder)).toEqual({
      text: "the web prompt",
      file: join(folder, "web.md"),
    });
    expect(await loadDistillerPrompt("audio", folder)).toEqual({
      text: "the default prompt",
      file: join(folder, "default.md"),
    });
  });

  it("refuses a domain prompt that is there but unreadable instead of using the default", async () => {
    const folder = await temporaryDirectoryIn(cleanups, "distill-prompt-");
    await writeFile(join(folder, "default.md"), "the default prompt");
    // A folder where the prompt file should be (EISDIR) and a link loop (ELOOP): both exist.
    await mkdir(join(folder, "web.md"));
    await selfLoopingLink(folder, "audio.md");
    for (const domain of ["web", "audio"])
      await expect(loadDistillerPrompt(domain, folder)).rejects.toMatchObject({
        code: "core.file-unreadable",
        location: { file: join(folder, `${domain}.md`) },
      });
  });
});
