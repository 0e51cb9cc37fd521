import { describe, expect, it } from "vitest";
import { paragraphUnits, readArticle } from "./article.js";
import { fenceLanguage, isExamplePage, markdownTitle, markdownUnits } from "./document.js";

const README = `# tool

Intro paragraph long enough to be a unit of its own.

## Usage

### Sizes

\`\`\`pycon
>>> size(10)
'10 B'
\`\`\`

~~~sh
echo done
~~~

## Other

\`\`\`
\`\`\`

Text under other, long enough to count as a paragraph.
`;

describe("markdownUnits", () => {
  it("yields code blocks and paragraphs with their heading paths, in document order", () => {
    const units = markdownUnits(README, "README.md");
    expect(units.map((unit) => [unit.index, unit.kind, unit.locator, unit.language])).toEqual([
      [0, "paragraph", "README.md § tool", undefined],
      [1, "code-block", "README.md § tool › Usage › Sizes, code block 1 (python)", "python"],
      [2, "code-block", "README.md § tool › Usage › Sizes, code block 2 (bash)", "bash"],
      [3, "paragraph", "README.md § tool › Other", undefined],
    ]);
    expect(units[1]?.text).toBe(">>> size(10)\n'10 B'");
    expect(markdownTitle(README)).toBe("tool");
  });

  it("runs an unclosed fence to the end and keeps comments in paragraphs", () => {
    const units = markdownUnits(
      "Some text <!-- hidden note for agents --> here.\n\n```js\nrun()\n",
      "a.md",
    );
    expect(units.map((unit) => unit.kind)).toEqual(["paragraph", "code-block"]);
    expect(units[0]?.text).toContain("<!-- hidden note for agents -->");
    expect(units[1]?.text).toBe("run()\n");
  });

  it("maps fence languages to the runners' names", () => {
    expect(fenceLanguage("pycon")).toBe("python");
    expect(fenceLanguage("JS {linenos}")).toBe("javascript");
    expect(fenceLanguage("css")).toBe("css");
    expect(fenceLanguage("")).toBeUndefined();
  });
});

describe("HTML documents", () => {
  it("locates code blocks by their headings and reads their language from the class", () => {
    const html = `<!doctype html><html><head><title>Guide</title></head><body><article>
      <h1>Guide to centring</h1><p>This paragraph explains how centring works in layouts of all kinds.</p>
      <h2>With flexbox</h2><p>Flexbox centres on both axes with two properties on the container.</p>
      <pre class="brush: css">.box { display: flex; }</pre></article></body></html>`;
    const units = paragraphUnits(readArticle(html));
    const block = units.find((unit) => unit.kind === "code-block");
    expect(block?.language).toBe("css");
    expect(block?.text).toBe(".box { display: flex; }");
    // Readability takes the <h1> as the title, so the path starts below it.
    expect(block?.locator).toBe("paragraph 2 § With flexbox (code block, css)");
  });

  it("tells example pages from articles", () => {
    expect(isExamplePage("<html><head><style>.a{}</style></head><body></body></html>")).toBe(true);
    expect(isExamplePage('<div style="color:red">x</div>')).toBe(true);
    expect(isExamplePage("<html><body><p>Only prose.</p></body></html>")).toBe(false);
    // A styled manual page with prose is an article.
    expect(isExamplePage("<html><head><style>.a{}</style></head></html>", 3)).toBe(false);
  });
});
