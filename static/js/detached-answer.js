// The console's buttons sit inside the parts their own action redraws (the reveal button in
// the claim it reveals), and the room's socket often brings that redraw before the button's
// HTTP answer. htmx then looks for the answer's out-of-band parts under the detached form,
// finds no target and logs htmx:oobErrorNoTarget (issue 28's walk). The socket's redraw is
// the newer one (a shared run's receipts may already be in it), so of such a late answer only
// its message (#ws-error: a refusal, or clearing the last one) is put on the page.
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
  var answer = document.createElement("template");
  answer.innerHTML = event.detail.serverResponse;
  var message = answer.content.querySelector("#ws-error");
  if (message) htmx.swap(document.body, message.outerHTML, { swapStyle: "none" });
});
