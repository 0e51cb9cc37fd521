import { describe, expect, it } from "vitest";
import { targetedQuery } from "./query.js";

describe("targetedQuery", () => {
  it("keeps the task's content words once, in order, without function words or filler", () => {
    const query = targetedQuery(
      "Please make a sticky table header that stays visible when the table scrolls",
      {
        domain: "web-frontend",
        maxTerms: 10,
      },
    );
    // By hand: drop please, make, a, that, when, the (twice); keep the rest in task order.
    expect(query.terms).toEqual(["sticky", "table", "header", "stays", "visible", "scrolls"]);
    expect(query.text).toBe("sticky table header stays visible scrolls");
    expect(query.uncovered).toEqual(query.terms);
  });

  it("leads with the words the offline shortlist lacks, then cuts at maxTerms", () => {
    const query = targetedQuery("sticky table header with a CSS grid layout", {
      domain: "web-frontend",
      maxTerms: 4,
      covered: ["Center with CSS grid\ncss grid center\nWhen one child…\nlayout grid"],
    });
    // sticky, table, header are in no card; css, grid, layout are: the gap comes first.
    expect(query.terms).toEqual(["sticky", "table", "header", "css"]);
    expect(query.uncovered).toEqual(["sticky", "table", "header"]);
  });

  it("tokenises like the wiki's index (NFKC, lowercase) and drops one-character tokens", () => {
    const query = targetedQuery("Ｆｌｅｘｂｏｘ nav: wrap x items in 2 rows", {
      domain: "d",
      maxTerms: 6,
    });
    expect(query.terms).toEqual(["flexbox", "nav", "wrap", "items", "rows"]);
  });
});
