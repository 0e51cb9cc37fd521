import { describe, expect, it } from "vitest";
import {
  currentTrajectory,
  findSkillActivation,
  finishTrajectory,
  isSkillActivated,
  parseTrajectory,
} from "./trajectory.js";
import type { TrajectoryEvent } from "./types.js";

const call = (name: string, input: unknown, id = "1"): TrajectoryEvent => ({
  type: "tool_call",
  id,
  name,
  input,
});

describe("skill activation", () => {
  it("counts a Skill tool call naming the skill, plain or plugin-qualified", () => {
    expect(isSkillActivated([call("Skill", { skill: "pdf" })], "pdf")).toBe(true);
    expect(isSkillActivated([call("Skill", { skill: "tools:pdf" })], "pdf")).toBe(true);
    expect(isSkillActivated([call("Skill", { command: "pdf" })], "pdf")).toBe(true);
    expect(isSkillActivated([call("load_skill", { name: "pdf" })], "pdf")).toBe(true);
  });

  it("does not count a Skill call naming another skill", () => {
    expect(isSkillActivated([call("Skill", { skill: "pdf-extra" })], "pdf")).toBe(false);
    expect(isSkillActivated([call("Skill", { skill: "xpdf" })], "pdf")).toBe(false);
  });

  it("counts a read of the skill's SKILL.md by any tool, shell included", () => {
    expect(
      isSkillActivated([call("Read", { file_path: "/w/.claude/skills/pdf/SKILL.md" })], "pdf"),
    ).toBe(true);
    expect(
      isSkillActivated(
        [call("shell", { command: "/bin/bash -lc 'cat .agents/skills/pdf/SKILL.md'" })],
        "pdf",
      ),
    ).toBe(true);
    expect(isSkillActivated([call("read_file", { path: "pdf/SKILL.md" })], "pdf")).toBe(true);
  });

  it("does not count writes to SKILL.md, other skills' files, or other files of the skill", () => {
    expect(
      isSkillActivated(
        [call("Write", { file_path: ".claude/skills/pdf/SKILL.md", content: "x" })],
        "pdf",
      ),
    ).toBe(false);
    expect(
      isSkillActivated([call("Read", { file_path: ".claude/skills/mypdf/SKILL.md" })], "pdf"),
    ).toBe(false);
    expect(
      isSkillActivated([call("Read", { file_path: ".claude/skills/pdf/README.md" })], "pdf"),
    ).toBe(false);
    expect(isSkillActivated([{ type: "assistant_text", text: "see pdf/SKILL.md" }], "pdf")).toBe(
      false,
    );
  });

  it("returns the index of the first activating event", () => {
    const events: TrajectoryEvent[] = [
      { type: "assistant_text", text: "hi" },
      call("Bash", { command: "ls" }, "a"),
      call("Skill", { skill: "pdf" }, "b"),
      call("Read", { file_path: "pdf/SKILL.md" }, "c"),
    ];
    expect(findSkillActivation(events, "pdf")).toBe(2);
  });
});

describe("trajectory data", () => {
  const draft = {
    harness: "test",
    events: [call("Skill", { skill: "pdf" })],
    skillsShown: ["pdf"],
    skillsShownSource: "agent-log" as const,
    usage: { inputTokens: 10, cachedInputTokens: 2, outputTokens: 3 },
    wallTimeMs: 5,
    status: "completed" as const,
    rawLog: "",
  };

  it("marks activation only when a skill was under test", () => {
    expect(finishTrajectory(draft).skillActivated).toBe(false);
    expect(
      finishTrajectory({ ...draft, skill: { name: "pdf", installedAt: ".claude/skills/pdf" } })
        .skillActivated,
    ).toBe(true);
  });

  it("counts activation of any installed skill, not only the first", () => {
    const skills = [
      { name: "docx", installedAt: ".claude/skills/docx" },
      { name: "pdf", installedAt: ".claude/skills/pdf" },
    ];
    const [first] = skills;
    if (first === undefined) throw new Error("no skill");
    // Only `skill` (the first) would miss the call naming the second folder's skill.
    expect(finishTrajectory({ ...draft, skill: first }).skillActivated).toBe(false);
    expect(finishTrajectory({ ...draft, skill: first, skills }).skillActivated).toBe(true);
    expect(
      finishTrajectory({
        ...draft,
        skill: first,
        skills,
        events: [call("Skill", { skill: "xlsx" })],
      }).skillActivated,
    ).toBe(false);
  });

  it("reads back trajectories with every installed skill, and older ones with only `skill`", () => {
    const first = { name: "docx", installedAt: ".agents/skills/docx" };
    const skills = [first, { name: "pdf", installedAt: ".agents/skills/pdf" }];
    const trajectory = finishTrajectory({ ...draft, skill: first, skills });
    expect(parseTrajectory(JSON.parse(JSON.stringify(trajectory)))).toEqual({
      ok: true,
      value: trajectory,
    });
    const older = finishTrajectory({ ...draft, skill: { name: "pdf", installedAt: "x/pdf" } });
    expect(older.skills).toBeUndefined();
    expect(parseTrajectory(JSON.parse(JSON.stringify(older)))).toMatchObject({ ok: true });
    const broken = parseTrajectory({ ...trajectory, skills: [{ name: "pdf" }] });
    expect(broken.ok ? "" : broken.error).toContain("skills.0.installedAt");
  });

  it("round-trips through JSON and rejects a wrong shape, naming the field", () => {
    const trajectory = finishTrajectory(draft);
    const parsed = parseTrajectory(JSON.parse(JSON.stringify(trajectory)));
    expect(parsed).toEqual({ ok: true, value: trajectory });
    const broken = parseTrajectory({ ...trajectory, status: "great" });
    expect(broken.ok).toBe(false);
    expect(broken.ok ? "" : broken.error).toContain("status");
  });

  it("writes the format tag, and reads an earlier skillsmith's `version: 1` as it", () => {
    const trajectory = finishTrajectory(draft);
    expect(trajectory.format).toBe("skillsmith-trajectory/1");
    expect(trajectory).not.toHaveProperty("version");
    // As a harness written for an earlier skillsmith returns it, and as such runs stored it.
    const { format: _format, ...rest } = trajectory;
    const older = { version: 1 as const, ...rest };
    expect(currentTrajectory(older)).toEqual(trajectory);
    expect(currentTrajectory(trajectory)).toBe(trajectory);
    expect(parseTrajectory(JSON.parse(JSON.stringify(older)))).toEqual({
      ok: true,
      value: trajectory,
    });
    const later = parseTrajectory({ ...trajectory, format: "skillsmith-trajectory/2" });
    expect(later.ok ? "" : later.error).toMatch(/format.*from a later skillsmith/);
    const laterVersion = parseTrajectory({ ...older, version: 2 });
    expect(laterVersion.ok ? "" : laterVersion.error).toContain("format");
  });
});
