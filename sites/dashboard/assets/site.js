// Site tab: while a build (or an unpublish) runs, poll the REST publication read every 2 s and
// say the state in the live region; once it settles, load the page again so every section
// shows the new state. Without script the page has a Reload link instead.
(() => {
  "use strict";
  for (const region of document.querySelectorAll("[data-build-status]")) {
    if (region.dataset.pending !== "true") continue;
    const url = `/api/v1/publications/${encodeURIComponent(region.dataset.publication)}?include_manifest=false`;
    const tick = async () => {
      try {
        const res = await fetch(url, { credentials: "same-origin", headers: { accept: "application/json", "x-pier-csrf": region.dataset.csrf } });
        if (res.ok) {
          const p = (await res.json()).data.publication;
          if (!p.publish_pending && p.status !== "unpublishing") {
            region.textContent = p.publish_state === "failed" ? "The build failed. Loading the details…" : "Done. Loading the new state…";
            window.location.replace(window.location.pathname);
            return;
          }
          region.textContent = `Building (${p.publish_state})…`;
        }
      } catch {
        // A dropped poll is retried on the next tick.
      }
      setTimeout(tick, 2000);
    };
    setTimeout(tick, 2000);
  }
})();
