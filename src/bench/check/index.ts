export * from "./check.js";
