// Drag-and-drop upload for the Files tab: files and whole folders (webkitGetAsEntry), each
// through the API's signed direct-upload flow with the session cookie and x-pier-csrf:
// POST /api/v1/direct_uploads (MD5 + SHA-256 from @noble/hashes, hashes.js), PUT the bytes to
// the signed URL with XMLHttpRequest (progress events), then POST .../files to attach. Per-file
// progress, a retry that sends only what failed, and a summary.
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
  const CONCURRENCY = 3;
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
    if (!res.ok) throw new Error((json.error && json.error.message) || `HTTP ${res.status}`);
    return json.data;
  }

  function put(upload, file, onProgress) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(upload.method || "PUT", upload.url);
      for (const [name, value] of Object.entries(upload.headers || {})) xhr.setRequestHeader(name, value);
      xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
      xhr.onload = () => {
        if (xhr.status >= 200 && xhr.status < 300) return resolve();
        let message = `HTTP ${xhr.status}`;
        try {
          message = JSON.parse(xhr.responseText).error.message || message;
        } catch {}
        reject(new Error(message));
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

  function report() {
    const done = jobs.filter((j) => j.state === "done");
    const failed = jobs.filter((j) => j.state === "failed");
    const waiting = jobs.length - done.length - failed.length;
    const bytes = done.reduce((n, j) => n + j.file.size, 0);
    summary.textContent = `${done.length} uploaded (${size(bytes)}), ${failed.length} failed${waiting ? `, ${waiting} to go` : ""}.`;
    retry.hidden = waiting > 0 || failed.length === 0;
    reload.hidden = waiting > 0 || done.length === 0;
  }

  function pump() {
    while (running < CONCURRENCY) {
      const job = jobs.find((j) => j.state === "queued");
      if (!job) break;
      job.state = "sending";
      running++;
      send(job)
        .then(() => {
          job.state = "done";
          job.show("uploaded");
        })
        .catch((e) => {
          job.state = "failed";
          job.show(`failed: ${e.message}`, true);
        })
        .finally(() => {
          running--;
          report();
          pump();
        });
    }
    report();
  }

  function add(items) {
    for (const { file, path } of items) {
      const job = { file, path: prefix + path, state: "queued" };
      row(job);
      job.show("waiting");
      jobs.push(job);
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
    for (const j of jobs) if (j.state === "failed") {
      j.state = "queued";
      j.bar.value = 0;
      j.show("waiting");
    }
    pump();
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
