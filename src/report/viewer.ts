/**
 * The trajectory viewer's browser code and style, shared by the static HTML report (pairs
 * embedded as JSON, shown on `#pair/<path>`) and the dashboard (`/pair/<path>`, data fetched
 * from `/api/pair/<path>`).
 *
 * The page is built with DOM calls and `textContent` only, never `innerHTML`, so run text (agent
 * messages, tool output, check messages, skill names) cannot become markup whatever it holds.
 * It is plain ES5-style JavaScript in a string so it ships without a build step.
 */

export const VIEWER_STYLE = `
.viewer h2{margin-top:1rem}
.viewer .arms{display:grid;grid-template-columns:1fr 1fr;gap:1rem;align-items:start}
.viewer .arm{border:1px solid #ccc;border-radius:4px;padding:.5rem .75rem;min-width:0}
.viewer .arm h3{margin:.2rem 0 .5rem}
.viewer pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:.4rem;margin:.2rem 0;font-size:.8rem;max-height:28rem;overflow:auto}
.viewer .event{border-left:3px solid #ccc;padding:.2rem .5rem;margin:.4rem 0}
.viewer .event-assistant_text{border-left-color:#1f5fa8}
.viewer .event-tool_result.error,.viewer .event-error{border-left-color:#b35900}
.viewer .event .label{font-weight:600;font-size:.85rem}
.viewer .activation{border:2px solid #b35900;border-left-width:6px;background:#fff6ec}
.viewer .activation-badge{display:inline-block;background:#b35900;color:#fff;font-weight:700;padding:0 .4rem;border-radius:3px;margin-left:.4rem;font-size:.8rem}
.viewer .verdict-pass{color:#1f5fa8;font-weight:700}.viewer .verdict-fail{color:#b35900;font-weight:700}
.viewer .diff .add{background:#e6f0fa}.viewer .diff .del{background:#fdebd9}.viewer .diff .hunk{color:#555}
.viewer .diff span{display:block}
.viewer .note{color:#555;font-size:.85rem}
.viewer table{width:100%;table-layout:auto}
.viewer th{overflow-wrap:break-word}.viewer td{overflow-wrap:anywhere}
.viewer td.result{white-space:nowrap;width:1%}
.viewer pre.message{margin:0;max-height:12rem}
.viewer .missing{color:#555;font-style:italic}
@media (max-width:900px){.viewer .arms{grid-template-columns:1fr}}
`;

export const VIEWER_SCRIPT = `
(function(){
  var ARMS = [["without","Without skill"],["with","With skill"]];
  var CHECK = {pass:["\\u2714","pass"], fail:["\\u2718","FAIL"], error:["\\u2718","ERROR"], skip:["\\u2013","skipped"]};
  function el(tag, attrs, children){
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function(name){
      if (name === "text") node.textContent = attrs[name];
      else node.setAttribute(name, attrs[name]);
    });
    (children || []).forEach(function(child){ if (child) node.appendChild(typeof child === "string" ? document.createTextNode(child) : child); });
    return node;
  }
  function pct(value){ return (100 * value).toFixed(1) + "%"; }
  function seconds(ms){ return (ms / 1000).toFixed(1) + " s"; }
  function diffBlock(text){
    var pre = el("pre", {"class":"diff"});
    String(text).split("\\n").forEach(function(line){
      var kind = line.indexOf("@@") === 0 ? "hunk" : line.charAt(0) === "+" ? "add" : line.charAt(0) === "-" ? "del" : "ctx";
      pre.appendChild(el("span", {"class": kind, text: line === "" ? " " : line}));
    });
    return pre;
  }
  function summary(arm){
    var passedAll = arm.total > 0 && arm.passed === arm.total;
    var verdict = el("p", {"data-testid":"arm-verdict"}, [
      el("span", {"class": passedAll ? "verdict-pass" : "verdict-fail", text: (passedAll ? "\\u2714 " : "\\u2718 ") + arm.passed + " of " + arm.total + " checks passed"}),
      " (pass ratio " + pct(arm.passRatio) + "), status " + arm.status + (arm.flags.length ? ", flags: " + flagLabels(arm).join(", ") : "")
    ]);
    var activation = arm.skillActivated === null ? "unknown (the harness cannot tell)"
      : arm.skillActivated ? "yes" + (arm.activationIndex !== undefined ? " \\u2605 at step " + (arm.activationIndex + 1) : "")
      : "no";
    var rows = [
      ["skill activated", arm.arm === "with" ? activation : "not installed (control arm)"],
      ["harness", (arm.harness || "unknown") + (arm.model ? " / " + arm.model : "")],
      ["skills shown", arm.skillsShown.length ? arm.skillsShown.join(", ") : "none listed" + (arm.skillsShownSource ? " (" + arm.skillsShownSource + ")" : "")],
      ["tokens in / cached / out", arm.usage.inputTokens + " / " + arm.usage.cachedInputTokens + " / " + arm.usage.outputTokens],
      ["cost", "$" + arm.usage.costUsd.toFixed(4)],
      ["time agent / verifier", seconds(arm.agentMs) + " / " + seconds(arm.verifierMs)],
      ["attempts", String(arm.attempts)]
    ];
    if (arm.error) rows.push(["error", arm.error]);
    if (arm.trajectoryFile) rows.push(["raw log", arm.trajectoryFile]);
    if (arm.trajectoryProblem) rows.push(["trajectory", "could not be read: " + arm.trajectoryProblem]);
    var table = el("table", {"class":"arm-summary"}, [el("tbody", null, rows.map(function(row){
      return el("tr", null, [el("th", {scope:"row", text: row[0]}), el("td", {text: row[1]})]);
    }))]);
    return [verdict, table];
  }
  function flagLabels(arm){
    return (arm.flagDetails || []).map(function(flag){ return flag.label; });
  }
  // The verifier's own record: flags with what they mean, evidence, and its whole stored output.
  function verifier(arm){
    var section = el("div", {"data-testid":"verifier"}, [el("h4", {text: "Verifier"})]);
    if ((arm.flagDetails || []).length) {
      var list = el("ul", {"data-testid":"flag-details"});
      arm.flagDetails.forEach(function(flag){
        list.appendChild(el("li", {"data-testid":"flag-detail", "data-flag": flag.id}, [el("strong", {text: flag.label}), " (" + flag.effect + "): " + flag.description]));
      });
      section.appendChild(list);
    }
    var record = arm.verifier;
    if (!record) {
      section.appendChild(el("p", {"class":"missing", text: arm.status === "timeout" ? "The verifier did not run: the agent hit its time limit." : "No verifier output stored for this run."}));
      return section;
    }
    section.appendChild(el("p", {"class":"note", "data-testid":"verifier-meta", text: "exit code " + (record.exitCode === null ? "none (killed)" : record.exitCode) + ", " + seconds(record.durationMs) + (record.source ? ", outcomes read from " + record.source : "")}));
    if (record.evidence && record.evidence.length) {
      var evidence = el("ul", {"data-testid":"verifier-evidence"});
      record.evidence.forEach(function(line){ evidence.appendChild(el("li", {text: line})); });
      section.appendChild(el("p", {"class":"label", text: "Evidence"}));
      section.appendChild(evidence);
    }
    section.appendChild(el("pre", {"data-testid":"verifier-output", text: record.output === "" ? "(no output)" : record.output}));
    return section;
  }
  function checks(arm){
    var body = el("tbody");
    arm.checks.forEach(function(check){
      var mark = CHECK[check.status] || ["?", check.status];
      body.appendChild(el("tr", {"data-testid":"check", "data-status": check.status}, [
        el("th", {scope:"row", text: check.name}),
        el("td", {"class": "result " + (check.status === "pass" ? "verdict-pass" : "verdict-fail"), text: mark[0] + " " + mark[1]})
      ]));
      // The verifier's message gets the full width: assertion output is long and multi-line.
      if (check.message) body.appendChild(el("tr", {"data-testid":"check-message", "data-status": check.status}, [
        el("td", {colspan: "2"}, [el("pre", {"class":"message", text: check.message})])
      ]));
    });
    return el("table", {"data-testid":"checks"}, [
      el("caption", {text: "Verifier checks (" + arm.passed + " of " + arm.total + " passed)"}),
      el("thead", null, [el("tr", null, [el("th", {scope:"col", text:"check"}), el("th", {scope:"col", text:"result"})])]),
      body
    ]);
  }
  function files(arm){
    var section = el("div", {"data-testid":"files"}, [el("h4", {text: "Files changed (" + arm.files.length + ")"})]);
    section.appendChild(el("p", {"class":"note", text: "Derived from the agent's file-writing tool calls; the workspace diff itself is not stored." + (arm.shellCalls ? " " + arm.shellCalls + " shell command(s) may have changed files too; those changes are not shown." : "")}));
    if (!arm.files.length) section.appendChild(el("p", {"class":"missing", text: "No file-writing tool calls."}));
    arm.files.forEach(function(file){
      var head = el("p", {"data-testid":"file"}, [el("code", {text: file.path}), " \\u2014 " + file.kind + " via " + file.tool + (file.failed ? " (the tool reported an error; the change may not have been applied)" : "") + (file.note ? "; " + file.note : "")]);
      section.appendChild(head);
      if (file.diff !== undefined) section.appendChild(diffBlock(file.diff));
    });
    return section;
  }
  function events(arm){
    var list = el("ol", {"class":"events", "data-testid":"events"});
    arm.events.forEach(function(event, index){
      var item = el("li", {"class": "event event-" + event.type + (event.isError ? " error" : "") + (event.activation ? " activation" : ""), "data-testid": "event", "data-type": event.type});
      if (event.type === "assistant_text") {
        item.appendChild(el("div", {"class":"label", text: "Agent message"}));
        item.appendChild(el("pre", {text: event.text}));
      } else if (event.type === "tool_call") {
        var label = el("div", {"class":"label"}, ["Tool call ", el("code", {text: event.name})]);
        if (event.activation) label.appendChild(el("span", {"class":"activation-badge", "data-testid":"activation", text: "\\u2605 skill activated here"}));
        item.appendChild(label);
        item.appendChild(event.patch !== undefined ? diffBlock(event.patch) : el("pre", {text: event.input}));
      } else if (event.type === "tool_result") {
        item.appendChild(el("div", {"class":"label", text: event.isError ? "\\u2718 Tool result (error)" : "Tool result"}));
        item.appendChild(el("pre", {text: event.output === "" ? "(no output)" : event.output}));
      } else {
        item.appendChild(el("div", {"class":"label", text: "\\u2718 Error"}));
        item.appendChild(el("pre", {text: event.message}));
      }
      item.setAttribute("value", String(index + 1));
      list.appendChild(item);
    });
    return el("div", null, [el("h4", {text: "Trajectory (" + arm.events.length + (arm.events.length === 1 ? " event)" : " events)")}), arm.events.length ? list : el("p", {"class":"missing", text: "No events recorded."})]);
  }
  function armColumn(pair, name, title){
    var arm = pair[name];
    var column = el("section", {"class":"arm", "data-testid":"arm-" + name, "data-arm": name}, [el("h3", {text: title})]);
    if (!arm) { column.appendChild(el("p", {"class":"missing", text: "Not run yet."})); return column; }
    summary(arm).forEach(function(node){ column.appendChild(node); });
    column.appendChild(checks(arm));
    column.appendChild(verifier(arm));
    column.appendChild(files(arm));
    column.appendChild(events(arm));
    return column;
  }
  function render(container, pair, backHref){
    while (container.firstChild) container.removeChild(container.firstChild);
    container.className = "viewer";
    container.setAttribute("data-testid", "pair-viewer");
    container.setAttribute("data-pair", pair.id);
    container.appendChild(el("p", null, [el("a", {href: backHref, "data-testid":"back", text: "\\u2190 back to the report"})]));
    container.appendChild(el("h2", {text: "Trajectories of " + pair.skill + " \\u00b7 " + pair.requirement}));
    container.appendChild(el("p", {"class":"note", text: "configuration " + pair.config + ", repeat " + pair.repeat + ". Without- and with-skill runs side by side."}));
    container.appendChild(el("div", {"class":"arms"}, ARMS.map(function(arm){ return armColumn(pair, arm[0], arm[1]); })));
  }
  function missing(container, id, backHref){
    while (container.firstChild) container.removeChild(container.firstChild);
    container.className = "viewer";
    container.appendChild(el("p", null, [el("a", {href: backHref, text: "\\u2190 back to the report"})]));
    container.appendChild(el("p", {"class":"missing", "data-testid":"pair-missing", text: "No stored runs for the pair " + id + "."}));
  }
  window.skillsmithViewer = {render: render, missing: missing};
})();
`;

/**
 * The static report's router: `#pair/<path>` shows the embedded pair in place of the report, any
 * other hash shows the report again, so the links work from a file:// URL with no server.
 */
export const STATIC_ROUTER_SCRIPT = `
(function(){
  var pairs = JSON.parse(document.getElementById("report-pairs").textContent);
  var byId = {};
  pairs.forEach(function(pair){ byId[pair.id] = pair; });
  var main = document.querySelector("main");
  var header = document.querySelector("header");
  var footer = document.querySelector("footer");
  var viewer = document.getElementById("pair-viewer");
  var lastReportScroll = 0;
  function route(){
    var hash = location.hash;
    if (hash.indexOf("#pair/") === 0) {
      if (viewer.hidden) lastReportScroll = window.scrollY;
      var id = hash.slice(6);
      var pair = byId[id];
      if (pair) window.skillsmithViewer.render(viewer, pair, "#profiles");
      else window.skillsmithViewer.missing(viewer, id, "#profiles");
      main.hidden = true; header.hidden = true; footer.hidden = true; viewer.hidden = false;
      window.scrollTo(0, 0);
    } else if (viewer.hidden === false) {
      viewer.hidden = true; main.hidden = false; header.hidden = false; footer.hidden = false;
      if (hash === "#profiles") window.scrollTo(0, lastReportScroll);
    }
  }
  window.addEventListener("hashchange", route);
  route();
})();
`;
