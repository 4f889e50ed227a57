// Drag-and-drop upload for the Files tab: files and whole folders (webkitGetAsEntry), each
// through the API's signed direct-upload flow with the session cookie and x-pier-csrf:
// POST /api/v1/direct_uploads (MD5 + SHA-256 from @noble/hashes, hashes.js), PUT the bytes to
// the signed URL with XMLHttpRequest (progress events), then POST .../files to attach. Per-file
// progress, a retry that sends only what failed, and a summary.
// "Replace the bucket's contents" (top folder only) sends one batch through an upload session
// with delete_missing instead: declared 12 files a call, PUT, then finalize (repeated while the
// API answers finalize_pending) commits everything and deletes what the batch lacks. Before the
// first finalize nothing has changed: a failed PUT can be retried, and a refused declare, Cancel
// or leaving the page cancels the session. After it, a failure is finished, never cancelled.
(() => {
  "use strict";
  const section = document.getElementById("upload");
  const ui = section && section.querySelector("[data-upload-ui]");
  if (!ui || !window.PierHashes) return;
  section.querySelector("[data-upload-noscript]").hidden = true;
  ui.hidden = false;

  const bucket = section.dataset.bucket;
  const prefix = section.dataset.prefix || "";
  const csrf = section.dataset.csrf;
  const list = ui.querySelector("[data-upload-list]");
  const summary = ui.querySelector("#upload-summary");
  const retry = ui.querySelector("[data-upload-retry]");
  const reload = ui.querySelector("[data-upload-reload]");
  const zone = ui.querySelector("[data-dropzone]");
  const replace = ui.querySelector("[data-upload-replace]");
  const cancel = ui.querySelector("[data-upload-cancel]");
  const finish = ui.querySelector("[data-upload-finish]");
  const CONCURRENCY = 3;
  const DECLARE_BATCH = 12;
  /** The running "replace" batch: its session and jobs, finalized once every PUT succeeded. */
  let sync = null;
  const CHUNK = 4 * 1024 * 1024;
  const jobs = [];
  let running = 0;

  const b64 = (bytes) => {
    let s = "";
    for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s);
  };
  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const size = (n) => (n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`);

  async function digests(file) {
    const md5 = window.PierHashes.md5.create();
    const sha = window.PierHashes.sha256.create();
    for (let at = 0; at < file.size; at += CHUNK) {
      const part = new Uint8Array(await file.slice(at, at + CHUNK).arrayBuffer());
      md5.update(part);
      sha.update(part);
    }
    return { checksum: b64(md5.digest()), sha256: hex(sha.digest()) };
  }

  async function api(method, path, body) {
    const res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-pier-csrf": csrf },
      body: JSON.stringify(body),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) throw refusal(res.status, json.error, `HTTP ${res.status}`);
    return json.data;
  }

  /**
   * Pier's refusal as an Error. `final` when sending the same file again cannot succeed (a
   * forbidden type, a bad path, too large, not allowed): Retry is not offered for it. A lost
   * connection, a lock, a rate limit or a server error may pass next time.
   */
  function refusal(status, error, fallback) {
    const e = new Error((error && error.message) || fallback);
    e.final = (status === 403 || status === 413 || status === 422) && !(error && error.code === "CSRF_FAILED");
    return e;
  }

  function put(upload, file, onProgress) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(upload.method || "PUT", upload.url);
      for (const [name, value] of Object.entries(upload.headers || {})) xhr.setRequestHeader(name, value);
      xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
      xhr.onload = () => {
        if (xhr.status >= 200 && xhr.status < 300) return resolve();
        let error = null;
        try {
          error = JSON.parse(xhr.responseText).error;
        } catch {}
        reject(refusal(xhr.status, error, `HTTP ${xhr.status}`));
      };
      xhr.onerror = () => reject(new Error("The connection failed."));
      xhr.send(file);
    });
  }

  function row(job) {
    const li = document.createElement("li");
    const name = document.createElement("span");
    name.className = "wrap";
    name.textContent = job.path;
    const state = document.createElement("span");
    state.className = "small";
    const bar = document.createElement("progress");
    bar.max = 1;
    bar.value = 0;
    bar.setAttribute("aria-label", `Upload of ${job.path}`);
    li.append(name, state, bar);
    list.append(li);
    job.show = (text, failed) => {
      state.textContent = text;
      state.className = failed ? "small failed" : "small";
    };
    job.bar = bar;
  }

  async function send(job) {
    job.show("hashing…");
    const sums = await digests(job.file);
    job.show("uploading…");
    const blob = { filename: job.file.name, byte_size: job.file.size, checksum: sums.checksum, sha256: sums.sha256, purpose: "bucket_file" };
    if (job.file.type) blob.content_type = job.file.type;
    const d = await api("POST", "/api/v1/direct_uploads", { bucket_id: bucket, path: job.path, blob });
    if (d.upload_required) await put(d.upload, job.file, (f) => (job.bar.value = f));
    job.bar.value = 1;
    await api("POST", `/api/v1/buckets/${encodeURIComponent(bucket)}/files`, { signed_blob_id: d.signed_blob_id });
  }

  /** A failed file that sending again may help: its session is still open and Pier did not refuse it for good. */
  const retryable = (j) => j.state === "failed" && !j.abandoned && !j.final;

  function report() {
    const done = jobs.filter((j) => j.state === "done");
    const failed = jobs.filter((j) => j.state === "failed");
    const waiting = jobs.length - done.length - failed.length;
    const bytes = done.reduce((n, j) => n + j.file.size, 0);
    summary.textContent = `${done.length} uploaded (${size(bytes)}), ${failed.length} failed${waiting ? `, ${waiting} to go` : ""}.`;
    retry.hidden = waiting > 0 || !failed.some(retryable);
    reload.hidden = waiting > 0 || done.length === 0 || sync !== null;
  }

  function pump() {
    while (running < CONCURRENCY) {
      const job = jobs.find((j) => j.state === "queued");
      if (!job) break;
      job.state = "sending";
      running++;
      (job.upload ? put(job.upload, job.file, (f) => (job.bar.value = f)) : send(job))
        .then(() => {
          if (job.abandoned) return; // its replacement was cancelled meanwhile
          job.state = "done";
          job.bar.value = 1;
          job.show("uploaded");
        })
        .catch((e) => {
          if (job.abandoned) return;
          job.state = "failed";
          job.final = e.final === true;
          job.show(job.final ? `refused: ${e.message}` : `failed: ${e.message}`, true);
        })
        .finally(() => {
          running--;
          report();
          pump();
        });
    }
    report();
    if (sync && !sync.finishing && running === 0 && sync.jobs.every((j) => j.state === "done")) finishSync();
  }

  const sessionPath = () => `/api/v1/buckets/${encodeURIComponent(bucket)}/upload_sessions`;

  /** Every file of the batch declared to one delete_missing session (PUT descriptors for the bytes Pier lacks). */
  async function startSync(batch) {
    const mine = (sync = { id: null, jobs: batch, committing: false, finishing: false });
    setBusy(true);
    cancel.hidden = false;
    try {
      const id = (await api("POST", sessionPath(), { delete_missing: true, expected_file_count: batch.length })).upload_session.id;
      if (sync !== mine) {
        // Cancelled before the session existed: end it now.
        await api("POST", `${sessionPath()}/${id}/finalize`, { complete: false }).catch(() => {});
        return;
      }
      mine.id = id;
      for (let at = 0; at < batch.length; at += DECLARE_BATCH) {
        if (sync !== mine) return; // cancelled
        const part = batch.slice(at, at + DECLARE_BATCH);
        const files = [];
        for (const job of part) {
          job.show("hashing…");
          const sums = await digests(job.file);
          const f = { path: job.path, name: job.file.name, byte_size: job.file.size, checksum: sums.checksum, sha256: sums.sha256 };
          if (job.file.type) f.content_type = job.file.type;
          files.push(f);
        }
        if (sync !== mine) return;
        const declared = await api("POST", `${sessionPath()}/${mine.id}/uploads`, { files });
        if (sync !== mine) return;
        // Matched by position (the answer lists the files as sent): the server's path may be
        // spelled otherwise (Unicode normalized), and a path-keyed lookup would miss it.
        const byId = new Map(declared.uploads.map((u) => [u.id, u.upload]));
        part.forEach((job, i) => {
          job.upload = byId.get(declared.files[i].id) || null;
          if (job.upload) {
            job.state = "queued";
            job.show("waiting");
          } else {
            job.state = "done";
            job.bar.value = 1;
            job.show("already stored");
          }
        });
        pump();
      }
      pump();
    } catch (e) {
      if (sync === mine) await abandonSync(e.message);
    }
  }

  /**
   * Commit the batch: the API may answer finalize_pending for large ones; ask again until done.
   * Once a finalize was sent, part of the batch may be committed: a failure is never cancelled
   * (that would leave new and old files mixed), only finished by asking again.
   */
  async function finishSync() {
    const s = sync;
    if (!s || s.finishing) return;
    s.finishing = true;
    s.committing = true;
    cancel.hidden = true;
    finish.hidden = true;
    summary.textContent = `All ${s.jobs.length} files sent; replacing the bucket's contents…`;
    try {
      let r = await api("POST", `${sessionPath()}/${s.id}/finalize`, { complete: true });
      while (r.finalize_pending) {
        summary.textContent = `Replacing the bucket's contents: ${r.remaining_files_count} files to go…`;
        await new Promise((ok) => setTimeout(ok, 1000));
        r = await api("POST", `${sessionPath()}/${s.id}/finalize`, { complete: true });
      }
      const gone = r.upload_session.deleted_files_count;
      sync = null;
      setBusy(false);
      summary.textContent = `The bucket now holds these ${s.jobs.length} files: ${gone} other file${gone === 1 ? " was" : "s were"} deleted (they stay in the history).`;
      reload.hidden = false;
    } catch (e) {
      s.finishing = false;
      finish.hidden = false;
      summary.textContent = `Replacing stopped: ${e.message} Part of it may be in the bucket already; "Finish the replacement" carries on from there.`;
    }
  }

  /** Before any finalize: the session is cancelled (its lock released), nothing was changed, and the page says why. */
  async function abandonSync(message) {
    const s = sync;
    if (!s || s.committing) return;
    sync = null;
    setBusy(false);
    cancel.hidden = true;
    for (const j of s.jobs) {
      // Its session is gone: "Retry the failed files" must not send it again.
      j.abandoned = true;
      if (j.state !== "failed") {
        j.state = "failed";
        j.show("not sent", true);
      }
    }
    if (s.id) await api("POST", `${sessionPath()}/${s.id}/finalize`, { complete: false }).catch(() => {});
    report();
    retry.hidden = true;
    summary.textContent = `Nothing was changed: ${message}`;
  }

  function setBusy(busy) {
    for (const input of ui.querySelectorAll("input")) input.disabled = busy;
    zone.classList.toggle("busy", busy);
  }

  function add(items) {
    if (sync) {
      // The inputs are disabled meanwhile; a drop is refused out loud.
      summary.textContent = "Wait until the bucket's contents are replaced, then add more files.";
      return;
    }
    const replacing = replace && replace.checked && items.length > 0;
    if (replacing && jobs.some((j) => j.state === "queued" || j.state === "sending")) {
      // A replacement deletes what it does not hold: files still on their way would race it.
      summary.textContent = "Wait until the uploads under way are done, then replace the bucket's contents.";
      return;
    }
    if (replacing) {
      // One folder chosen or dropped: its contents become the bucket's (as pier push <dir> does).
      const top = items[0].path.split("/")[0];
      if (items.every((i) => i.path.startsWith(`${top}/`))) items = items.map((i) => ({ file: i.file, path: i.path.slice(top.length + 1) }));
    }
    const added = [];
    for (const { file, path } of items) {
      const job = { file, path: prefix + path, state: replacing ? "declaring" : "queued", upload: null, replacement: replacing };
      row(job);
      job.show("waiting");
      jobs.push(job);
      added.push(job);
    }
    if (replacing) {
      replace.checked = false; // each replacement is asked for anew
      return startSync(added);
    }
    pump();
  }

  // A dropped folder: walk it (readEntries answers in batches until it answers none).
  function walk(entry, base) {
    if (entry.isFile) return new Promise((resolve, reject) => entry.file((f) => resolve([{ file: f, path: base + f.name }]), reject));
    const reader = entry.createReader();
    const all = [];
    return new Promise((resolve, reject) => {
      const more = () =>
        reader.readEntries(async (batch) => {
          if (!batch.length) {
            const nested = await Promise.all(all.map((e) => walk(e, `${base}${entry.name}/`)));
            return resolve(nested.flat());
          }
          all.push(...batch);
          more();
        }, reject);
      more();
    });
  }

  retry.addEventListener("click", () => {
    // In a replacement only its failed PUTs are sent again (then the session is finalized);
    // earlier plain uploads that failed wait until it is over.
    for (const j of jobs) if (retryable(j) && (!sync || j.replacement)) {
      j.state = "queued";
      j.bar.value = 0;
      j.show("waiting");
    }
    pump();
  });
  cancel.addEventListener("click", () => abandonSync("the replacement was cancelled."));
  finish.addEventListener("click", () => finishSync());
  // Leaving the page before committing: the session (and the bucket's lock) ends now, not in an hour.
  window.addEventListener("pagehide", () => {
    if (!sync || !sync.id || sync.committing) return;
    fetch(`${sessionPath()}/${sync.id}/finalize`, {
      method: "POST",
      credentials: "same-origin",
      keepalive: true,
      headers: { "content-type": "application/json", "x-pier-csrf": csrf },
      body: JSON.stringify({ complete: false }),
    });
  });
  ui.querySelector("#upload-files").addEventListener("change", (e) => {
    add(Array.from(e.target.files, (f) => ({ file: f, path: f.name })));
    e.target.value = "";
  });
  ui.querySelector("#upload-folder").addEventListener("change", (e) => {
    add(Array.from(e.target.files, (f) => ({ file: f, path: f.webkitRelativePath || f.name })));
    e.target.value = "";
  });
  zone.addEventListener("dragover", (e) => {
    e.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", async (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    const items = Array.from(e.dataTransfer.items || []);
    const entries = items.map((i) => (i.kind === "file" && i.webkitGetAsEntry ? i.webkitGetAsEntry() : null));
    if (entries.length && entries.every(Boolean)) {
      const found = await Promise.all(entries.map((en) => walk(en, "")));
      add(found.flat());
    } else add(Array.from(e.dataTransfer.files, (f) => ({ file: f, path: f.name })));
  });
})();
