/**
 * Distractor skills: Agent Skills folders installed in every arm of a skill, the unassisted
 * (`without`) arm included, so the arms differ only by the skill under test while the agent
 * still has to pick it out among others (a benchmark's "distractor" treatment). Declared in
 * `skill.yaml` (`distractors: [path, …]`) or on the command line (`--distractor <dir>`, for
 * every skill of the suite).
 *
 * A distractor named like a skill of an arm would be installed over it (or, identical, stand for
 * it in the unassisted arm): refused by `checkArmSkillNames` before anything runs.
 */
import { resolve } from "node:path";
import { UsageError } from "../../core/errors.js";
import { checkSkillFolder } from "../../skill/validate.js";
import type { Suite, SuiteSkill } from "./types.js";
import { checkVariantFolder } from "./variants.js";

/**
 * The suite with the command line's distractors added to every skill. Each folder must be a
 * valid Agent Skills folder; the same folder twice is one distractor.
 */
export async function withDistractors(
  suite: Suite,
  folders: readonly string[],
  cwd = process.cwd(),
): Promise<Suite> {
  if (folders.length === 0) return suite;
  const absolute = [...new Set(folders.map((folder) => resolve(cwd, folder)))];
  for (const folder of absolute) await checkVariantFolder(folder, `--distractor ${folder}`);
  return {
    ...suite,
    skills: suite.skills.map((skill) => ({
      ...skill,
      distractors: [...new Set([...(skill.distractors ?? []), ...absolute])],
    })),
  };
}

/** The name an Agent Skills folder installs under (its SKILL.md `name`). */
export async function installedSkillName(folder: string): Promise<string> {
  const checked = await checkSkillFolder(folder);
  const name = checked.frontmatter?.name;
  if (name === undefined) {
    throw new UsageError(
      "skill.skill-folder-invalid",
      `${folder}: not a valid Agent Skills folder (its SKILL.md names no valid skill)`,
    );
  }
  return name;
}

/**
 * Refuse a skill whose distractors share a name with each other or with a skill of one of its
 * arms (`with`, each variant): installed side by side, one would replace the other, or an
 * identical copy would put the skill under test into the unassisted arm without a word.
 */
export async function checkArmSkillNames(skill: SuiteSkill): Promise<void> {
  const distractors = skill.distractors ?? [];
  if (distractors.length === 0) return;
  const distractorNames = new Map<string, string>();
  for (const folder of distractors) {
    const name = await installedSkillName(folder);
    const earlier = distractorNames.get(name);
    if (earlier !== undefined) {
      throw new UsageError(
        "bench.distractor-name-conflict",
        `skill ${skill.id}: distractors ${earlier} and ${folder} are both named "${name}"; one would replace the other in the agent's skill folder`,
      );
    }
    distractorNames.set(name, folder);
  }
  const arms: Array<[string, readonly string[]]> = [
    ["with", skill.skillFolders],
    ...Object.entries(skill.variants ?? {}).map(([name, folders]): [string, readonly string[]] => [
      `variant:${name}`,
      folders,
    ]),
  ];
  for (const [arm, folders] of arms) {
    for (const folder of folders) {
      const name = await installedSkillName(folder);
      const distractor = distractorNames.get(name);
      if (distractor !== undefined) {
        throw new UsageError(
          "bench.distractor-name-conflict",
          `skill ${skill.id}: distractor ${distractor} is named "${name}", like the ${arm} arm's skill ${folder}; a distractor must not share a name with a skill under test (it would replace it, or put it into the without arm); rename one of them`,
        );
      }
    }
  }
}
