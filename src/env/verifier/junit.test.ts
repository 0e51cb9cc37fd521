import { describe, expect, it } from "vitest";
import { parseJunitXml } from "./junit.js";

describe("parseJunitXml", () => {
  it("reads pytest-style reports: failure, error, skipped and passing test cases", () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?>
<testsuites name="pytest tests">
  <testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4">
    <testcase classname="test_calc" name="test_add" time="0.001"/>
    <testcase classname="test_calc" name="test_sub" time="0.001">
      <failure message="assert 8 == 2">def test_sub(): ...</failure>
    </testcase>
    <testcase classname="test_calc" name="test_div" time="0.001">
      <error message="failed on setup with &quot;fixture 'x' not found&quot;">trace</error>
    </testcase>
    <testcase classname="test_calc" name="test_pow" time="0.000">
      <skipped type="pytest.skip" message="not yet">test_calc.py:9: not yet</skipped>
    </testcase>
  </testsuite>
</testsuites>`;
    const parsed = parseJunitXml(xml);
    expect(parsed).toEqual({
      ok: true,
      value: [
        { name: "test_calc::test_add", status: "pass" },
        { name: "test_calc::test_sub", status: "fail", message: "assert 8 == 2" },
        {
          name: "test_calc::test_div",
          status: "error",
          message: "failed on setup with \"fixture 'x' not found\"",
        },
        { name: "test_calc::test_pow", status: "skip", message: "not yet" },
      ],
    });
  });

  it("reads a bare <testsuite> root, nested suites and message-less outcomes", () => {
    const xml = `<testsuite name="outer">
  <testsuite name="inner"><testcase name="deep"><failure/></testcase></testsuite>
  <testcase name="top"><skipped/></testcase>
  <testcase name="text-only"><failure>expected 1 got 2</failure></testcase>
</testsuite>`;
    const parsed = parseJunitXml(xml);
    expect(parsed.ok && parsed.value).toEqual([
      { name: "top", status: "skip" },
      { name: "text-only", status: "fail", message: "expected 1 got 2" },
      { name: "deep", status: "fail" },
    ]);
  });

  it("decodes numeric character references, as pytest writes line breaks in messages", () => {
    const xml = `<testsuite><testcase classname="t" name="test_x">
      <failure message="assert 1 == 2&#10; +  where 1 = f()&#xA;done">trace</failure>
    </testcase></testsuite>`;
    expect(parseJunitXml(xml)).toEqual({
      ok: true,
      value: [
        { name: "t::test_x", status: "fail", message: "assert 1 == 2\n +  where 1 = f()\ndone" },
      ],
    });
  });

  it("accepts an empty report", () => {
    expect(parseJunitXml("<testsuites/>")).toEqual({ ok: true, value: [] });
  });

  it("rejects what is not a JUnit report without throwing", () => {
    expect(parseJunitXml("<html><body/></html>").ok).toBe(false);
    expect(parseJunitXml("<testsuites><testsuite>").ok).toBe(false);
    expect(parseJunitXml("not xml at all").ok).toBe(false);
  });
});
