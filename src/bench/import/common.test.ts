import { describe, expect, it } from "vitest";
import { memoryToMegabytes, positiveNumber, toId } from "./common.js";
import { dockerfileWorkdir, withoutSkillCopies } from "./harbor.js";

describe("memoryToMegabytes", () => {
  it.each([
    ["8g", 8192],
    ["16G", 16384],
    ["512m", 512],
    ["4Gi", 4096],
    ["1.5g", 1536],
    [2 * 1024 * 1024 * 1024, 2048],
  ])("%j → %i MB", (value, megabytes) => {
    expect(memoryToMegabytes(value)).toBe(megabytes);
  });

  it.each([["lots"], [""], [null], [-1], ["0g"]])("%j is not a memory size", (value) => {
    expect(memoryToMegabytes(value)).toBeUndefined();
  });
});

describe("positiveNumber and toId", () => {
  it('reads numbers written as strings (cpus: "4") and rejects the rest', () => {
    expect(positiveNumber("4")).toBe(4);
    expect(positiveNumber(2.5)).toBe(2.5);
    expect(positiveNumber("")).toBeUndefined();
    expect(positiveNumber(0)).toBeUndefined();
    expect(positiveNumber("four")).toBeUndefined();
  });

  it("turns a folder name into an id", () => {
    expect(toId("Fix Git (Hard)")).toBe("fix-git-hard");
    expect(toId("__weird")).toBe("weird");
    expect(toId("???")).toBe("task");
  });
});

describe("Dockerfile helpers", () => {
  it("comments out every COPY/ADD of skills and keeps other lines", () => {
    const { text, removed } = withoutSkillCopies(
      "FROM x\nCOPY skills /root/.claude/skills\nADD ./skills /root/.codex/skills\nCOPY skills_list.txt /app/\n",
    );
    expect(removed).toEqual([
      "COPY skills /root/.claude/skills",
      "ADD ./skills /root/.codex/skills",
    ]);
    expect(text.split("\n")).toEqual([
      "FROM x",
      "# skillsmith: skills are installed in the with-skill arm only, not baked into the image: COPY skills /root/.claude/skills",
      "# skillsmith: skills are installed in the with-skill arm only, not baked into the image: ADD ./skills /root/.codex/skills",
      "COPY skills_list.txt /app/",
      "",
    ]);
  });

  it("finds the last absolute WORKDIR", () => {
    expect(
      dockerfileWorkdir("FROM x\nWORKDIR /src\nRUN make\nworkdir /app\nWORKDIR relative\n"),
    ).toBe("/app");
    expect(dockerfileWorkdir("FROM x\n")).toBeUndefined();
  });
});
