// Pier's built-in forms, enhanced: sent in place with fetch instead of leaving the page. Without
// this script the same forms post normally. Visitor text is only ever set as textContent.
(function () {
  "use strict";
  function message(form, text, ok) {
    var box = form.querySelector(".pier-form-status");
    if (!box) {
      box = document.createElement("p");
      box.className = "pier-form-status";
      box.setAttribute("role", "status");
      form.appendChild(box);
    }
    box.textContent = text;
    box.style.color = ok ? "" : "#b42318";
  }
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!(form instanceof HTMLFormElement) || !form.classList.contains("pier-form") || !window.fetch) return;
    e.preventDefault();
    var data = new URLSearchParams();
    new FormData(form).forEach(function (v, k) {
      if (typeof v === "string" && k !== "_pier_return") data.append(k, v);
    });
    data.set("_pier_path", location.pathname);
    var button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    fetch(form.action, { method: "POST", body: data, headers: { accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) {
        return r.json().then(function (body) {
          return { ok: r.ok, body: body };
        });
      })
      .then(function (res) {
        if (res.ok) {
          form.reset();
          message(form, "Thank you. Your message was sent.", true);
        } else {
          message(form, (res.body && res.body.error && res.body.error.message) || "Your message was not sent.", false);
        }
      })
      .catch(function () {
        message(form, "Your message was not sent (network error). Please try again.", false);
      })
      .then(function () {
        if (button) button.disabled = false;
      });
  });
})();
