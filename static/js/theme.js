// The theme switch repaints at once (html[data-theme], the media of the dark stylesheets) and
// saves the choice in the background; without script the form posts and reloads the page.
(function () {
  "use strict";
  function show(theme, media) {
    document.documentElement.setAttribute("data-theme", theme);
    document.querySelectorAll("link[data-dark-theme]").forEach(function (link) {
      link.media = media;
    });
    document.querySelectorAll(".theme-switch button[name=theme]").forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.value === theme));
    });
  }
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var button = event.submitter;
    if (!form.classList.contains("theme-switch") || !button || !button.dataset.darkMedia) return;
    event.preventDefault();
    show(button.value, button.dataset.darkMedia);
    var body = new FormData(form);
    body.set("theme", button.value);
    fetch(form.action, {
      method: "POST", body: body, credentials: "same-origin", headers: { "X-Theme-Switch": "1" },
    }).catch(function () { /* kept for this page; the next page load shows the saved one */ });
  });
})();
