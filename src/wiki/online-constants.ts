/**
 * The constants `wiki search --help` shows for online acquisition. They live apart from
 * `online.ts` and `resources/search.ts` so that registering the `wiki` commands does not load
 * the acquisition pipeline (the builder, the sandboxes, the browser), which only `--online` uses.
 */

/** Most skills an online pool may hold. */
export const ONLINE_POOL_BUDGET_LIMIT = 100;
export const GITHUB_API_URL = "https://api.github.com";
/** The variables GitHub Actions sets for its own API; read here as the defaults. */
export const GITHUB_TOKEN_VARIABLE = "GITHUB_TOKEN";
export const GITHUB_API_URL_VARIABLE = "GITHUB_API_URL";
