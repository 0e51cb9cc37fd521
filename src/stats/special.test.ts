import { describe, expect, it } from "vitest";
import {
  erfc,
  logGamma,
  normalCdf,
  regularizedIncompleteBeta,
  studentTCdf,
  studentTTwoSided,
} from "./special.js";

/** Relative closeness; reference values come from SciPy 1.17.1 (see each block). */
function expectRelativelyClose(actual: number, expected: number, tolerance = 1e-11): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(tolerance * Math.abs(expected));
}

describe("logGamma", () => {
  it("matches factorials and Γ(1/2) = √π", () => {
    // ln(4!) = ln 24, ln(9!) = ln 362880, Γ(1/2) = √π, Γ(3/2) = √π/2.
    expectRelativelyClose(logGamma(5), Math.log(24), 1e-14);
    expectRelativelyClose(logGamma(10), Math.log(362_880), 1e-14);
    expectRelativelyClose(logGamma(0.5), 0.5 * Math.log(Math.PI), 1e-14);
    expectRelativelyClose(logGamma(1.5), Math.log(Math.sqrt(Math.PI) / 2), 1e-13);
    expect(Math.abs(logGamma(1))).toBeLessThan(1e-15);
  });
});

describe("regularizedIncompleteBeta", () => {
  it("matches closed forms and SciPy's betainc", () => {
    // I_x(1, 1) = x; I_x(a, 1) = x^a.
    expectRelativelyClose(regularizedIncompleteBeta(0.25, 1, 1), 0.25, 1e-14);
    expectRelativelyClose(regularizedIncompleteBeta(0.6, 3, 1), 0.6 ** 3, 1e-13);
    // scipy.special.betainc(a, b, x)
    expectRelativelyClose(regularizedIncompleteBeta(0.3, 2.5, 0.5), 0.018927124071945658);
    expectRelativelyClose(regularizedIncompleteBeta(0.9, 0.5, 0.5), 0.7951672353008665);
    expectRelativelyClose(regularizedIncompleteBeta(0.7, 10, 3), 0.25281534785499993);
    expect(regularizedIncompleteBeta(0, 2, 3)).toBe(0);
    expect(regularizedIncompleteBeta(1, 2, 3)).toBe(1);
  });
});

describe("Student t tail", () => {
  it("matches SciPy's 2·t.sf(|t|, df)", () => {
    const cases: [number, number, number][] = [
      [2.0, 5, 0.10193947882985835],
      [0.5, 1, 0.7048327646991335],
      [10.0, 3, 0.0021283990584141503],
      [40.0, 30, 1.3726045194406417e-27],
      [1.96, 1000, 0.050273184955748736],
      [-3.3, 7.5, 0.011891634562261168],
      [8, 2, 0.01526807216533814],
    ];
    for (const [t, df, expected] of cases) expectRelativelyClose(studentTTwoSided(t, df), expected);
  });

  it("has the closed form of the Cauchy distribution for df = 1", () => {
    // With one degree of freedom, F(t) = 1/2 + atan(t)/π.
    for (const t of [-3, -0.2, 0, 0.7, 5]) {
      expect(Math.abs(studentTCdf(t, 1) - (0.5 + Math.atan(t) / Math.PI))).toBeLessThan(1e-14);
    }
  });

  it("handles t = 0 and infinite t", () => {
    expect(studentTTwoSided(0, 4)).toBe(1);
    expect(studentTTwoSided(Number.POSITIVE_INFINITY, 4)).toBe(0);
  });
});

describe("erfc and the normal distribution", () => {
  it("matches SciPy's erfc, including far tails", () => {
    const cases: [number, number][] = [
      [0.1, 0.8875370839817152],
      [0.5, 0.4795001221869535],
      [1.0, 0.15729920705028516],
      [2.0, 0.004677734981047266],
      [3.5, 7.430983723414129e-7],
      [6.0, 2.1519736712498913e-17],
      [10.0, 2.0884875837625446e-45],
    ];
    for (const [x, expected] of cases) expectRelativelyClose(erfc(x), expected);
    expectRelativelyClose(erfc(-1), 2 - 0.15729920705028516, 1e-14);
  });

  it("gives Φ(0) = 1/2 and the 97.5% point 1.959963984540054", () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 15);
    expect(normalCdf(1.959963984540054)).toBeCloseTo(0.975, 13);
  });
});
