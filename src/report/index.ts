export * from "./html.js";
export * from "./libraries.js";
