/* The fact-checker's post page (templates/factcheck/post.html); the page works without it.
 *
 * - Countdown: `[data-claim-countdown]` (data-seconds-left: the server's seconds left when it rendered the
 *   page, data-warning-minutes) shows the time left each second, counted on the page's own monotonic clock
 *   (performance.now) from when it loaded, so a browser whose clock is wrong still warns on time; under the warning minutes, `[data-claim-warning]` (a live region) says so once, and
 *   again when the claim has run out. Without script the page shows the end time.
 * - One-click extension: the `[data-claim-extend]` form is posted in the background (JSON from the extend
 *   view); the countdown starts again from the new end. Without script the form posts and reloads.
 * - Once the claim has run out, Extend and Release give way to `[data-claim-again]` (the claim view, posted
 *   the same way): nobody else holding the post, the countdown starts again without a reload.
 * - Draft: what is typed into the rating form (`[data-draft-url]`) is saved to the server a moment after
 *   typing stops (and when the page is left), so nothing is lost to a lapsed claim or a reload. Signing out
 *   (`form[data-sign-out]`, the header's) waits for that save first: the session it is saved under ends with
 *   the sign-out, and the page-leaving save arrived after it.
 *
 * CSP: script-src 'self'; loaded with `defer` from the post page's head.
 */
(function () {
  "use strict";

  // "replaces": the rating the form saw as current; the server refuses a draft from a form that is out of date.
  var DRAFT_FIELDS = ["verdict", "rationale", "sources", "article_url", "change_reason", "replaces"];
  var DRAFT_DELAY = 800; // ms after the last key
  var SIGN_OUT_WAIT = 3000; // ms: a sign-out waits no longer than this for the draft's save

  function csrfToken(form) {
    var input = form.querySelector("input[name='csrfmiddlewaretoken']");
    return input ? input.value : "";
  }

  function post(url, form, body, keepalive) {
    return fetch(url, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      keepalive: Boolean(keepalive),
      headers: { "X-CSRFToken": csrfToken(form), "Accept": "application/json" },
    });
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  function left(ms) {
    var minutes = Math.floor(ms / 60000);
    if (minutes >= 60) {
      var hours = Math.floor(minutes / 60);
      return plural(hours, "hour") + (minutes % 60 ? ", " + plural(minutes % 60, "minute") : "");
    }
    if (minutes >= 1) return plural(minutes, "minute");
    return plural(Math.max(0, Math.ceil(ms / 1000)), "second");
  }

  function countdown() {
    var box = document.querySelector("[data-claim-countdown]");
    if (!box) return null;
    var leftEl = box.querySelector("[data-claim-left]");
    var holding = box.querySelector("[data-claim-holding]");
    var ranOut = box.querySelector("[data-claim-ran-out]");
    var endsEl = holding ? holding.querySelector("strong") : null;
    var warning = document.querySelector("[data-claim-warning]");
    var warnMs = parseInt(box.getAttribute("data-warning-minutes") || "5", 10) * 60000;
    var held = document.querySelectorAll("form[data-claim-extend], form[data-claim-release]");
    var again = document.querySelector("form[data-claim-again]");
    // Never the browser's wall clock (Date.now): it may be minutes or hours off the server's.
    var secondsLeft = parseInt(box.getAttribute("data-seconds-left") || "0", 10);
    var state = { expires: performance.now() + secondsLeft * 1000, warned: false, ended: false };
    // Warned already by the server (under the warning time at load): not said twice.
    state.warned = Boolean(warning && warning.textContent.trim());

    function say(text, kind) {
      if (!warning) return;
      warning.replaceChildren();
      if (!text) return;
      var p = document.createElement("p");
      p.className = kind === "ok" ? "message success" : "notice";
      p.textContent = text;
      warning.append(p);
    }

    function runOut(ended) {
      state.ended = ended;
      box.classList.toggle("claim-ended", ended);
      if (holding && ranOut) {
        holding.hidden = ended;
        ranOut.hidden = !ended;
        if (ended && endsEl) ranOut.querySelector("strong").textContent = endsEl.textContent;
      }
      held.forEach(function (form) { form.hidden = ended; });
      if (again) again.hidden = !ended;
    }

    function tick() {
      var ms = state.expires - performance.now();
      if (ms <= 0) {
        if (leftEl) leftEl.textContent = "no time";
        if (!state.ended) {
          runOut(true);
          say("Your claim has run out. What you typed is kept as your draft: claim the post again to go on (saving " +
              "claims it again too), if nobody else has taken it.");
        }
        return;
      }
      if (leftEl) leftEl.textContent = left(ms);
      if (ms <= warnMs && !state.warned) {
        state.warned = true;
        say("Your claim runs out in " + left(ms) + ": extend it to keep working.");
      }
    }

    tick();
    setInterval(tick, 1000);
    return {
      renewed: function (seconds, ends, message) {
        state.expires = performance.now() + seconds * 1000;
        state.warned = false;
        runOut(false);
        if (endsEl && ends) endsEl.textContent = ends;
        say(message, "ok");
        tick();
      },
      say: say,
    };
  }

  // The lease's forms posted in the background: each answers JSON with `ok` (extended or claimed) true and the
  // new lease, or false and why (another reviewer holds the post, the claim runs as far ahead as it may).
  var LEASE_FORMS = [
    { selector: "form[data-claim-extend]", ok: "extended", failed: "The claim could not be extended." },
    { selector: "form[data-claim-again]", ok: "claimed", failed: "The post could not be claimed again." },
  ];

  function leases(clock) {
    if (!clock) return;
    LEASE_FORMS.forEach(function (kind) {
      var form = document.querySelector(kind.selector);
      if (!form) return;
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        var button = form.querySelector("button");
        if (button) button.disabled = true;
        post(form.action, form, new FormData(form))
          .then(function (response) { return response.json(); })
          .then(function (data) {
            if (data[kind.ok]) clock.renewed(data.seconds_left, data.ends, data.message);
            else clock.say(data.message || kind.failed);
          })
          .catch(function () { form.submit(); }) // the page's own way, without script
          .finally(function () { if (button) button.disabled = false; });
      });
    });
  }

  function drafts() {
    var form = document.querySelector("form[data-draft-url]");
    if (!form) return;
    var url = form.getAttribute("data-draft-url");
    var status = form.querySelector("[data-draft-status]");
    var timer = null;
    var dirty = false;

    function body() {
      var data = new FormData();
      DRAFT_FIELDS.forEach(function (name) {
        var field = form.elements[name];
        if (!field) return;
        var value = field.value; // a RadioNodeList's value is the checked radio's
        data.append(name, value == null ? "" : value);
      });
      return data;
    }

    // One save at a time: a later one waits for the earlier one's answer, so the server never writes an
    // older text after a newer one (a save can wait behind the post's row lock).
    var saving = false;
    var lastSave = Promise.resolve(); // the newest save's answer (or its failure)

    function size(data) {
      var total = 0;
      data.forEach(function (value) { total += String(value).length; });
      return total;
    }

    function save(leaving) {
      clearTimeout(timer);
      timer = null;
      if (!dirty || (saving && !leaving)) return lastSave;
      dirty = false;
      saving = true;
      var data = body();
      // A keepalive request may carry at most 64 KB; a longer draft goes as an ordinary request.
      lastSave = post(url, form, data, leaving && size(data) < 60000)
        .then(function (response) {
          var json = (response.headers.get("Content-Type") || "").indexOf("application/json") === 0;
          if (!json) return [false, { errors: { form: ["the server refused it: reload the page."] } }];
          return response.json().then(function (answer) { return [response.ok, answer]; });
        })
        .then(function (result) {
          if (!status) return;
          if (result[0]) status.textContent = result[1].saved ? "Draft saved at " + result[1].at : "";
          else status.textContent = "Draft not saved: " + Object.values(result[1].errors || {}).join(" ");
        })
        .catch(function () {
          dirty = true;
          if (status) status.textContent = "Draft not saved (no connection); it is tried again as you type.";
        })
        .finally(function () {
          saving = false;
          if (dirty && !timer) save(false);
        });
      return lastSave;
    }

    function changed() {
      dirty = true;
      clearTimeout(timer);
      timer = setTimeout(function () { timer = null; save(false); }, DRAFT_DELAY);
    }

    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    // Saving the rating sends what was typed anyway; a failed save keeps it as the draft on the server.
    form.addEventListener("submit", function () { clearTimeout(timer); dirty = false; });
    // Discarding the draft: nothing is left to save, or the pagehide save below would write it again.
    document.querySelectorAll("form[data-draft-discard]").forEach(function (discard) {
      discard.addEventListener("submit", function () { clearTimeout(timer); dirty = false; });
    });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "hidden") save(true);
    });
    window.addEventListener("pagehide", function () { save(true); });
    // Signing out: the draft is saved first (at most SIGN_OUT_WAIT), then the form is sent as it was.
    document.querySelectorAll("form[data-sign-out]").forEach(function (signOut) {
      signOut.addEventListener("submit", function (event) {
        if (!dirty && !saving) return;
        event.preventDefault();
        var waited = new Promise(function (resolve) { setTimeout(resolve, SIGN_OUT_WAIT); });
        Promise.race([save(true), waited]).catch(function () {}).then(function () { signOut.submit(); });
      });
    });
  }

  function start() {
    leases(countdown());
    drafts();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
