/**
 * The trajectory viewer, shared by the static HTML report (pairs embedded as JSON, shown on
 * `#pair/<path>`) and the dashboard (`/pair/<path>`, data fetched from `/api/pair/<path>`).
 *
 * The page is built with DOM calls and `textContent` only, never `innerHTML`, so run text (agent
 * messages, tool output, check messages, skill names) cannot become markup whatever it holds.
 */
import type { ArmView, PairView } from "../pairs.js";

type Child = Node | string | false | null | undefined;

const ARMS: readonly (readonly ["without" | "with", string])[] = [
  ["without", "Without skill"],
  ["with", "With skill"],
];
const CHECK: Readonly<Record<string, readonly [string, string]>> = {
  pass: ["\u2714", "pass"],
  fail: ["\u2718", "FAIL"],
  error: ["\u2718", "ERROR"],
  skip: ["\u2013", "skipped"],
};

/** An element with attributes (`text` sets its text content) and children. */
function el(
  tag: string,
  attributes?: Readonly<Record<string, string>> | null,
  children: readonly Child[] = [],
): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value);
  }
  for (const child of children)
    if (child) node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  return node;
}

function pct(value: number): string {
  return `${(100 * value).toFixed(1)}%`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function diffBlock(text: string): HTMLElement {
  const pre = el("pre", { class: "diff" });
  for (const line of String(text).split("\n")) {
    const kind =
      line.indexOf("@@") === 0
        ? "hunk"
        : line.charAt(0) === "+"
          ? "add"
          : line.charAt(0) === "-"
            ? "del"
            : "ctx";
    pre.appendChild(el("span", { class: kind, text: line === "" ? " " : line }));
  }
  return pre;
}

function flagLabels(arm: ArmView): string[] {
  return (arm.flagDetails || []).map((flag) => flag.label);
}

function summary(arm: ArmView): HTMLElement[] {
  const passedAll = arm.total > 0 && arm.passed === arm.total;
  const verdict = el("p", { "data-testid": "arm-verdict" }, [
    el("span", {
      class: passedAll ? "verdict-pass" : "verdict-fail",
      text: `${passedAll ? "\u2714 " : "\u2718 "}${arm.passed} of ${arm.total} checks passed`,
    }),
    ` (pass ratio ${pct(arm.passRatio)}), status ${arm.status}${arm.flags.length ? `, flags: ${flagLabels(arm).join(", ")}` : ""}`,
  ]);
  const activation =
    arm.skillActivated === null
      ? "unknown (the harness cannot tell)"
      : arm.skillActivated
        ? `yes${arm.activationIndex !== undefined ? ` \u2605 at step ${arm.activationIndex + 1}` : ""}`
        : "no";
  const rows: [string, string][] = [
    ["skill activated", arm.arm === "with" ? activation : "not installed (control arm)"],
    ["harness", (arm.harness || "unknown") + (arm.model ? ` / ${arm.model}` : "")],
    [
      "skills shown",
      arm.skillsShown.length
        ? arm.skillsShown.join(", ")
        : `none listed${arm.skillsShownSource ? ` (${arm.skillsShownSource})` : ""}`,
    ],
    [
      "tokens in / cached / out",
      `${arm.usage.inputTokens} / ${arm.usage.cachedInputTokens} / ${arm.usage.outputTokens}`,
    ],
    ["cost", `$${arm.usage.costUsd.toFixed(4)}`],
    ["time agent / verifier", `${seconds(arm.agentMs)} / ${seconds(arm.verifierMs)}`],
    ["attempts", String(arm.attempts)],
  ];
  if (arm.error) rows.push(["error", arm.error]);
  if (arm.trajectoryFile) rows.push(["raw log", arm.trajectoryFile]);
  if (arm.trajectoryProblem)
    rows.push(["trajectory", `could not be read: ${arm.trajectoryProblem}`]);
  const table = el("table", { class: "arm-summary" }, [
    el(
      "tbody",
      null,
      rows.map((row) =>
        el("tr", null, [el("th", { scope: "row", text: row[0] }), el("td", { text: row[1] })]),
      ),
    ),
  ]);
  return [verdict, table];
}

/** The verifier's own record: flags with what they mean, evidence, and its whole stored output. */
function verifier(arm: ArmView): HTMLElement {
  const section = el("div", { "data-testid": "verifier" }, [el("h4", { text: "Verifier" })]);
  if ((arm.flagDetails || []).length) {
    const list = el("ul", { "data-testid": "flag-details" });
    for (const flag of arm.flagDetails)
      list.appendChild(
        el("li", { "data-testid": "flag-detail", "data-flag": flag.id }, [
          el("strong", { text: flag.label }),
          ` (${flag.effect}): ${flag.description}`,
        ]),
      );
    section.appendChild(list);
  }
  const record = arm.verifier;
  if (!record) {
    section.appendChild(
      el("p", {
        class: "missing",
        text:
          arm.status === "timeout"
            ? "The verifier did not run: the agent hit its time limit."
            : "No verifier output stored for this run.",
      }),
    );
    return section;
  }
  section.appendChild(
    el("p", {
      class: "note",
      "data-testid": "verifier-meta",
      text: `exit code ${record.exitCode === null ? "none (killed)" : record.exitCode}, ${seconds(record.durationMs)}${record.source ? `, outcomes read from ${record.source}` : ""}`,
    }),
  );
  if (record.evidence?.length) {
    const evidence = el("ul", { "data-testid": "verifier-evidence" });
    for (const line of record.evidence) evidence.appendChild(el("li", { text: line }));
    section.appendChild(el("p", { class: "label", text: "Evidence" }));
    section.appendChild(evidence);
  }
  const canaries = record.canaries || [];
  if (canaries.length) {
    // The canaries run among the suite's tests, so the output names them; say what they are.
    section.appendChild(
      el("p", {
        class: "note",
        "data-testid": "verifier-canaries",
        text: `skillsmith added ${canaries.length} integrity ${canaries.length === 1 ? "canary" : "canaries"} to this verifier's tests (${canaries.map((canary) => `${canary.name}, made to ${canary.expect}`).join("; ")}): they check that outcomes were not forged, are not your tests and are not counted in the checks; the output marks their lines.`,
      }),
    );
  }
  section.appendChild(
    el("pre", {
      "data-testid": "verifier-output",
      text: record.output === "" ? "(no output)" : record.output,
    }),
  );
  return section;
}

function checks(arm: ArmView): HTMLElement {
  const body = el("tbody");
  for (const check of arm.checks) {
    const mark = CHECK[check.status] || ["?", check.status];
    body.appendChild(
      el("tr", { "data-testid": "check", "data-status": check.status }, [
        el("th", { scope: "row", text: check.name }),
        el("td", {
          class: `result ${check.status === "pass" ? "verdict-pass" : "verdict-fail"}`,
          text: `${mark[0]} ${mark[1]}`,
        }),
      ]),
    );
    // The verifier's message gets the full width: assertion output is long and multi-line.
    if (check.message)
      body.appendChild(
        el("tr", { "data-testid": "check-message", "data-status": check.status }, [
          el("td", { colspan: "2" }, [el("pre", { class: "message", text: check.message })]),
        ]),
      );
  }
  return el("table", { "data-testid": "checks" }, [
    el("caption", { text: `Verifier checks (${arm.passed} of ${arm.total} passed)` }),
    el("thead", null, [
      el("tr", null, [
        el("th", { scope: "col", text: "check" }),
        el("th", { scope: "col", text: "result" }),
      ]),
    ]),
    body,
  ]);
}

function files(arm: ArmView): HTMLElement {
  const section = el("div", { "data-testid": "files" }, [
    el("h4", { text: `Files changed (${arm.files.length})` }),
  ]);
  section.appendChild(
    el("p", {
      class: "note",
      text: `Derived from the agent's file-writing tool calls; the workspace diff itself is not stored.${arm.shellCalls ? ` ${arm.shellCalls} shell command(s) may have changed files too; those changes are not shown.` : ""}`,
    }),
  );
  if (!arm.files.length)
    section.appendChild(el("p", { class: "missing", text: "No file-writing tool calls." }));
  for (const file of arm.files) {
    const head = el("p", { "data-testid": "file" }, [
      el("code", { text: file.path }),
      ` \u2014 ${file.kind} via ${file.tool}${file.failed ? " (the tool reported an error; the change may not have been applied)" : ""}${file.note ? `; ${file.note}` : ""}`,
    ]);
    section.appendChild(head);
    if (file.diff !== undefined) section.appendChild(diffBlock(file.diff));
  }
  return section;
}

function events(arm: ArmView): HTMLElement {
  const list = el("ol", { class: "events", "data-testid": "events" });
  arm.events.forEach((event, index) => {
    const isError = event.type === "tool_result" && event.isError;
    const activation = event.type === "tool_call" && event.activation === true;
    const item = el("li", {
      class: `event event-${event.type}${isError ? " error" : ""}${activation ? " activation" : ""}`,
      "data-testid": "event",
      "data-type": event.type,
    });
    if (event.type === "assistant_text") {
      item.appendChild(el("div", { class: "label", text: "Agent message" }));
      item.appendChild(el("pre", { text: event.text }));
    } else if (event.type === "tool_call") {
      const label = el("div", { class: "label" }, ["Tool call ", el("code", { text: event.name })]);
      if (event.activation)
        label.appendChild(
          el("span", {
            class: "activation-badge",
            "data-testid": "activation",
            text: "\u2605 skill activated here",
          }),
        );
      item.appendChild(label);
      item.appendChild(
        event.patch !== undefined ? diffBlock(event.patch) : el("pre", { text: event.input }),
      );
    } else if (event.type === "tool_result") {
      item.appendChild(
        el("div", {
          class: "label",
          text: event.isError ? "\u2718 Tool result (error)" : "Tool result",
        }),
      );
      item.appendChild(el("pre", { text: event.output === "" ? "(no output)" : event.output }));
    } else {
      item.appendChild(el("div", { class: "label", text: "\u2718 Error" }));
      item.appendChild(el("pre", { text: event.message }));
    }
    item.setAttribute("value", String(index + 1));
    list.appendChild(item);
  });
  return el("div", null, [
    el("h4", {
      text: `Trajectory (${arm.events.length}${arm.events.length === 1 ? " event)" : " events)"}`,
    }),
    arm.events.length ? list : el("p", { class: "missing", text: "No events recorded." }),
  ]);
}

function armColumn(pair: PairView, name: "without" | "with", title: string): HTMLElement {
  const arm = pair[name];
  const column = el("section", { class: "arm", "data-testid": `arm-${name}`, "data-arm": name }, [
    el("h3", { text: title }),
  ]);
  if (!arm) {
    column.appendChild(el("p", { class: "missing", text: "Not run yet." }));
    return column;
  }
  for (const node of summary(arm)) column.appendChild(node);
  column.appendChild(checks(arm));
  column.appendChild(verifier(arm));
  column.appendChild(files(arm));
  column.appendChild(events(arm));
  return column;
}

function clear(container: HTMLElement): void {
  while (container.firstChild) container.removeChild(container.firstChild);
  container.className = "viewer";
}

function render(container: HTMLElement, pair: PairView, backHref: string): void {
  clear(container);
  container.setAttribute("data-testid", "pair-viewer");
  container.setAttribute("data-pair", pair.id);
  container.appendChild(
    el("p", null, [
      el("a", { href: backHref, "data-testid": "back", text: "\u2190 back to the report" }),
    ]),
  );
  container.appendChild(
    el("h2", { text: `Trajectories of ${pair.skill} \u00b7 ${pair.requirement}` }),
  );
  container.appendChild(
    el("p", {
      class: "note",
      text: `configuration ${pair.config}, repeat ${pair.repeat}. Without- and with-skill runs side by side.`,
    }),
  );
  container.appendChild(
    el(
      "div",
      { class: "arms" },
      ARMS.map(([name, title]) => armColumn(pair, name, title)),
    ),
  );
}

function missing(container: HTMLElement, id: string, backHref: string): void {
  clear(container);
  container.appendChild(
    el("p", null, [el("a", { href: backHref, text: "\u2190 back to the report" })]),
  );
  container.appendChild(
    el("p", {
      class: "missing",
      "data-testid": "pair-missing",
      text: `No stored runs for the pair ${id}.`,
    }),
  );
}

window.skillsmithViewer = { render, missing };
