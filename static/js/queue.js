/* The review queue's rows by keyboard (templates/factcheck/queue.html).
 *
 * The keys are declared in the markup for static/js/shortcuts.js, which presses them and lists them
 * with "?": J and K press the "next" and "previous" buttons, C the "claim" one; this script moves the
 * focus down and up the rows and claims the row in focus. Enter on a row in focus opens its post.
 * Without JavaScript the rows are what they were: a link to each post and a Claim button.
 * CSP: script-src 'self', so this file is included with `defer`.
 */
(function () {
  "use strict";

  function start() {
    var rows = Array.prototype.slice.call(document.querySelectorAll("tr.queue-row"));
    var current = -1;

    rows.forEach(function (row, index) {
      row.tabIndex = -1; // focusable by script, not one more Tab stop per row
      // Any focus inside a row (its link, its Claim button) makes it the current one.
      row.addEventListener("focusin", function () { current = index; });
      row.addEventListener("keydown", function (event) {
        if (event.target !== row || event.key !== "Enter" || event.ctrlKey || event.metaKey || event.altKey) return;
        event.preventDefault();
        row.querySelector("a.post-text").click();
      });
    });

    function focusRow(index) {
      var row = rows[index];
      row.focus({ preventScroll: true });
      row.scrollIntoView({ block: "nearest" });
    }

    function move(step) {
      if (!rows.length) return;
      var index = current < 0 ? 0 : Math.min(rows.length - 1, Math.max(0, current + step));
      focusRow(index);
    }

    function claim() {
      if (current < 0) {
        move(0); // nothing chosen yet: show which post C would claim
        return;
      }
      rows[current].querySelector("[data-claim]").click();
    }

    var actions = { next: function () { move(1); }, previous: function () { move(-1); }, claim: claim };
    document.querySelectorAll("[data-queue-key]").forEach(function (button) {
      button.addEventListener("click", actions[button.getAttribute("data-queue-key")]);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
