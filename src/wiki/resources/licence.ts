/**
 * Licence recognition from licence texts and SPDX identifiers. Deliberately conservative: what
 * is not recognised is `unknown`, and anything limiting reuse (non-commercial, no derivatives,
 * all rights reserved) is `restrictive`. Both are flagged in the manifest and the build summary.
 */
import type { LicenceFlag } from "../meta.js";

interface LicenceRule {
  readonly id: string;
  readonly flag: LicenceFlag;
  readonly pattern: RegExp;
}

// Order matters: the more specific texts (non-commercial variants, AGPL/LGPL) come first.
const rules: readonly LicenceRule[] = [
  {
    id: "CC-BY-NC-ND-4.0",
    flag: "restrictive",
    pattern: /\bCC[- ]BY[- ]NC[- ]ND\b|NonCommercial-NoDerivatives/i,
  },
  {
    id: "CC-BY-NC-SA-4.0",
    flag: "restrictive",
    pattern: /\bCC[- ]BY[- ]NC[- ]SA\b|NonCommercial-ShareAlike/i,
  },
  {
    id: "CC-BY-NC-4.0",
    flag: "restrictive",
    pattern: /\bCC[- ]BY[- ]NC\b|Attribution-NonCommercial/i,
  },
  {
    id: "CC-BY-ND-4.0",
    flag: "restrictive",
    pattern: /\bCC[- ]BY[- ]ND\b|Attribution-NoDerivatives/i,
  },
  { id: "AGPL-3.0", flag: "copyleft", pattern: /\bAGPL|GNU AFFERO GENERAL PUBLIC LICENSE/i },
  { id: "LGPL-3.0", flag: "copyleft", pattern: /\bLGPL|GNU LESSER GENERAL PUBLIC LICENSE/i },
  { id: "GPL-3.0", flag: "copyleft", pattern: /\bGPL-3|GNU GENERAL PUBLIC LICENSE\s+Version 3/i },
  { id: "GPL-2.0", flag: "copyleft", pattern: /\bGPL-2|GNU GENERAL PUBLIC LICENSE\s+Version 2/i },
  { id: "MPL-2.0", flag: "copyleft", pattern: /\bMPL-2\.0|Mozilla Public License/i },
  { id: "CC-BY-SA-4.0", flag: "copyleft", pattern: /\bCC[- ]BY[- ]SA\b|Attribution-ShareAlike/i },
  { id: "CC0-1.0", flag: "permissive", pattern: /\bCC0\b|CC0 1\.0 Universal/i },
  {
    id: "CC-BY-4.0",
    flag: "permissive",
    pattern: /\bCC[- ]BY(?:[- ]4\.0)?\b|Creative Commons Attribution 4\.0/i,
  },
  {
    id: "Apache-2.0",
    flag: "permissive",
    pattern: /\bApache[- ]2\.0\b|Apache License,?\s+Version 2\.0/i,
  },
  {
    id: "MIT",
    flag: "permissive",
    pattern: /^MIT$|\bMIT License\b|Permission is hereby granted, free of charge/im,
  },
  { id: "BSD-3-Clause", flag: "permissive", pattern: /\bBSD-3-Clause\b|Neither the name of/i },
  {
    id: "BSD-2-Clause",
    flag: "permissive",
    pattern: /\bBSD-2-Clause\b|Redistributions of source code must retain/i,
  },
  { id: "ISC", flag: "permissive", pattern: /^ISC$|\bISC License\b/im },
  {
    id: "Unlicense",
    flag: "permissive",
    pattern: /^Unlicense$|This is free and unencumbered software/im,
  },
  // Last: BSD and MIT texts say "All rights reserved." too, and then grant the rights; only a
  // text that grants nothing recognised is proprietary.
  {
    id: "proprietary",
    flag: "restrictive",
    pattern: /all rights reserved|proprietary|^UNLICENSED$/im,
  },
];

export interface LicenceGuess {
  readonly licence: string | null;
  readonly flag: LicenceFlag;
}

/** Recognise a licence from an SPDX id or a licence text; `unknown` when nothing matches. */
export function recogniseLicence(text: string | undefined | null): LicenceGuess {
  if (text === undefined || text === null || text.trim() === "")
    return { licence: null, flag: "unknown" };
  const sample = text.slice(0, 4_000).trim();
  for (const rule of rules)
    if (rule.pattern.test(sample)) return { licence: rule.id, flag: rule.flag };
  return { licence: null, flag: "unknown" };
}

/** Flag of a licence the user declared in a manifest (an SPDX id). */
export function flagOfDeclared(licence: string): LicenceGuess {
  const recognised = recogniseLicence(licence);
  return recognised.flag === "unknown"
    ? { licence, flag: "unknown" }
    : { licence, flag: recognised.flag };
}

/** Whether a resource's licence should be pointed out to the user. */
export function isFlagged(flag: LicenceFlag): boolean {
  return flag === "unknown" || flag === "restrictive";
}

const FLAG_ORDER: readonly LicenceFlag[] = ["permissive", "copyleft", "unknown", "restrictive"];

/**
 * A repository's licence from several licence files (`LICENSE` and `LICENSE.APACHE`,
 * `LICENSE-MIT`, …): the primary file when it is recognised; else, when the primary file names
 * each of the others, their licences — `A OR B` (flag: the most permissive) if it says
 * "either", `A AND B` (flag: the most restrictive) otherwise; with no primary file, `A AND B`.
 * Anything else stays unknown.
 */
export function recogniseLicenceFiles(
  primary: { name: string; text: string } | undefined,
  others: readonly { name: string; text: string }[],
): LicenceGuess {
  if (primary !== undefined) {
    const direct = recogniseLicence(primary.text);
    if (direct.flag !== "unknown") return direct;
  }
  const recognised = others.map((each) => ({ ...each, guess: recogniseLicence(each.text) }));
  if (recognised.length === 0 || recognised.some((each) => each.guess.licence === null))
    return { licence: null, flag: "unknown" };
  if (primary !== undefined && !recognised.every((each) => primary.text.includes(each.name)))
    return { licence: null, flag: "unknown" };
  const either = primary !== undefined && /\beither\b/i.test(primary.text);
  const ids = [...new Set(recognised.map((each) => each.guess.licence as string))];
  const flags = recognised.map((each) => FLAG_ORDER.indexOf(each.guess.flag));
  const flag = FLAG_ORDER[either ? Math.min(...flags) : Math.max(...flags)] ?? "unknown";
  return {
    licence: ids.length === 1 ? (ids[0] ?? null) : ids.join(either ? " OR " : " AND "),
    flag,
  };
}
