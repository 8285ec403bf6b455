// Refreshes the parts of a page marked data-live (a batch's progress bar and
// counts) every two seconds while data-live-active is "true", by fetching the
// same page and swapping those elements. Without JavaScript the page shows
// the same figures on reload.
(function () {
  "use strict";
  var root = document.querySelector("[data-live-active]");
  if (!root || root.getAttribute("data-live-active") !== "true") { return; }
  function tick() {
    fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live]").forEach(function (el) {
          var fresh = doc.getElementById(el.id);
          if (fresh) { el.replaceWith(fresh); }
        });
        var next = doc.querySelector("[data-live-active]");
        if (next && next.getAttribute("data-live-active") === "true") { setTimeout(tick, 2000); }
        else { window.location.reload(); }
      })
      .catch(function () { setTimeout(tick, 5000); });
  }
  setTimeout(tick, 2000);
})();
