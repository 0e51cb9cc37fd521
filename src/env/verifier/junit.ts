import { XMLParser } from "fast-xml-parser";
import { z } from "zod";
import { err, ok, type Result } from "../../core/result.js";
import type { CheckResult } from "./types.js";

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  textNodeName: "#text",
  parseAttributeValue: false,
  // pytest writes line breaks in failure messages as numeric references (&#10;); decode them.
  htmlEntities: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => ["testsuite", "testcase", "failure", "error", "skipped"].includes(name),
});

const outcomeSchema = z.union([
  z.string(),
  z.looseObject({ "@_message": z.string().optional(), "#text": z.string().optional() }),
]);
type Outcome = z.infer<typeof outcomeSchema>;

const testcaseSchema = z.looseObject({
  "@_name": z.string().optional(),
  "@_classname": z.string().optional(),
  failure: z.array(outcomeSchema).optional(),
  error: z.array(outcomeSchema).optional(),
  skipped: z.array(outcomeSchema).optional(),
});

// `| undefined`: zod's `.optional()` output may hold the key with an undefined value, which
// `exactOptionalPropertyTypes` tells apart from an absent key.
interface Suite {
  readonly testcase?: readonly unknown[] | undefined;
  readonly testsuite?: readonly Suite[] | undefined;
}

// An element with neither attributes nor children parses as "": treat it as an empty suite.
const suiteSchema: z.ZodType<Suite> = z.lazy(() =>
  z.preprocess(
    (value) => (value === "" ? {} : value),
    z.looseObject({
      testcase: z.array(z.unknown()).optional(),
      testsuite: z.array(suiteSchema).optional(),
    }),
  ),
);

const documentSchema = z.looseObject({
  testsuites: suiteSchema.optional(),
  testsuite: z.array(suiteSchema).optional(),
});

/**
 * Read the checks from a JUnit XML report (pytest `--junitxml`, vitest's junit reporter,
 * go-junit-report, Maven Surefire). A `testcase` with a `failure` child failed, with an `error`
 * child errored, with a `skipped` child was skipped, and passed otherwise. Check names are
 * `classname::name` when a class name is given. Untrusted input: never throws.
 */
export function parseJunitXml(xml: string): Result<CheckResult[], string> {
  let parsed: unknown;
  try {
    parsed = parser.parse(xml, true);
  } catch (error) {
    return err(`not well-formed XML: ${(error as Error).message}`);
  }
  const document = documentSchema.safeParse(parsed);
  if (!document.success) return err(`not a JUnit report: ${document.error.message}`);
  const roots: Suite[] = [];
  const top = document.data.testsuites;
  if (top !== undefined) roots.push(top);
  roots.push(...(document.data.testsuite ?? []));
  if (top === undefined && document.data.testsuite === undefined) {
    return err("not a JUnit report: no <testsuites> or <testsuite> root element");
  }
  const checks: CheckResult[] = [];
  const visit = (suite: Suite): void => {
    for (const raw of suite.testcase ?? []) {
      const testcase = testcaseSchema.safeParse(raw === "" ? {} : raw);
      if (!testcase.success) continue;
      checks.push(toCheck(testcase.data));
    }
    for (const child of suite.testsuite ?? []) visit(child);
  };
  for (const root of roots) visit(root);
  return ok(checks);
}

function toCheck(testcase: z.infer<typeof testcaseSchema>): CheckResult {
  const name = testcase["@_name"] ?? "(unnamed)";
  const classname = testcase["@_classname"];
  const qualified = classname === undefined || classname === "" ? name : `${classname}::${name}`;
  const pick = (outcomes: readonly Outcome[] | undefined) => {
    const first = outcomes?.[0];
    if (first === undefined) return undefined;
    if (typeof first === "string") return first;
    return first["@_message"] ?? first["#text"] ?? "";
  };
  const failure = pick(testcase.failure);
  if (failure !== undefined) return withMessage(qualified, "fail", failure);
  const error = pick(testcase.error);
  if (error !== undefined) return withMessage(qualified, "error", error);
  const skipped = pick(testcase.skipped);
  if (skipped !== undefined) return withMessage(qualified, "skip", skipped);
  return { name: qualified, status: "pass" };
}

function withMessage(name: string, status: CheckResult["status"], message: string): CheckResult {
  return message === "" ? { name, status } : { name, status, message };
}
