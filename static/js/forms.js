/* Every page: a form on its way to the server is not sent again by a second click or Enter. A double-click on
 * "Claim next" claimed two posts (the best one then held out of the queue, unseen), and a double-clicked save or
 * decision answered "not saved" to the first click's saved work. The form's buttons say so (aria-disabled) until
 * the next page arrives; a page brought back by the browser's Back button may be sent again, as a person means
 * it then.
 *
 * Forms that a page's own script sends in the background cancel the submit event (static/js/claim.js): they are
 * left to it. Nothing is disabled for real while the form is being sent: a disabled button's name and value (the
 * decision chosen, "save and claim next") would be left out of what is sent. A sending that the person stopped
 * (Esc, the browser's Stop) leaves the page as it was: after SENDING_MS the form may be sent again.
 *
 * CSP: script-src 'self'; loaded with `defer` from base.html.
 */
(function () {
  "use strict";

  var SENDING_MS = 8000; // longer than any answer but a stalled one; a second click after it is meant

  function buttons(form) {
    return form.querySelectorAll("button, input[type='submit']");
  }

  function ready(form) {
    form.removeAttribute("data-sending");
    buttons(form).forEach(function (button) { button.removeAttribute("aria-disabled"); });
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (event.defaultPrevented || !(form instanceof HTMLFormElement)) return;
    if ((form.getAttribute("method") || "get").toLowerCase() !== "post") return;
    if (form.hasAttribute("data-sending")) {
      event.preventDefault();
      return;
    }
    form.setAttribute("data-sending", "");
    buttons(form).forEach(function (button) { button.setAttribute("aria-disabled", "true"); });
    setTimeout(function () { ready(form); }, SENDING_MS);
  });

  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) return; // a page from the Back-Forward cache keeps the attributes it had when left
    document.querySelectorAll("form[data-sending]").forEach(ready);
  });
})();
