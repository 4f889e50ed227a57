// Pier dashboard: small enhancements on top of pages that work without script.
// Copy buttons: <button type="button" data-copy="ELEMENT_ID" hidden>Copy</button> copies the
// element's value (inputs) or text; hidden until this script runs so no dead button is shown.
(() => {
  "use strict";
  const status = document.createElement("div");
  status.setAttribute("role", "status");
  status.className = "skip";
  document.body.append(status);

  function fallbackCopy(text) {
    // Clipboard API needs a secure context (HTTPS or localhost); plain-HTTP hosts use a selection.
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  for (const button of document.querySelectorAll("button[data-copy]")) {
    const target = document.getElementById(button.dataset.copy);
    if (!target) continue;
    const label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", () => {
      const text = "value" in target ? target.value : target.textContent.trim();
      const copy = navigator.clipboard && window.isSecureContext ? navigator.clipboard.writeText(text) : fallbackCopy(text);
      copy.then(
        () => {
          button.textContent = "Copied";
          status.textContent = "Copied to the clipboard.";
        },
        () => {
          button.textContent = "Select and copy by hand";
          status.textContent = "Copying was refused by the browser.";
        },
      );
      setTimeout(() => {
        button.textContent = label;
      }, 2000);
    });
  }
})();

// Forms marked data-auto-submit are sent in the background as the page opens and replaced by
// their data-done text: a message page marks the message read this way, so the GET that shows
// it (which link scanners and prefetches make too) changes nothing. Without script, the form's
// button does the same.
(() => {
  "use strict";
  for (const form of document.querySelectorAll("form[data-auto-submit]")) {
    const body = new URLSearchParams(new FormData(form));
    fetch(form.action, { method: "POST", body, credentials: "same-origin", redirect: "manual" }).then(
      (res) => {
        if (res.type !== "opaqueredirect" && !res.ok) return;
        const done = document.createElement("p");
        done.className = "small muted";
        done.setAttribute("role", "status");
        done.textContent = form.dataset.done || "Done.";
        form.replaceWith(done);
      },
      () => {},
    );
  }
})();
