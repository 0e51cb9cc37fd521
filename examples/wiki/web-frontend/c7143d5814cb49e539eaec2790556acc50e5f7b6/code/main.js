// Prints the CSS of a navigation bar whose links wrap onto new rows on narrow screens.
const rules = [
  "nav ul { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; list-style: none; padding: 0; }",
  "nav li:last-child { margin-left: auto; }",
];
process.stdout.write(`${rules.join("\n")}\n`);
