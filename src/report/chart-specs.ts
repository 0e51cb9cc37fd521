/**
 * The report's Vega-Lite chart specifications (heatmap, per-requirement deltas, configuration
 * scatter, usage), each drawn beside an HTML table of the same values by `html.ts`.
 */
import type { BenchReport, Profile } from "../bench/analysis/report.js";
import {
  escapeHtml,
  formatDelta,
  formatProfileP,
  formatRatio,
  significant,
  verdictName,
} from "./format.js";

export interface Chart {
  readonly id: string;
  readonly spec: Record<string, unknown>;
}

export const VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json";

export function heatmapSpec(report: BenchReport, skills: readonly string[], alpha: number): Chart {
  const values = report.profiles.map((profile) => ({
    skill: profile.skill,
    config: profile.config,
    delta: profile.delta,
    label:
      profile.unscorable !== null
        ? "unscorable"
        : `${formatDelta(profile.delta)}${significant(profile, alpha) ? "★" : ""}`,
    class: verdictName(profile),
    p: formatProfileP(profile),
    deltaText: formatDelta(profile.delta),
  }));
  const extent = Math.max(10, ...report.profiles.map((profile) => Math.abs(profile.delta ?? 0)));
  // Dark ends of the scheme need light text to stay readable.
  const textColor = {
    condition: { test: `abs(datum.delta) > ${0.6 * extent}`, value: "white" },
    value: "black",
  };
  const encoding = {
    y: { field: "skill", type: "nominal", sort: skills, title: "skill" },
    x: { field: "config", type: "nominal", title: "configuration", axis: { labelAngle: 0 } },
  };
  return {
    id: "heatmap-chart",
    spec: {
      $schema: VEGA_LITE_SCHEMA,
      description: "Skill-level Δ (percentage points) per skill and configuration",
      data: { values },
      width: { step: 140 },
      height: { step: 44 },
      encoding,
      layer: [
        {
          mark: { type: "rect", stroke: "white" },
          encoding: {
            color: {
              field: "delta",
              type: "quantitative",
              title: "Δ (pp)",
              scale: { scheme: "blueorange", domain: [-extent, extent], domainMid: 0 },
            },
            tooltip: [
              { field: "skill", title: "skill" },
              { field: "config", title: "configuration" },
              { field: "deltaText", title: "Δ (pp)" },
              { field: "p", title: "p" },
              { field: "class", title: "class" },
            ],
          },
        },
        {
          mark: { type: "text", baseline: "bottom", dy: -1, fontWeight: "bold" },
          encoding: { text: { field: "label" }, color: textColor },
        },
        {
          mark: { type: "text", baseline: "top", dy: 3, fontSize: 10 },
          encoding: { text: { field: "class" }, color: textColor },
        },
      ],
    },
  };
}

export function requirementSpec(profile: Profile, index: number): Chart {
  const values = profile.requirements
    .filter((outcome) => outcome.delta !== null)
    .map((outcome) => ({
      requirement: outcome.id,
      delta: outcome.delta,
      deltaText: formatDelta(outcome.delta),
      without: formatRatio(outcome.without),
      with: formatRatio(outcome.with),
    }));
  return {
    id: `requirements-chart-${index}`,
    spec: {
      $schema: VEGA_LITE_SCHEMA,
      description: `Requirement deltas of ${profile.skill} under ${profile.config}`,
      data: { values },
      width: 320,
      height: { step: 18 },
      layer: [
        { mark: { type: "rule", color: "#888" }, encoding: { x: { datum: 0 } } },
        {
          // A thin outline keeps points near Δ = 0 (almost white in the scheme) visible.
          mark: { type: "point", filled: true, size: 70, stroke: "#333", strokeWidth: 0.6 },
          encoding: {
            y: { field: "requirement", type: "nominal", sort: null, title: "requirement" },
            x: {
              field: "delta",
              type: "quantitative",
              title: "d = 100·(with − without)",
              scale: { domain: [-100, 100] },
            },
            color: {
              field: "delta",
              type: "quantitative",
              scale: { scheme: "blueorange", domain: [-100, 100], domainMid: 0 },
              legend: null,
            },
            tooltip: [
              { field: "requirement" },
              { field: "without", title: "without" },
              { field: "with", title: "with" },
              { field: "deltaText", title: "d" },
            ],
          },
        },
      ],
    },
  };
}

export function scatterSpec(
  report: BenchReport,
  left: string,
  right: string,
  index: number,
): Chart {
  const values: Array<{ skill: string; x: number; y: number }> = [];
  for (const profile of report.profiles.filter((candidate) => candidate.config === left)) {
    const other = report.profiles.find(
      (candidate) => candidate.config === right && candidate.skill === profile.skill,
    );
    if (profile.delta !== null && other !== undefined && other.delta !== null) {
      values.push({ skill: profile.skill, x: profile.delta, y: other.delta });
    }
  }
  return {
    id: `scatter-chart-${index}`,
    spec: {
      $schema: VEGA_LITE_SCHEMA,
      description: `Skill-level Δ under ${left} against ${right}`,
      data: { values },
      width: 320,
      height: 320,
      layer: [
        { mark: { type: "rule", color: "#aaa" }, encoding: { x: { datum: 0 } } },
        { mark: { type: "rule", color: "#aaa" }, encoding: { y: { datum: 0 } } },
        {
          mark: { type: "point", filled: true, size: 80, color: "#1f5fa8" },
          encoding: {
            x: { field: "x", type: "quantitative", title: `Δ under ${left}` },
            y: { field: "y", type: "quantitative", title: `Δ under ${right}` },
            tooltip: [
              { field: "skill" },
              { field: "x", title: left, format: "+.1f" },
              { field: "y", title: right, format: "+.1f" },
            ],
          },
        },
      ],
    },
  };
}

export function usageSpec(report: BenchReport): Chart {
  const values = report.configs.flatMap((config) =>
    (["without", "with"] as const).map((arm) => ({
      config: config.config,
      arm,
      seconds: config.usage[arm].totalMs / 1000,
    })),
  );
  return {
    id: "usage-chart",
    spec: {
      $schema: VEGA_LITE_SCHEMA,
      description: "Wall time per configuration and arm",
      data: { values },
      width: 320,
      height: { step: 20 },
      mark: "bar",
      encoding: {
        y: { field: "config", type: "nominal", title: "configuration" },
        yOffset: { field: "arm", sort: ["without", "with"] },
        x: { field: "seconds", type: "quantitative", title: "wall time (s)" },
        color: {
          field: "arm",
          sort: ["without", "with"],
          scale: { range: ["#999999", "#1f5fa8"] },
        },
        tooltip: [{ field: "config" }, { field: "arm" }, { field: "seconds", format: ".1f" }],
      },
    },
  };
}

export function chartContainer(chart: Chart, label: string): string {
  return `<div class="chart" id="${chart.id}" role="img" aria-label="${escapeHtml(label)}" data-testid="${chart.id}"></div>`;
}
