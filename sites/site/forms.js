// Pier's built-in forms, enhanced: sent in place with fetch instead of leaving the page, with the
// proof-of-work solution of the altcha widget (/_pier/altcha.js) and, when the visitor marks one,
// a rectangle on an image or on the page. Without this script the same forms post normally.
// Visitor text is only ever set as textContent.
(function () {
  "use strict";
  var MARK_COLOR = "#e11d48";

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

  // The widget's latest solution, per form (its verified event carries it).
  var solutions = new WeakMap();
  function watchWidgets() {
    document.querySelectorAll("form.pier-form altcha-widget").forEach(function (w) {
      if (w.dataset.pierWatched) return;
      w.dataset.pierWatched = "1";
      w.addEventListener("verified", function (e) {
        if (e.detail && e.detail.payload) solutions.set(w, e.detail.payload);
      });
    });
  }

  function solution(form) {
    var w = form.querySelector("altcha-widget");
    if (!w || typeof w.getState !== "function") return Promise.resolve(null);
    if (w.getState() === "verified" && solutions.get(w)) return Promise.resolve(solutions.get(w));
    return w.verify().then(function (r) {
      return r && r.payload ? r.payload : null;
    });
  }

  function resetWidget(form) {
    var w = form.querySelector("altcha-widget");
    if (w && typeof w.reset === "function") {
      solutions.delete(w);
      w.reset();
    }
    if (window.turnstile && form.querySelector(".cf-turnstile")) {
      try {
        window.turnstile.reset(form.querySelector(".cf-turnstile"));
      } catch (_) {
        /* the Turnstile widget was not rendered */
      }
    }
  }

  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!(form instanceof HTMLFormElement) || !form.classList.contains("pier-form") || !window.fetch) return;
    e.preventDefault();
    var data = new URLSearchParams();
    new FormData(form).forEach(function (v, k) {
      if (typeof v === "string" && k !== "_pier_return" && k !== "altcha") data.append(k, v);
    });
    data.set("_pier_path", location.pathname);
    var button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    solution(form)
      .then(function (payload) {
        if (payload) data.set("altcha", payload);
        return fetch(form.action, { method: "POST", body: data, headers: { accept: "application/json" }, credentials: "same-origin" });
      })
      .then(function (r) {
        return r.json().then(function (body) {
          return { ok: r.ok, body: body };
        });
      })
      .then(function (res) {
        var code = res.body && res.body.error && res.body.error.code;
        // A solution is good once: after a stored post or a refused one, solve a fresh challenge.
        if (res.ok || code === "FORM_CHALLENGE_FAILED") resetWidget(form);
        if (res.ok) {
          form.reset();
          clearMark(form);
          message(form, "Thank you. Your message was sent.", true);
          if (form.getAttribute("data-pier-form") === "comments") showComments(form);
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

  // Marking a rectangle: on an image (image_pixel, in the image's own pixels) or on the page
  // (document_ratio, fractions of the whole document).
  function clearMark(form) {
    var input = form.querySelector("input[name=_pier_selection]");
    if (input) input.value = "";
    var note = form.querySelector(".pier-mark-note");
    if (note) note.textContent = "";
  }

  function imageAt(x, y) {
    var all = document.elementsFromPoint(x, y);
    for (var i = 0; i < all.length; i++) {
      var el = all[i];
      if (el.classList && (el.classList.contains("pier-mark-layer") || el.classList.contains("pier-mark-rect"))) continue;
      return el instanceof HTMLImageElement && el.naturalWidth > 0 ? el : null;
    }
    return null;
  }

  function selectionFor(x1, y1, x2, y2) {
    var img = imageAt((x1 + x2) / 2, (y1 + y2) / 2);
    if (img) {
      var r = img.getBoundingClientRect();
      var sx = img.naturalWidth / r.width;
      var sy = img.naturalHeight / r.height;
      var clampX = function (v) {
        return Math.round(Math.min(img.naturalWidth, Math.max(0, (v - r.left) * sx)));
      };
      var clampY = function (v) {
        return Math.round(Math.min(img.naturalHeight, Math.max(0, (v - r.top) * sy)));
      };
      return {
        what: "on the image",
        value: {
          type: "rect",
          coordinates: [clampX(x1), clampY(y1), clampX(x2), clampY(y2)],
          coordinate_space: { width: img.naturalWidth, height: img.naturalHeight, unit: "image_pixel" },
          color: MARK_COLOR,
        },
      };
    }
    var root = document.documentElement;
    var w = Math.max(root.scrollWidth, root.clientWidth);
    var h = Math.max(root.scrollHeight, root.clientHeight);
    var ratio = function (v, total) {
      return Math.round(Math.min(1, Math.max(0, v / total)) * 10000) / 10000;
    };
    return {
      what: "on the page",
      value: {
        type: "rect",
        coordinates: [ratio(x1 + scrollX, w), ratio(y1 + scrollY, h), ratio(x2 + scrollX, w), ratio(y2 + scrollY, h)],
        coordinate_space: { width: 1, height: 1, unit: "document_ratio" },
        color: MARK_COLOR,
      },
    };
  }

  function startMarking(form) {
    var panel = form.closest(".pier-float");
    if (panel) panel.style.visibility = "hidden";
    var layer = document.createElement("div");
    layer.className = "pier-mark-layer";
    layer.setAttribute("aria-label", "Drag to mark an area, Escape to cancel");
    layer.tabIndex = -1;
    var rect = document.createElement("div");
    rect.className = "pier-mark-rect";
    rect.hidden = true;
    document.body.appendChild(layer);
    document.body.appendChild(rect);
    layer.focus();
    var start = null;
    function done() {
      layer.remove();
      rect.remove();
      document.removeEventListener("keydown", onKey, true);
      if (panel) panel.style.visibility = "";
      var button = form.querySelector(".pier-mark-start");
      if (button) button.focus();
    }
    function onKey(ev) {
      if (ev.key === "Escape") done();
    }
    document.addEventListener("keydown", onKey, true);
    layer.addEventListener("pointerdown", function (ev) {
      ev.preventDefault();
      start = { x: ev.clientX, y: ev.clientY };
      layer.setPointerCapture(ev.pointerId);
    });
    layer.addEventListener("pointermove", function (ev) {
      if (!start) return;
      rect.hidden = false;
      rect.style.left = Math.min(start.x, ev.clientX) + "px";
      rect.style.top = Math.min(start.y, ev.clientY) + "px";
      rect.style.width = Math.abs(ev.clientX - start.x) + "px";
      rect.style.height = Math.abs(ev.clientY - start.y) + "px";
    });
    layer.addEventListener("pointerup", function (ev) {
      if (!start) return;
      var x1 = Math.min(start.x, ev.clientX);
      var y1 = Math.min(start.y, ev.clientY);
      var x2 = Math.max(start.x, ev.clientX);
      var y2 = Math.max(start.y, ev.clientY);
      start = null;
      if (x2 - x1 < 4 || y2 - y1 < 4) return; // a click, not a rectangle: keep marking
      layer.style.pointerEvents = "none";
      rect.hidden = true;
      var sel = selectionFor(x1, y1, x2, y2);
      var c = sel.value.coordinates;
      if (!(c[0] < c[2] && c[1] < c[3])) {
        done();
        return;
      }
      form.querySelector("input[name=_pier_selection]").value = JSON.stringify(sel.value);
      form.querySelector(".pier-mark-note").textContent = "Area marked " + sel.what + ".";
      done();
    });
  }

  // The comments form shows what the site's visitors wrote and the owner's public replies
  // (GET /_pier/form/comments answers only visitors who passed the site's gate).
  function showComments(form) {
    if (!window.fetch) return;
    fetch("/_pier/form/comments", { headers: { accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) {
        return r.ok ? r.json() : null;
      })
      .then(function (body) {
        if (!body || !body.data) return;
        var box = form.querySelector(".pier-comments");
        if (!box) {
          box = document.createElement("section");
          box.className = "pier-comments";
          box.setAttribute("aria-label", "Comments");
          form.insertBefore(box, form.querySelector("h2").nextSibling);
        }
        box.textContent = "";
        if (body.data.comments.length === 0) {
          var none = document.createElement("p");
          none.textContent = "No comments yet.";
          box.appendChild(none);
        }
        body.data.comments.forEach(function (c) {
          var item = document.createElement("article");
          item.className = "pier-comment";
          var who = document.createElement("p");
          who.className = "pier-comment-by";
          who.textContent = (c.name || "A visitor") + " · " + c.created_at.slice(0, 10);
          var text = document.createElement("p");
          text.className = "pier-comment-text";
          text.textContent = c.message;
          item.appendChild(who);
          item.appendChild(text);
          c.replies.forEach(function (r) {
            var reply = document.createElement("p");
            reply.className = "pier-comment-reply";
            reply.textContent = "Reply from the site: " + r.message;
            item.appendChild(reply);
          });
          box.appendChild(item);
        });
      })
      .catch(function () {
        /* the comments stay hidden; the form still works */
      });
  }

  function enhance() {
    watchWidgets();
    document.querySelectorAll('form.pier-form[data-pier-form="comments"]').forEach(showComments);
    document.querySelectorAll("form.pier-form .pier-mark").forEach(function (p) {
      p.hidden = false;
    });
  }

  document.addEventListener("click", function (e) {
    var button = e.target instanceof Element ? e.target.closest(".pier-mark-start") : null;
    if (!button) return;
    var form = button.closest("form.pier-form");
    if (form) startMarking(form);
  });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", enhance);
  else enhance();
})();
