/* Keyboard shortcuts, declared in the markup; shared by every page (loaded from templates/base.html).
 *
 * Contract:
 * - Any element with `data-shortcut="<key>"` and `data-shortcut-label="<what it does>"` gets a shortcut.
 *   `<key>` is a KeyboardEvent.key ("c", "1", "j", "Enter"); letters match in either case.
 *   With a modifier it is written "ctrl+Enter", "alt+s" ("ctrl" also matches the Mac's Command key).
 * - Pressing the key activates the element: a radio or checkbox is checked (a `change` event fires) and
 *   focused; a button, link or <summary> is clicked; a text field, textarea or select is focused.
 * - A plain key does nothing while the focus is in a text field, textarea or select (typing stays
 *   typing); a key with ctrl/alt works there too.
 * - Several elements with one key: the first that can be seen (or is inside a closed <details>, which
 *   opens) and is not disabled. Elements inside `hidden` or `inert` are skipped.
 * - "?" opens a native <dialog> listing every shortcut on the page, from the same attributes; Escape or
 *   its button closes it, and the focus goes back where it was.
 * - `[data-shortcut-hint]` elements (hidden in the markup: the keys need this script) are shown;
 *   `[data-shortcuts-open]` buttons open the list.
 * Each element also gets `aria-keyshortcuts`, so assistive technology can announce the key.
 * - Single-key shortcuts can be turned off (WCAG 2.1.4, Character Key Shortcuts): the dialog has a
 *   "Keyboard shortcuts on" checkbox, kept in localStorage for the whole site, on by default. Off, no
 *   unmodified key does anything ("?" included: `[data-shortcuts-open]` buttons still open the list, to
 *   turn them on again), hints are hidden and `aria-keyshortcuts` is dropped; keys with Ctrl or Alt stay.
 *   `[data-shortcuts-ui]` elements are shown whenever this script runs, on or off.
 *
 * CSP: script-src 'self' (no inline script), so this file is included with `defer`.
 */
(function () {
  "use strict";

  var STORAGE_KEY = "factdesk.shortcuts";

  function enabled() {
    try {
      return window.localStorage.getItem(STORAGE_KEY) !== "off";
    } catch (error) {
      return true; // storage blocked: the default
    }
  }

  function setEnabled(on) {
    try {
      window.localStorage.setItem(STORAGE_KEY, on ? "on" : "off");
    } catch (error) { /* storage blocked: on for this page only */ }
    refresh();
  }

  var TEXT_INPUTS = /^(text|search|url|email|number|password|tel|date|datetime-local|month|week|time)$/;

  function isTyping(element) {
    if (!element || element === document.body) return false;
    if (element.isContentEditable) return true;
    var tag = element.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT") return true;
    return tag === "INPUT" && TEXT_INPUTS.test(element.type || "text");
  }

  function parse(spec) {
    var parts = spec.split("+");
    // "+" alone, or "ctrl++", keeps its "+" as the key.
    var key = parts.pop() || "+";
    if (key === "+" && parts.length && parts[parts.length - 1] === "") parts.pop();
    var mods = { ctrl: false, alt: false, shift: false };
    parts.forEach(function (part) {
      var name = part.trim().toLowerCase();
      if (name === "control" || name === "cmd" || name === "meta") name = "ctrl";
      if (name in mods) mods[name] = true;
    });
    return { key: key, ctrl: mods.ctrl, alt: mods.alt, shift: mods.shift, modified: mods.ctrl || mods.alt };
  }

  function sameKey(a, b) {
    return a.length === 1 && b.length === 1 ? a.toLowerCase() === b.toLowerCase() : a === b;
  }

  function matches(shortcut, event) {
    var ctrl = event.ctrlKey || event.metaKey;
    if (shortcut.ctrl !== ctrl || shortcut.alt !== event.altKey) return false;
    // Shift is part of printable keys ("?" is shift+/); it is checked only where it was written.
    if (shortcut.shift && !event.shiftKey) return false;
    return sameKey(shortcut.key, event.key);
  }

  function label(spec) {
    var shortcut = parse(spec);
    var keys = [];
    if (shortcut.ctrl) keys.push("Ctrl");
    if (shortcut.alt) keys.push("Alt");
    if (shortcut.shift) keys.push("Shift");
    keys.push(shortcut.key.length === 1 ? shortcut.key.toUpperCase() : shortcut.key);
    return keys;
  }

  function ariaKeys(spec) {
    return label(spec).map(function (key) { return key === "Ctrl" ? "Control" : key; }).join("+");
  }

  function usable(element) {
    if (element.disabled || element.closest("[hidden], [inert]")) return false;
    if (element.getClientRects().length) return true;
    var details = element.closest("details:not([open])");
    return Boolean(details && details.getClientRects().length);
  }

  function activate(element) {
    var details = element.closest("details:not([open])");
    if (details && element.tagName !== "SUMMARY") details.open = true;
    var tag = element.tagName;
    var type = (element.type || "").toLowerCase();
    if (tag === "INPUT" && (type === "radio" || type === "checkbox")) {
      element.checked = true;
      element.dispatchEvent(new Event("input", { bubbles: true }));
      element.dispatchEvent(new Event("change", { bubbles: true }));
      element.focus();
    } else if (isTyping(element)) {
      element.focus();
    } else {
      element.click();
    }
  }

  function all() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-shortcut]"));
  }

  var dialog = null;
  var returnTo = null;

  function buildDialog() {
    dialog = document.createElement("dialog");
    dialog.className = "shortcuts-dialog";
    dialog.id = "shortcuts-dialog";
    dialog.setAttribute("aria-labelledby", "shortcuts-dialog-title");
    var title = document.createElement("h2");
    title.id = "shortcuts-dialog-title";
    title.textContent = "Keyboard shortcuts";
    var list = document.createElement("dl");
    list.className = "shortcut-list";
    var close = document.createElement("button");
    close.type = "button";
    close.className = "button";
    close.textContent = "Close";
    close.addEventListener("click", function () { dialog.close(); });
    var toggle = document.createElement("p");
    toggle.className = "shortcuts-switch";
    var box = document.createElement("input");
    box.type = "checkbox";
    box.id = "shortcuts-enabled";
    var boxLabel = document.createElement("label");
    boxLabel.htmlFor = box.id;
    boxLabel.textContent = "Keyboard shortcuts on";
    var boxHelp = document.createElement("span");
    boxHelp.className = "small muted";
    boxHelp.id = "shortcuts-enabled-help";
    boxHelp.textContent = " Off, a letter or number pressed alone does nothing here or on other pages; Ctrl + Enter still saves.";
    box.setAttribute("aria-describedby", boxHelp.id);
    box.addEventListener("change", function () { setEnabled(box.checked); fillDialog(); });
    toggle.append(box, " ", boxLabel, boxHelp);
    dialog.append(title, toggle, list, close);
    dialog.addEventListener("close", function () {
      // The close event comes a task later, and Chromium has given the focus back already: a key pressed
      // in between (Escape, then "/") may have moved it on, and must not be undone.
      var active = document.activeElement;
      var unplaced = !active || active === document.body || dialog.contains(active);
      if (unplaced && returnTo && document.contains(returnTo)) returnTo.focus();
      returnTo = null;
    });
    document.body.appendChild(dialog);
  }

  function fillDialog() {
    var list = dialog.querySelector(".shortcut-list");
    list.replaceChildren();
    var on = enabled();
    dialog.querySelector("#shortcuts-enabled").checked = on;
    var seen = {};
    var rows = on ? [{ spec: "?", text: "Show this list of shortcuts" }] : [];
    all().forEach(function (element) {
      if (!usable(element)) return;
      var spec = element.getAttribute("data-shortcut");
      if (!on && !parse(spec).modified) return; // off: only the keys with Ctrl or Alt work
      var text = element.getAttribute("data-shortcut-label") || element.textContent.trim();
      if (seen[spec + "\u0000" + text]) return;
      seen[spec + "\u0000" + text] = true;
      rows.push({ spec: spec, text: text });
    });
    rows.forEach(function (row) {
      var term = document.createElement("dt");
      label(row.spec).forEach(function (key, index) {
        if (index) term.append(" + ");
        var kbd = document.createElement("kbd");
        kbd.textContent = key;
        term.append(kbd);
      });
      var description = document.createElement("dd");
      description.textContent = row.text;
      list.append(term, description);
    });
  }

  function openList() {
    if (!dialog) buildDialog();
    if (dialog.open) return;
    fillDialog();
    returnTo = document.activeElement;
    dialog.showModal();
    dialog.querySelector("button.button").focus();
  }

  function onKeydown(event) {
    if (event.defaultPrevented || event.isComposing || event.repeat) return;
    if (document.querySelector("dialog[open]")) return; // a dialog has the keyboard (Escape closes it)
    var typing = isTyping(event.target);
    var on = enabled();
    if (on && event.key === "?" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      event.preventDefault();
      openList();
      return;
    }
    var elements = all();
    for (var i = 0; i < elements.length; i++) {
      var shortcut = parse(elements[i].getAttribute("data-shortcut"));
      if (!shortcut.modified && (typing || !on)) continue;
      if (!matches(shortcut, event) || !usable(elements[i])) continue;
      event.preventDefault();
      activate(elements[i]);
      return;
    }
  }

  // Hints, and what assistive technology announces, follow the switch.
  function refresh() {
    var on = enabled();
    all().forEach(function (element) {
      var spec = element.getAttribute("data-shortcut");
      if (on || parse(spec).modified) element.setAttribute("aria-keyshortcuts", ariaKeys(spec));
      else element.removeAttribute("aria-keyshortcuts");
    });
    document.querySelectorAll("[data-shortcut-hint]").forEach(function (hint) {
      // A hint holding the button that opens the list stays, so the keys can be turned on again there.
      hint.hidden = !on && !hint.querySelector("[data-shortcuts-open]");
    });
    document.querySelectorAll("[data-shortcuts-ui]").forEach(function (element) { element.hidden = false; });
  }

  function start() {
    refresh();
    document.addEventListener("click", function (event) {
      if (event.target.closest && event.target.closest("[data-shortcuts-open]")) openList();
    });
    document.addEventListener("keydown", onKeydown);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
