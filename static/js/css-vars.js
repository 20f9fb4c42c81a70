// The Content-Security-Policy refuses style="" attributes, so templates put per-element CSS
// (timeline positions, bar lengths) in data-css="--at: 3; width: 40%" and this applies it
// through the CSSOM, which the policy allows: on the page as served, and on every element
// htmx or a socket adds later.
(function () {
  "use strict";
  function apply(el) {
    var rules = el.getAttribute("data-css");
    if (rules === null) return;
    rules.split(";").forEach(function (rule) {
      var colon = rule.indexOf(":");
      if (colon > 0) el.style.setProperty(rule.slice(0, colon).trim(), rule.slice(colon + 1).trim());
    });
  }
  function applyWithin(node) {
    if (node.nodeType !== 1) return;
    apply(node);
    node.querySelectorAll("[data-css]").forEach(apply);
  }
  new MutationObserver(function (changes) {
    changes.forEach(function (change) {
      if (change.type === "attributes") apply(change.target);
      else change.addedNodes.forEach(applyWithin);
    });
  }).observe(document.documentElement, {
    childList: true, subtree: true, attributes: true, attributeFilter: ["data-css"],
  });
  applyWithin(document.documentElement);
})();
