export * from "./evaluate.js";
export * from "./html.js";
export * from "./libraries.js";
export * from "./pairs.js";
export * from "./server.js";
