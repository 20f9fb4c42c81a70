// The console's buttons sit inside the parts their own action redraws (the reveal button in
// the claim it reveals), and the room's socket often brings that redraw before the button's
// HTTP answer. htmx then looks for the answer's out-of-band parts under the detached form,
// finds no target and logs htmx:oobErrorNoTarget (issue 28's walk), and the answer (a
// refusal's message too) is lost. So a swap-less request of the console is answered through
// the page's body, and once its form has left the page, swapped against the whole document.
document.addEventListener("htmx:beforeRequest", function (event) {
  var elt = event.target;
  if (!elt.closest || !elt.closest(".room.presenter")) return;
  if ((elt.getAttribute("hx-swap") || "").trim() !== "none") return;
  event.detail.target = document.body; // beforeSwap is fired on the target: it must stay in the page
});

document.addEventListener("htmx:beforeSwap", function (event) {
  var config = event.detail.requestConfig;
  var elt = config && config.elt;
  if (!elt || elt.isConnected || !event.detail.shouldSwap || !window.htmx) return;
  event.detail.shouldSwap = false;
  htmx.swap(document.body, event.detail.serverResponse, { swapStyle: "none" });
});
