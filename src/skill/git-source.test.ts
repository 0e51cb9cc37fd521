import { describe, expect, it } from "vitest";
import { isSkillsmithError } from "../core/errors.js";
import { parseSkillSource } from "./git-source.js";

describe("parseSkillSource", () => {
  it.each([
    [
      "anthropics/skills",
      "anthropics/skills",
      "https://github.com/anthropics/skills.git",
      undefined,
    ],
    [
      "anthropics/skills@v1.2",
      "anthropics/skills",
      "https://github.com/anthropics/skills.git",
      "v1.2",
    ],
    ["owner/repo.git#main", "owner/repo", "https://github.com/owner/repo.git", "main"],
    [
      "https://gitlab.com/team/skills.git",
      "https://gitlab.com/team/skills.git",
      "https://gitlab.com/team/skills.git",
      undefined,
    ],
    [
      "https://user@host.example/team/skills.git@release-2",
      "https://user@host.example/team/skills.git",
      "https://user@host.example/team/skills.git",
      "release-2",
    ],
    [
      "git@github.com:owner/repo.git",
      "git@github.com:owner/repo.git",
      "git@github.com:owner/repo.git",
      undefined,
    ],
    [
      "git@github.com:owner/repo.git@main",
      "git@github.com:owner/repo.git",
      "git@github.com:owner/repo.git",
      "main",
    ],
    [
      "file:///srv/git/skills.git@0123456789abcdef0123456789abcdef01234567",
      "file:///srv/git/skills.git",
      "file:///srv/git/skills.git",
      "0123456789abcdef0123456789abcdef01234567",
    ],
    ["./local/repo", "/work/local/repo", "/work/local/repo", undefined],
  ])("parses %s", (spec, source, url, ref) => {
    expect(parseSkillSource(spec, "/work")).toEqual({
      source,
      url,
      ref,
      kind: url.startsWith("https://github.com/") ? "github" : "git",
    });
  });

  it.each([
    ["", "skill.source-empty"],
    ["just-a-name", "skill.source-invalid"],
    ["owner/repo@--upload-pack=evil", "skill.source-ref-invalid"],
    ["owner/repo@a..b", "skill.source-ref-invalid"],
    ["owner/repo@$(id)", "skill.source-ref-invalid"],
  ])("refuses %j (%s)", (spec, code) => {
    let caught: unknown;
    try {
      parseSkillSource(spec, "/work");
    } catch (error) {
      caught = error;
    }
    expect(isSkillsmithError(caught) && caught.code).toBe(code);
  });
});
