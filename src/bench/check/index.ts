export * from "./check.js";
export * from "./measure.js";
export * from "./render.js";
export { readCheckLabels, type StoredCheckLabel } from "./stored-labels.js";
export * from "./tasks-render.js";
