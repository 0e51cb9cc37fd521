/**
 * What each arm of each skill installs, by name and content digest: recorded in the run's
 * manifest (`armSkills`) and named by every report, so a reader sees which skills the agent had
 * in the unassisted arm (distractors) and in each assisted one, and a resumed run cannot mix two
 * sets of skills under one arm.
 */
import { treeDigest } from "../../env/index.js";
import type { ArmSkills } from "../store/manifest.js";
import type { Arm } from "../store/results.js";
import { variantArm } from "../store/results.js";
import { checkArmSkillNames, installedSkillName } from "../suite/distractors.js";
import type { Suite, SuiteSkill } from "../suite/types.js";
import { variantNames } from "../suite/variants.js";
import { armOwnFolders } from "./reuse.js";

/** The arms every skill runs: without, with, then its variants in name order. */
export function armsOf(skill: SuiteSkill): Arm[] {
  return ["without", "with", ...variantNames(skill).map((name) => variantArm(name))];
}

/**
 * Every arm's installed skills, per skill of the suite: the arm's own (`treatment`) then the
 * distractors. Refuses a distractor named like a skill under test (`checkArmSkillNames`).
 */
export async function armSkillRecords(suite: Suite): Promise<ArmSkills[]> {
  const digests = new Map<string, Promise<string>>();
  const digestOf = (folder: string) => {
    let digest = digests.get(folder);
    if (digest === undefined) {
      digest = treeDigest(folder);
      digests.set(folder, digest);
    }
    return digest;
  };
  const records: ArmSkills[] = [];
  for (const skill of suite.skills) {
    await checkArmSkillNames(skill);
    for (const arm of armsOf(skill)) {
      const skills: ArmSkills["skills"][number][] = [];
      for (const [role, folders] of [
        ["treatment", armOwnFolders(skill, arm)],
        ["distractor", skill.distractors ?? []],
      ] as const) {
        for (const folder of folders) {
          skills.push({
            name: await installedSkillName(folder),
            role,
            digest: await digestOf(folder),
            path: folder,
          });
        }
      }
      records.push({ skill: skill.id, arm, skills });
    }
  }
  return records;
}
