// Section 13's numbers, from the two live elements' results (the library's,
// computed in this page): the share of each row's weight the chosen head puts
// on the first token, averaged over the tokens after it, as weights
// (model.run's attention) and value-weighted (model.analyze's valueWeighted),
// and how many times the first overstates it. Recomputed whenever either
// element draws again (a new text, layer or head).
(function () {
  'use strict';

  // The mean of column 0 over rows 1 .. n-1 of one head's n x n block of [layer][head][query][key].
  function firstTokenShare(values, n, heads, layer, head) {
    var start = (layer * heads + head) * n * n;
    var sum = 0;
    for (var row = 1; row < n; row += 1) sum += values[start + row * n];
    return sum / (n - 1);
  }

  function update() {
    var weights = document.getElementById('mislead-weights');
    var valued = document.getElementById('mislead-values');
    var run = weights && weights.result;
    var analysis = valued && valued.result;
    if (!run || !analysis || !run.attention || !analysis.valueWeighted || run.n !== analysis.n || run.n < 2) return;
    var layer = Number(weights.getAttribute('layer') || 0);
    var head = Number(weights.getAttribute('head') || 0);
    var raw = firstTokenShare(run.attention, run.n, run.heads, layer, head);
    var share = firstTokenShare(analysis.valueWeighted, analysis.n, analysis.heads, layer, head);
    document.getElementById('sink-raw').textContent = raw.toFixed(2);
    document.getElementById('sink-values').textContent = share.toFixed(2);
    document.getElementById('sink-ratio').textContent = share > 0 ? (raw / share).toFixed(1) : '∞';
    document.getElementById('sink-token').textContent = run.tokens[0];
  }

  document.addEventListener('DOMContentLoaded', function () {
    ['mislead-weights', 'mislead-values'].forEach(function (id) {
      var element = document.getElementById(id);
      if (element) element.addEventListener('ready', update);
    });
    update();
  });
})();
