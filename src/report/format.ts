/**
 * The words and numbers of the report, one way everywhere (HTML page, dashboard, tables, chart
 * labels): escaped text, signed deltas with a true minus sign, ratios, p-values, class names.
 */
import type { Profile } from "../bench/analysis/report.js";

export const MINUS = "\u2212";

/** Text from a run (skill names, notes, configuration ids) is untrusted: escape it everywhere. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

export function formatDelta(delta: number | null): string {
  if (delta === null) return "n/a";
  const rounded = Math.round(delta * 10) / 10;
  if (rounded === 0) return "0.0";
  return `${rounded > 0 ? "+" : MINUS}${Math.abs(rounded).toFixed(1)}`;
}

export function formatRatio(value: number | null): string {
  return value === null ? "n/a" : `${(100 * value).toFixed(1)}%`;
}

export function formatP(p: number | null): string {
  if (p === null) return "n/a";
  if (p < 0.001) return "<0.001";
  return p.toPrecision(2);
}

/** A profile's p: a "dp-bounds" p is an upper bound of the exact p, shown as "≤ p". */
export function formatProfileP(profile: {
  readonly p: number | null;
  readonly pMethod?: { readonly method: string } | null;
}): string {
  const text = formatP(profile.p);
  return profile.pMethod?.method === "dp-bounds" && profile.p !== null ? `≤ ${text}` : text;
}

export function className(value: string | null): string {
  return value === null ? "n/a" : value.charAt(0).toUpperCase() + value.slice(1);
}

/**
 * The class shown for a profile: "Unscorable" when nothing was measurable, "Needs review" when
 * suspicious runs hold its verdict (`Profile.review`).
 */
export function verdictName(profile: Profile): string {
  if (profile.unscorable !== null) return "Unscorable";
  if (profile.review !== undefined) {
    const held = profile.review.heldClass;
    return `Needs review${held === null ? "" : ` (statistics: ${className(held)})`}`;
  }
  return className(profile.class);
}

export function significant(profile: Profile, alpha: number): boolean {
  return profile.p !== null && profile.p < alpha;
}

/**
 * Beside every verdict of a report of part of a run (`completeness.complete === false`): the
 * verdict may change once the remaining runs are stored. Empty for a finished run.
 */
export function provisionalMark(report: {
  readonly completeness?: { readonly complete: boolean } | undefined;
}): string {
  return report.completeness?.complete === false
    ? ` <span class="provisional" data-testid="provisional" title="the run is incomplete: this verdict may change once every run is stored">(provisional)</span>`
    : "";
}
