import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInProcess } from "./support/cli.js";

const run = (argv: string[], cwd?: string) => runInProcess(argv, cwd === undefined ? {} : { cwd });

let directory = "";
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "skillsmith-stats-"));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe("skillsmith stats test --json", () => {
  it("prints the documented JSON shape with hand-computed values", async () => {
    const result = await run(["stats", "test", "--deltas", "10,-5,20,15,5,0,25", "--json"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const document = JSON.parse(result.stdout);
    // Hand computations: signflip.test.ts (6/64), ttest.test.ts (t = √6),
    // wilcoxon.test.ts (W+ = 19.5, p = 6/64).
    expect(document).toMatchObject({
      n: 7,
      delta: 10,
      signflip: { p: 6 / 64, method: "exact" },
      wilcoxon: { statistic: 19.5, p: 6 / 64 },
      class: "ineffective",
    });
    expect(document.ttest.t).toBeCloseTo(Math.sqrt(6), 14);
    expect(document.ttest.p).toBeCloseTo(0.04982526278057676, 13);
    expect(Object.keys(document)).toEqual(
      expect.arrayContaining(["n", "delta", "signflip", "ttest", "wilcoxon", "class", "ci"]),
    );
  });

  it("accepts negative first values and classifies consistent losses as harmful", async () => {
    const deltas = "-10,-20,-10,-30,-10,-20,-10,-40,-10,-20";
    const result = await run(["stats", "test", "--deltas", deltas, "--json"]);
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout);
    // All ten negative: p = 2/2^10.
    expect(document.signflip.p).toBe(2 / 1024);
    expect(document.class).toBe("harmful");
  });

  it("honours --alpha", async () => {
    // [10, 20, 30, 40, -5]: magnitudes total 105, observed 95; ΣF ≤ 5 → {}, {5} → 4/32 = 0.125.
    const strict = await run(["stats", "test", "--deltas", "10,20,30,40,-5", "--json"]);
    const loose = await run([
      "stats",
      "test",
      "--deltas",
      "10,20,30,40,-5",
      "--alpha",
      "0.2",
      "--json",
    ]);
    expect(JSON.parse(strict.stdout).signflip.p).toBe(0.125);
    expect(JSON.parse(strict.stdout).class).toBe("ineffective");
    expect(JSON.parse(loose.stdout).class).toBe("golden");
  });

  it("prints t as null when it is infinite", async () => {
    const result = await run(["stats", "test", "--deltas", "5,5,5", "--json"]);
    const document = JSON.parse(result.stdout);
    expect(document.ttest.t).toBeNull();
    expect(document.ttest.p).toBe(0);
    expect(document.signflip.p).toBe(2 / 8);
  });

  it("uses the exact dynamic programme for many pass-ratio deltas", async () => {
    const deltas = Array.from({ length: 60 }, (_, index) => ((index % 5) - 1) * (100 / 12));
    const result = await run(["stats", "test", "--deltas", deltas.join(","), "--json"]);
    expect(JSON.parse(result.stdout).signflip.method).toBe("dp");
  });
});

describe("skillsmith stats test agrees with brute force", () => {
  it("for a 14-delta pass-ratio vector with ties and zeros, to 1e-12", async () => {
    // Deltas 100·(a − b)/12 for a fixed list of outcome pairs; the reference walks all 2^14 sign
    // assignments directly.
    const pairs = [
      [12, 9],
      [7, 7],
      [10, 4],
      [3, 5],
      [12, 12],
      [11, 6],
      [8, 9],
      [12, 7],
      [6, 6],
      [9, 2],
      [4, 4],
      [10, 9],
      [5, 8],
      [12, 3],
    ];
    const deltas = pairs.map(([a, b]) => (100 * ((a as number) - (b as number))) / 12);
    const observed = Math.abs(deltas.reduce((sum, value) => sum + value, 0));
    let extreme = 0;
    for (let mask = 0; mask < 2 ** deltas.length; mask++) {
      let sum = 0;
      deltas.forEach((value, index) => {
        sum += (mask >> index) & 1 ? Math.abs(value) : -Math.abs(value);
      });
      if (Math.abs(sum) >= observed - 1e-7) extreme++;
    }
    const result = await run(["stats", "test", "--deltas", deltas.join(","), "--json"]);
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(Math.abs(document.signflip.p - extreme / 2 ** deltas.length)).toBeLessThan(1e-12);
  });
});

describe("skillsmith stats test (text)", () => {
  it("prints a compact summary", async () => {
    const result = await run(["stats", "test", "--deltas", "10,-5,20,15,5,0,25"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/n = 7/);
    expect(result.stdout).toMatch(/sign-flip\s+p = 0\.09375/);
    expect(result.stdout).toMatch(/class\s+ineffective/);
  });

  it("has help with an example", async () => {
    const result = await run(["stats", "test", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("--deltas-file");
    expect(result.stdout).toContain("$ skillsmith stats test --deltas");
  });
});

describe("skillsmith stats test: input errors exit 2", () => {
  it("names the flag and the position of a bad item", async () => {
    const result = await run(["stats", "test", "--deltas", "10,abc,5"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/--deltas: item 2 of 3 is "abc"/);
    expect(result.stderr).not.toMatch(/at .*\.ts/);
  });

  it("rejects empty, NaN, Infinity and empty items", async () => {
    for (const [value, pattern] of [
      ["", /--deltas is empty/],
      ["abc", /item 1 of 1/],
      ["1,NaN", /item 2 of 2 is "NaN"/],
      ["Infinity", /item 1 of 1 is "Infinity"/],
      ["1,,2", /item 2 of 3 is empty/],
    ] as const) {
      const result = await run(["stats", "test", "--deltas", value]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(pattern);
    }
  });

  it("requires deltas and a valid alpha", async () => {
    const missing = await run(["stats", "test"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--deltas/);
    const alpha = await run(["stats", "test", "--deltas", "1,2", "--alpha", "1.5"]);
    expect(alpha.code).toBe(2);
    expect(alpha.stderr).toMatch(/--alpha/);
  });
});

describe("skillsmith stats test --deltas-file", () => {
  it("reads one number per line, comma lists, comments and blank lines", async () => {
    await writeFile(
      join(directory, "deltas.txt"),
      "# requirement deltas\n10\n-5\n\n20,15\r\n5,0\n25\n",
    );
    const result = await run(["stats", "test", "--deltas-file", "deltas.txt", "--json"], directory);
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(document.n).toBe(7);
    expect(document.signflip.p).toBe(6 / 64);
  });

  it("names the file and the line of a bad value", async () => {
    await writeFile(join(directory, "bad.txt"), "10\n-5\nten\n");
    const result = await run(["stats", "test", "--deltas-file", "bad.txt"], directory);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad\.txt, line 3: "ten" is not a number/);
  });

  it("names the item within a comma-separated line", async () => {
    await writeFile(join(directory, "bad-list.txt"), "1,2\n3,x,4\n");
    const result = await run(["stats", "test", "--deltas-file", "bad-list.txt"], directory);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad-list\.txt, line 2: item 2 "x" is not a number/);
  });

  it("reports a missing or empty file", async () => {
    const missing = await run(["stats", "test", "--deltas-file", "nope.txt"], directory);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.txt: cannot read the deltas file \(ENOENT\)/);
    await writeFile(join(directory, "empty.txt"), "# nothing\n\n");
    const empty = await run(["stats", "test", "--deltas-file", "empty.txt"], directory);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/empty\.txt: contains no deltas/);
  });

  it("refuses --deltas together with --deltas-file", async () => {
    const result = await run(
      ["stats", "test", "--deltas", "1", "--deltas-file", "x.txt"],
      directory,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/either --deltas or --deltas-file/);
  });
});

describe("skillsmith stats test: what each figure is (issue 31)", () => {
  it("100,1e-8 gives p = 0.5 (of the 4 sign assignments, the 2 with equal signs reach 100 + 1e-8)", async () => {
    const result = await run(["stats", "test", "--deltas", "100,1e-8", "--json"]);
    const document = JSON.parse(result.stdout);
    expect(document.signflip).toMatchObject({ p: 2 / 4, nonZero: 2 });
    expect(document.zero).toBe(0);
    expect(document.wilcoxon.zeros).toBe(0);
  });

  it("counts zeros one way in the text and defines Ineffective", async () => {
    const result = await run(["stats", "test", "--deltas", "100,1e-8,0,5"]);
    expect(result.stdout).toContain("1 zero)");
    expect(result.stdout).toContain("1 zero dropped");
    expect(result.stdout).toContain(
      "Ineffective = no effect detected at α with these requirements",
    );
  });

  it("labels the bootstrap interval and gives none for constant deltas", async () => {
    const labelled = await run(["stats", "test", "--deltas", "10,-5,20,15,5,0,25"]);
    expect(labelled.stdout).toMatch(/95% CI {2}\[[^\]]+\] points \(studentized bootstrap/);
    const constant = await run(["stats", "test", "--deltas", "50,50,50,50,50,50", "--json"]);
    const document = JSON.parse(constant.stdout);
    expect(document.ci).toMatchObject({ lower: null, upper: null });
    expect(document.ci.none).toMatch(/every delta equals 50/);
    expect(document.definitions.ineffective).toMatch(/no effect detected at α/);
  });

  it("says a dp-bounds p is an upper bound, and never prints a class α could lie on either side of", async () => {
    // 60 off-grid deltas: beyond enumeration, so the p is a bracket.
    const deltas = Array.from(
      { length: 60 },
      (_, index) => (index % 2 === 0 ? 1 : -1) * (1 + ((index * 0.6180339887498949) % 1)) + 0.2,
    );
    const file = join(directory, "bounded.txt");
    await writeFile(file, deltas.join("\n"));
    const text = await run(["stats", "test", "--deltas-file", file]);
    expect(text.stdout).toMatch(
      /sign-flip {2}p ≤ [\d.]+ \(an upper bound, not an estimate: exact p in \[/,
    );
    const json = JSON.parse((await run(["stats", "test", "--deltas-file", file, "--json"])).stdout);
    expect(json.signflip).toMatchObject({ method: "dp-bounds", pIsUpperBound: true });
    const { pLower, pUpper } = json.signflip;
    const straddles = pLower < 0.05 && 0.05 <= pUpper;
    expect(json.class === "undecided").toBe(straddles);
  });
});
