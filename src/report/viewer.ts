/**
 * The trajectory viewer's style, shared by the static HTML report and the dashboard. Its code is
 * the browser module `browser/viewer.ts` (inlined through `browser-code.ts`).
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
