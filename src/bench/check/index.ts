export * from "./check.js";
export * from "./measure.js";
export * from "./render.js";
export * from "./tasks-render.js";
