// The quiz page: htmx leaves 4xx responses unswapped; the quiz marks its clear refusals so
// they show, and anything else that fails (an expired session's CSRF check, the server gone)
// still says so.
(function () {
  "use strict";
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.xhr.getResponseHeader("X-Quiz-Problem")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
  function quizTrouble(text) {
    var box = document.getElementById("quiz-problem");
    if (box) box.textContent = text;
  }
  document.body.addEventListener("htmx:responseError", function (event) {
    if (!event.detail.xhr.getResponseHeader("X-Quiz-Problem")) {
      quizTrouble("That answer did not go through (error " + event.detail.xhr.status + "). Reload the page and answer again: nothing was counted twice.");
    }
  });
  document.body.addEventListener("htmx:sendError", function () {
    quizTrouble("The server could not be reached. Check the connection and answer again.");
  });
})();
