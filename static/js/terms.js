// Glossary marks (lessons/term_marks.py): each is a button that opens its definition as a
// popover with no script at all. This only places an open popover just under its button
// when the window is wide enough; on a phone it stays a card at the bottom of the screen.
(function () {
  "use strict";

  function place(popover) {
    const button = document.querySelector('[popovertarget="' + popover.id + '"]');
    if (!button || window.innerWidth < 640) {
      popover.classList.remove("is-placed");
      return;
    }
    const box = button.getBoundingClientRect();
    const width = popover.offsetWidth;
    const left = Math.max(8, Math.min(box.left, window.innerWidth - width - 8));
    let top = box.bottom + 6;
    if (top + popover.offsetHeight > window.innerHeight - 8) {
      top = Math.max(8, box.top - popover.offsetHeight - 6);
    }
    popover.classList.add("is-placed");
    popover.style.left = left + "px";
    popover.style.top = top + "px";
  }

  document.addEventListener(
    "toggle",
    function (event) {
      const popover = event.target;
      if (popover.classList && popover.classList.contains("term-popover") && event.newState === "open") {
        place(popover);
      }
    },
    true
  );
})();
