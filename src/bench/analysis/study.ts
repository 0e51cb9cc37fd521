/**
 * The summary tables of a SWE-Skills-Bench–style study (protocol A.7–A.8), for any run: class
 * counts per configuration and overall, aggregate pass ratios without and with the skill, the
 * timeout sensitivity, and the skills whose Δ changes sign between two configurations that run
 * the same model — each with its Benjamini–Hochberg q beside it. Computed from a built report
 * (its profiles already carry p, q and class), so the study never disagrees with the report.
 *
 * "Overall" follows the paper: a skill's requirement deltas are averaged over the
 * configurations that measured them, and the exact sign-flip test runs on those m means.
 */

import { formatTag } from "../../core/format-tag.js";
import { benjaminiHochberg, type SkillClass, summarizeDeltas } from "../../stats/index.js";
import { fewRequirementsNote, mean, PROTOCOL_REQUIREMENTS } from "./profile.js";
import type { BenchReport, Profile } from "./report-types.js";

export const STUDY_FORMAT = formatTag("study", 1);

export interface ClassCounts {
  readonly golden: number;
  readonly harmful: number;
  readonly ineffective: number;
  readonly undecided: number;
  /** Profiles without a class (nothing measurable, or no treatment in either arm). */
  readonly unclassified: number;
}

export interface PassRatios {
  readonly pairs: number;
  readonly without: number | null;
  readonly with: number | null;
  /** Mean requirement delta in points over the row's pairs. */
  readonly delta: number | null;
}

export interface StudyConfiguration extends PassRatios {
  readonly config: string;
  readonly agent?: string;
  readonly model?: string;
  readonly skills: number;
  readonly classes: ClassCounts;
  /** Classified profiles that rest on fewer than half the protocol's requirements. */
  readonly fewRequirements: readonly string[];
}

export interface OverallSkill {
  readonly skill: string;
  readonly configurations: number;
  /** Requirements whose delta entered the overall test (each a mean over configurations). */
  readonly requirements: number;
  readonly without: number | null;
  readonly with: number | null;
  readonly delta: number | null;
  readonly p: number | null;
  readonly q: number | null;
  readonly class: SkillClass | null;
  /** Set when the class rests on far fewer requirements than the protocol's. */
  readonly fewRequirements?: string;
}

export interface SignChangeSkill {
  readonly skill: string;
  readonly delta: readonly [number, number];
  readonly q: readonly [number | null, number | null];
}

export interface StudySignChanges {
  readonly configs: readonly [string, string];
  readonly model: string;
  readonly compared: number;
  readonly count: number;
  readonly skills: readonly SignChangeSkill[];
}

export interface StudySummary {
  readonly format: typeof STUDY_FORMAT;
  readonly alpha: number;
  readonly requirementsPerSkill: number;
  readonly configurations: readonly StudyConfiguration[];
  readonly pooled: PassRatios;
  readonly overall: { readonly classes: ClassCounts; readonly skills: readonly OverallSkill[] };
  /** Table 5 of the paper: the overall classes again without every pair holding a timeout. */
  readonly timeouts: {
    readonly pairs: number;
    readonly excluded: PassRatios & { readonly golden: number; readonly harmful: number };
  };
  readonly signChanges: readonly StudySignChanges[];
  readonly notes: readonly string[];
}

export interface StudyOptions {
  /** The protocol's requirements per skill (`protocol.requirementsPerSkill`); 10 by default. */
  readonly requirementsPerSkill?: number;
}

type Pair = { readonly profile: Profile; readonly without: number; readonly with: number };

function measuredPairs(profiles: readonly Profile[], keep: (timeout: boolean) => boolean): Pair[] {
  return profiles.flatMap((profile) =>
    profile.requirements.flatMap((outcome) =>
      outcome.delta === null || outcome.without === null || outcome.with === null
        ? []
        : keep(outcome.timeout)
          ? [{ profile, without: outcome.without, with: outcome.with }]
          : [],
    ),
  );
}

function passRatios(pairs: readonly Pair[]): PassRatios {
  const without = mean(pairs.map((pair) => pair.without));
  const withSkill = mean(pairs.map((pair) => pair.with));
  return {
    pairs: pairs.length,
    without,
    with: withSkill,
    delta: without === null || withSkill === null ? null : 100 * (withSkill - without),
  };
}

function countClasses(classes: ReadonlyArray<SkillClass | null>): ClassCounts {
  const count = (wanted: SkillClass | null) => classes.filter((item) => item === wanted).length;
  return {
    golden: count("golden"),
    harmful: count("harmful"),
    ineffective: count("ineffective"),
    undecided: count("undecided"),
    unclassified: count(null),
  };
}

/** Per skill, each requirement's delta averaged over the configurations that measured it. */
function overallSkills(
  profiles: readonly Profile[],
  alpha: number,
  requirementsPerSkill: number,
  keep: (timeout: boolean) => boolean,
): Array<Omit<OverallSkill, "q">> {
  const bySkill = new Map<string, Profile[]>();
  for (const profile of profiles) {
    bySkill.set(profile.skill, [...(bySkill.get(profile.skill) ?? []), profile]);
  }
  return [...bySkill.entries()]
    .sort(([left], [right]) => left.localeCompare(right))
    .map(([skill, own]) => {
      const byRequirement = new Map<string, number[]>();
      // A profile without a class (no treatment in either arm) contributes no deltas.
      for (const profile of own.filter((candidate) => candidate.unscorable === null)) {
        for (const outcome of profile.requirements) {
          if (outcome.delta === null || !keep(outcome.timeout)) continue;
          byRequirement.set(outcome.id, [...(byRequirement.get(outcome.id) ?? []), outcome.delta]);
        }
      }
      const deltas = [...byRequirement.values()].map((values) => mean(values) as number);
      const pairs = measuredPairs(
        own.filter((profile) => profile.unscorable === null),
        keep,
      );
      const ratios = passRatios(pairs);
      if (deltas.length === 0) {
        return {
          skill,
          configurations: own.length,
          requirements: 0,
          ...ratios,
          p: null,
          class: null,
        };
      }
      const summary = summarizeDeltas(deltas, alpha);
      const few = fewRequirementsNote(deltas.length, requirementsPerSkill, alpha);
      return {
        skill,
        configurations: own.length,
        requirements: deltas.length,
        without: ratios.without,
        with: ratios.with,
        delta: summary.delta,
        p: summary.signflip.p,
        class: summary.class,
        ...(few === undefined ? {} : { fewRequirements: few }),
      };
    });
}

/** The model a spec names, without its provider or endpoint (`openai:kimi-k2.6` → `kimi-k2.6`). */
export function modelName(spec: string): string {
  const colon = spec.indexOf(":");
  const rest = colon < 0 ? spec : spec.slice(colon + 1);
  const at = rest.indexOf("@");
  return (at < 0 ? rest : rest.slice(0, at)).trim().toLowerCase();
}

function signChanges(report: BenchReport): StudySignChanges[] {
  const changes: StudySignChanges[] = [];
  const configs = report.configs.filter((config) => config.model !== undefined);
  for (const [index, left] of configs.entries()) {
    for (const right of configs.slice(index + 1)) {
      const model = modelName(left.model as string);
      if (model !== modelName(right.model as string)) continue;
      const skills: SignChangeSkill[] = [];
      let compared = 0;
      for (const a of report.profiles.filter((profile) => profile.config === left.config)) {
        const b = report.profiles.find(
          (profile) => profile.config === right.config && profile.skill === a.skill,
        );
        if (a.delta === null || b?.delta === null || b === undefined) continue;
        if (a.unscorable !== null || b.unscorable !== null) continue;
        compared += 1;
        if (a.delta * b.delta < 0) {
          skills.push({ skill: a.skill, delta: [a.delta, b.delta], q: [a.q, b.q] });
        }
      }
      changes.push({
        configs: [left.config, right.config],
        model,
        compared,
        count: skills.length,
        skills,
      });
    }
  }
  return changes;
}

/** The study's summary tables of a built report. */
export function buildStudySummary(report: BenchReport, options: StudyOptions = {}): StudySummary {
  const alpha = report.statistics.alpha;
  const requirementsPerSkill = options.requirementsPerSkill ?? PROTOCOL_REQUIREMENTS;
  const configurations: StudyConfiguration[] = report.configs.map((config) => {
    const own = report.profiles.filter((profile) => profile.config === config.config);
    return {
      config: config.config,
      ...(config.agent === undefined ? {} : { agent: config.agent }),
      ...(config.model === undefined ? {} : { model: config.model }),
      skills: own.length,
      ...passRatios(measuredPairs(own, () => true)),
      classes: countClasses(own.map((profile) => profile.class)),
      fewRequirements: own
        .filter(
          (profile) =>
            profile.class !== null &&
            fewRequirementsNote(profile.n, requirementsPerSkill, alpha) !== undefined,
        )
        .map((profile) => profile.skill),
    };
  });
  const every = () => true;
  const noTimeout = (timeout: boolean) => !timeout;
  const overall = overallSkills(report.profiles, alpha, requirementsPerSkill, every);
  const tested = overall.flatMap((skill, index) =>
    skill.p === null ? [] : [{ index, p: skill.p }],
  );
  const q = benjaminiHochberg(tested.map((item) => item.p));
  const qOf = new Map(tested.map((item, position) => [item.index, q[position] ?? null]));
  const overallWithQ: OverallSkill[] = overall.map((skill, index) => ({
    ...skill,
    q: qOf.get(index) ?? null,
  }));
  const excluded = overallSkills(report.profiles, alpha, requirementsPerSkill, noTimeout);
  const allPairs = measuredPairs(report.profiles, every);
  const notes: string[] = [];
  const unclassified = report.profiles.filter((profile) => profile.unscorable !== null);
  if (unclassified.length > 0) {
    notes.push(
      `${unclassified.length} profile(s) have no class and are left out of the overall test: ${unclassified.map((profile) => `${profile.config}/${profile.skill} (${profile.unscorable})`).join("; ")}`,
    );
  }
  const few = overallWithQ.filter((skill) => skill.fewRequirements !== undefined);
  if (few.length > 0) {
    notes.push(
      `${few.length} overall class(es) rest on far fewer requirements than the protocol's ${requirementsPerSkill}: ${few.map((skill) => `${skill.skill} ${skill.fewRequirements}`).join("; ")}`,
    );
  }
  return {
    format: STUDY_FORMAT,
    alpha,
    requirementsPerSkill,
    configurations,
    pooled: passRatios(allPairs),
    overall: {
      classes: countClasses(overallWithQ.map((skill) => skill.class)),
      skills: overallWithQ,
    },
    timeouts: {
      pairs: allPairs.length - measuredPairs(report.profiles, noTimeout).length,
      excluded: {
        ...passRatios(measuredPairs(report.profiles, noTimeout)),
        golden: excluded.filter((skill) => skill.class === "golden").length,
        harmful: excluded.filter((skill) => skill.class === "harmful").length,
      },
    },
    signChanges: signChanges(report),
    notes,
  };
}
