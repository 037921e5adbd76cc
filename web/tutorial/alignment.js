// Section 9's numbers, from the translator's live element (#cross-learned, the
// library's generate and run, computed in this page): for the head it shows,
// the share of its cross-attention that the rows writing the month's digits
// put on the source's month word, what an even spread would put there, and
// how much the k-th year digit it writes puts on the k-th year digit it reads.
// Recomputed whenever the element draws again (a new date, layer or head).
(function () {
  'use strict';

  var MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october',
    'november', 'december'];
  var isDigit = function (token) { return /^\s?\d$/.test(token); };
  var word = function (token) { return token.trim().toLowerCase(); };

  // The source positions of the month's word: a month's name or its abbreviation, and the '.' after one.
  function monthPositions(tokens) {
    var found = [];
    tokens.forEach(function (token, position) {
      var text = word(token);
      var month = text === 'sept' || MONTHS.some(function (name) { return name === text || name.slice(0, 3) === text; });
      if (month || (text === '.' && found.indexOf(position - 1) >= 0)) found.push(position);
    });
    return found;
  }

  // The source positions of the year's four digits: the first run of exactly four digit tokens.
  function yearPositions(tokens) {
    for (var start = 0; start + 4 <= tokens.length; start += 1) {
      var run = tokens.slice(start, start + 4).every(isDigit);
      var bounded = (start === 0 || !isDigit(tokens[start - 1])) && (start + 4 === tokens.length || !isDigit(tokens[start + 4]));
      if (run && bounded) return [start, start + 1, start + 2, start + 3];
    }
    return [];
  }

  // Which field of YYYY-MM-DD each generated token writes (0 year, 1 month, 2 day; -1 for the rest).
  // Generated token i is what cross-attention row i chose.
  function fieldsOf(generated) {
    var field = 0;
    return generated.map(function (token) {
      if (token === '-') field += 1;
      return isDigit(token) ? field : -1;
    });
  }

  function show(id, text) {
    document.getElementById(id).textContent = text;
  }

  function update() {
    var element = document.getElementById('cross-learned');
    var run = element && element.result;
    if (!run || !run.crossAttention || !run.generated) return;
    var layer = Number(element.getAttribute('layer') || 0);
    var head = Number(element.getAttribute('head') || 0);
    var m = run.m, n = run.n;
    var start = (layer * run.heads + head) * m * n;
    var weight = function (row, col) { return run.crossAttention[start + row * n + col]; };
    var fields = fieldsOf(run.generated.tokens);
    var months = monthPositions(run.tokens);
    var years = yearPositions(run.tokens);

    var monthRows = [];
    var yearRows = [];
    fields.forEach(function (field, row) {
      if (field === 1) monthRows.push(row);
      if (field === 0) yearRows.push(row);
    });
    var monthShare = null;
    if (months.length && monthRows.length) {
      var sum = 0;
      monthRows.forEach(function (row) { months.forEach(function (col) { sum += weight(row, col); }); });
      monthShare = sum / monthRows.length;
    }
    var yearCopy = null;
    if (years.length === 4 && yearRows.length === 4) {
      yearCopy = yearRows.reduce(function (total, row, k) { return total + weight(row, years[k]); }, 0) / 4;
    }
    show('align-output', run.generated.text);
    show('align-head', 'layer ' + (layer + 1) + ', head ' + (head + 1));
    show('align-month', monthShare === null ? '— (no month word found)' : monthShare.toFixed(2));
    show('align-month-word', months.length ? months.map(function (col) { return run.tokens[col].trim(); }).join(' ') : '—');
    show('align-even', months.length ? (months.length / n).toFixed(2) : '—');
    show('align-year', yearCopy === null ? '— (no four-digit year found)' : yearCopy.toFixed(2));
  }

  document.addEventListener('DOMContentLoaded', function () {
    var element = document.getElementById('cross-learned');
    if (element) element.addEventListener('ready', update);
    update();
  });
})();
