/* Posts' media, blurred until asked for (templates/factcheck/_media.html, static/css/media.css).
 *
 * Without JavaScript each hidden picture is a link that opens it as it is, in a new tab. This script turns
 * each such link into a button that shows the picture in place and hides it again (a click, Enter or Space:
 * a button's own keys), says which it is by aria-pressed, and keeps the caption in step. The picture's alt
 * text stays the button's name; the caption describes what a press does.
 * CSP: script-src 'self', so this file is included with `defer`.
 */
(function () {
  "use strict";

  var HIDDEN = { image: "Image hidden: click to show", video: "Video still hidden: click to show" };
  var SHOWN = { image: "Image shown: click to hide", video: "Video still shown: click to hide" };

  function enhance(link) {
    var figure = link.closest("[data-media]");
    if (!figure) return;
    var kind = figure.classList.contains("media-video") ? "video" : "image";
    var state = figure.querySelector("[data-media-state]");
    var button = document.createElement("button");
    button.type = "button";
    button.className = link.className;
    button.setAttribute("aria-pressed", "false");
    if (link.hasAttribute("aria-describedby")) button.setAttribute("aria-describedby", link.getAttribute("aria-describedby"));
    while (link.firstChild) button.appendChild(link.firstChild);
    link.parentNode.replaceChild(button, link);

    button.addEventListener("click", function () {
      var hidden = figure.classList.toggle("is-hidden");
      button.setAttribute("aria-pressed", hidden ? "false" : "true");
      var hint = button.querySelector(".media-hint");
      if (hint) hint.textContent = hidden ? "Show" : "Hide";
      if (state) state.textContent = hidden ? HIDDEN[kind] : SHOWN[kind];
    });
  }

  function start() {
    document.querySelectorAll("a[data-media-toggle]").forEach(enhance);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
