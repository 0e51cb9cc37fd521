/** The dashboard's waiting page: reloads as soon as the run has stored its first result. */
let version: string | null = null;

setInterval(() => {
  fetch("/api/state", { cache: "no-store", credentials: "same-origin" })
    .then((response) => response.json() as Promise<{ version: string; scored: number }>)
    .then((state) => {
      if (version === null) version = state.version;
      else if (state.version !== version && state.scored > 0) location.reload();
    })
    // A missed poll is retried by the next one a second later.
    .catch(() => undefined);
}, 1000);
