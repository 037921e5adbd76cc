// Binds the tutorial's plain form controls to attributes of the live elements,
// declaratively, so the page holds no other logic:
//
//   <input data-target="scores" data-attribute="text">        text, number, range
//   <select data-target="heads-grid heads-steps" data-attribute="heads">
//   <input type="checkbox" data-target="causal" data-attribute="causal">
//
//   <textarea data-target="worked-example" data-json>   the text of a shared
//                  <script type="application/json" id="worked-example">: every
//                  <attnlens-matrices matrices="#worked-example"> recomputes
//
// data-target lists element ids (space-separated); every one gets the value.
// A checkbox sets the attribute (empty) when checked and removes it when not,
// as HTML boolean attributes work; an empty text field removes it too, so the
// element falls back to its default. An <output for="control-id"> shows the
// value of a range. On load each control takes its value from its first
// target's attribute, so the HTML states every setting once, on the element.
(function () {
  'use strict';

  // Typing recomputes after a short pause, not on every key.
  var TYPING_PAUSE_MS = 250;

  function targetsOf(control) {
    return (control.getAttribute('data-target') || '').split(/\s+/).filter(Boolean)
      .map(function (id) { return document.getElementById(id); })
      .filter(Boolean);
  }

  function isCheckbox(control) {
    return control.type === 'checkbox';
  }

  function isTyped(control) {
    return control.tagName === 'TEXTAREA' || /^(text|search)$/.test(control.type);
  }

  function showValue(control) {
    if (!control.id) return;
    var outputs = document.querySelectorAll('output[for~="' + control.id + '"]');
    for (var i = 0; i < outputs.length; i += 1) outputs[i].textContent = control.value;
  }

  function apply(control) {
    if (control.hasAttribute('data-json')) {
      targetsOf(control).forEach(function (script) { script.textContent = control.value; });
      return;
    }
    var name = control.getAttribute('data-attribute');
    var targets = targetsOf(control);
    for (var i = 0; i < targets.length; i += 1) {
      var on = isCheckbox(control) ? control.checked : control.value.trim() !== '';
      if (!on) targets[i].removeAttribute(name);
      else targets[i].setAttribute(name, isCheckbox(control) ? '' : control.value);
    }
    showValue(control);
  }

  // The control shows what its element already says (a checkbox: whether the
  // boolean attribute is on; "false" counts as off, as the elements read it).
  function takeFromElement(control) {
    var first = targetsOf(control)[0];
    var name = control.getAttribute('data-attribute');
    if (!first) return;
    if (control.hasAttribute('data-json')) {
      control.value = first.textContent.trim();
      return;
    }
    var value = first.getAttribute(name);
    if (isCheckbox(control)) {
      control.checked = value !== null && value.trim().toLowerCase() !== 'false';
    } else if (value !== null) {
      var before = control.value;
      control.value = value;
      // A <select> without that option keeps its choice.
      if (control.tagName === 'SELECT' && control.value !== value) control.value = before;
    }
    showValue(control);
  }

  function bind(control) {
    takeFromElement(control);
    var timer = null;
    if (isTyped(control)) {
      control.addEventListener('input', function () {
        clearTimeout(timer);
        timer = setTimeout(function () { apply(control); }, TYPING_PAUSE_MS);
      });
      control.addEventListener('change', function () {
        clearTimeout(timer);
        apply(control);
      });
    } else {
      control.addEventListener(control.type === 'range' ? 'input' : 'change', function () { apply(control); });
    }
  }

  function start() {
    var controls = document.querySelectorAll('[data-target][data-attribute], [data-target][data-json]');
    for (var i = 0; i < controls.length; i += 1) bind(controls[i]);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
