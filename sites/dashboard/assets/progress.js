// Pier dashboard: follow a background bucket delete. The page shows the progress as it was
// when rendered (and a reload link); this script reads the bucket over the REST API every
// 2 seconds and updates the count until the bucket is gone, then says so.
(() => {
  "use strict";
  const box = document.getElementById("delete-progress");
  if (!box) return;
  const text = box.querySelector("[data-progress-text]");
  const bar = box.querySelector("progress");
  const reload = box.querySelector("[data-progress-reload]");
  const url = `/api/v1/buckets/${encodeURIComponent(box.dataset.bucket)}`;
  if (reload) reload.hidden = true;

  function done() {
    box.className = "alert ok";
    box.textContent = "";
    const p = document.createElement("p");
    p.textContent = "The bucket was deleted. ";
    const back = document.createElement("a");
    back.href = "/dashboard/buckets";
    back.textContent = "Back to your buckets";
    p.append(back);
    box.append(p);
  }

  async function poll() {
    try {
      const res = await fetch(url, { headers: { accept: "application/json", "x-pier-csrf": box.dataset.csrf }, credentials: "same-origin" });
      if (res.status === 404) return done();
      if (res.ok) {
        const lock = (await res.json()).data.bucket.lock;
        if (!lock || lock.kind !== "bucket_delete") {
          // The delete stopped (it failed and the bucket was unlocked): the page must be read again.
          text.textContent = "the delete stopped; reload the page to see the bucket as it is now";
          if (reload) reload.hidden = false;
          return;
        }
        text.textContent = `${lock.deleted_items} of ${lock.total_items} items removed`;
        bar.max = lock.total_items;
        bar.value = lock.deleted_items;
      }
    } catch {
      // A dropped request is tried again at the next tick.
    }
    setTimeout(poll, 2000);
  }
  setTimeout(poll, 2000);
})();
