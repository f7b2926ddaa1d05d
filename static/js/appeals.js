/* The appeal pages' progressive enhancement; every page works without it.
 *
 * - Error summary (GOV.UK): focus moves to it after a failed submit (its `autofocus` does that
 *   without script too), and following one of its links focuses the field, its label in view.
 * - Conditional fields: `data-show-when="name=value"` shows a field only while that radio is
 *   chosen ("What was corrected" for a correction, "New verdict" for a reversal). Without
 *   script they show, with a hint saying when they apply.
 * - Character counter: a textarea with `data-limit` says how many characters are left.
 *
 * Loaded with `defer` from templates/moderation/_appeal_assets.html (CSP: script-src 'self').
 */
(function () {
  "use strict";

  function errorSummary() {
    var summary = document.querySelector("[data-error-summary]");
    if (!summary) return;
    if (document.activeElement !== summary) summary.focus();
    summary.addEventListener("click", function (event) {
      var link = event.target.closest("a[href^='#']");
      if (!link) return;
      var field = document.getElementById(link.getAttribute("href").slice(1));
      if (!field) return;
      event.preventDefault();
      var fieldset = field.closest("fieldset");
      var label = (fieldset && fieldset.querySelector("legend")) || document.querySelector("label[for='" + field.id + "']");
      (label || field).scrollIntoView({ block: "start" });
      field.focus({ preventScroll: true });
    });
  }

  function conditionalFields() {
    document.querySelectorAll("[data-show-when]").forEach(function (block) {
      var rule = block.getAttribute("data-show-when").split("=");
      var form = block.closest("form");
      if (!form) return;
      var radios = form.querySelectorAll("input[type='radio'][name='" + rule[0] + "']");
      if (!radios.length) return;
      function update() {
        var chosen = form.querySelector("input[type='radio'][name='" + rule[0] + "']:checked");
        block.hidden = !(chosen && chosen.value === rule[1]);
      }
      radios.forEach(function (radio) { radio.addEventListener("change", update); });
      update();
    });
  }

  function characterCounters() {
    document.querySelectorAll("textarea[data-limit]").forEach(function (area) {
      var limit = parseInt(area.getAttribute("data-limit"), 10);
      var visible = document.createElement("p");
      visible.className = "char-count small";
      visible.id = area.id + "_count";
      visible.setAttribute("aria-hidden", "true");
      // Screen readers hear the count once typing pauses, not at every key.
      var spoken = document.createElement("p");
      spoken.className = "visually-hidden";
      spoken.setAttribute("aria-live", "polite");
      area.insertAdjacentElement("afterend", spoken);
      area.insertAdjacentElement("afterend", visible);
      var timer = null;
      // Characters as the server counts them (core.reasons.written): an emoji is one, not its two UTF-16 units, and
      // a line break is one (the textarea's value has "\n"; the server counts the "\r\n" it is sent as one too).
      function count() { return Array.from(area.value.trim()).length; }
      function message() {
        var left = limit - count();
        var n = Math.abs(left).toLocaleString("en-GB");
        if (left >= 0) return "You have " + n + " character" + (left === 1 ? "" : "s") + " left";
        return "You have " + n + " character" + (left === -1 ? "" : "s") + " too many";
      }
      function update(speak) {
        var text = message();
        visible.textContent = text;
        visible.classList.toggle("over", count() > limit);
        if (!speak) return;
        clearTimeout(timer);
        timer = setTimeout(function () { spoken.textContent = text; }, 1000);
      }
      area.addEventListener("input", function () { update(true); });
      update(false);
    });
  }

  function start() {
    conditionalFields();
    characterCounters();
    errorSummary();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
