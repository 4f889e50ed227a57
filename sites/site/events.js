// Pier client events (https://<your-pier>/docs, docs/analytics.md): counts clicks on links to
// other sites and downloads of files hosted elsewhere. No cookies, no storage, no identifiers:
// each event is one anonymous beacon to this site's own /_pier/event. Downloads of files on
// this site are counted by the server itself, so they are not reported twice.
(function () {
  "use strict";
  var endpoint = "/_pier/event";
  var downloads = /\.(pdf|zip|gz|tgz|tar|bz2|xz|7z|rar|dmg|exe|msi|deb|rpm|apk|iso|img|epub|mobi|csv|tsv|xls|xlsx|doc|docx|ppt|pptx|odt|ods|odp|rtf|mp3|wav|flac|ogg|m4a|mp4|mov|avi|mkv|webm|wasm|bin|jar|whl)$/i;

  function send(type) {
    var body = JSON.stringify({ type: type });
    try {
      if (navigator.sendBeacon && navigator.sendBeacon(endpoint, new Blob([body], { type: "text/plain" }))) return;
      fetch(endpoint, { method: "POST", body: body, keepalive: true, headers: { "content-type": "text/plain" } }).catch(function () {});
    } catch (e) {
      // counting must never break the page
    }
  }

  function onClick(event) {
    var link = event.target && event.target.closest ? event.target.closest("a[href]") : null;
    if (!link) return;
    var url;
    try {
      url = new URL(link.href, location.href);
    } catch (e) {
      return;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return;
    var external = url.host !== location.host;
    var isDownload = link.hasAttribute("download") || downloads.test(url.pathname);
    if (isDownload && !(external === false && downloads.test(url.pathname))) send("download");
    else if (external) send("click");
  }

  document.addEventListener("click", onClick, true);
  document.addEventListener("auxclick", function (event) {
    if (event.button === 1) onClick(event);
  }, true);
})();
