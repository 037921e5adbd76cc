// headRoles (attnlens/views' measured head roles) on weights written by hand,
// where the means are known by construction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { headRoles } from '../../../web/views/head-roles.js';

// One n x n head whose row i puts `onPrevious` on key i - 1, `onFirst` on key 0 and the rest evenly on keys <= i.
function causalHead(n, { onPrevious = 0, onFirst = 0 }) {
  const w = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    if (i === 0) { w[0] = 1; continue; }
    if (i === 1) { w[n] = 0.5; w[n + 1] = 0.5; continue; } // ambiguous row: not counted
    const rest = (1 - onPrevious - onFirst) / (i + 1);
    for (let j = 0; j <= i; j++) w[i * n + j] = rest;
    w[i * n + i - 1] += onPrevious;
    w[i * n] += onFirst;
  }
  return w;
}

test('headRoles names previous-token and first-token heads by their mean weights over queries i >= 2', () => {
  const n = 6;
  const heads = [causalHead(n, { onPrevious: 0.8 }), causalHead(n, { onFirst: 0.7 }), causalHead(n, {})];
  const weights = new Float32Array(heads.length * n * n);
  heads.forEach((w, h) => weights.set(w, h * n * n));
  const roles = headRoles(weights, { layers: 1, heads: 3, n });
  assert.equal(roles.length, 3);
  // Head 0: row i gives 0.8 + 0.2 / (i + 1) to i - 1, for i = 2..5.
  const expectedPrevious = [2, 3, 4, 5].reduce((s, i) => s + 0.8 + 0.2 / (i + 1), 0) / 4;
  assert.ok(Math.abs(roles[0].previous - expectedPrevious) < 1e-6);
  assert.equal(roles[0].role, 'previous token');
  assert.equal(roles[1].role, 'first token');
  assert.ok(Math.abs(roles[1].first - [2, 3, 4, 5].reduce((s, i) => s + 0.7 + 0.3 / (i + 1), 0) / 4) < 1e-6);
  // Head 2 is uniform over the keys it sees: no role.
  assert.equal(roles[2].role, null);
  assert.deepEqual(roles.map(({ layer, head }) => [layer, head]), [[0, 0], [0, 1], [0, 2]]);
});

test('headRoles indexes [layer][head] and needs three tokens', () => {
  const n = 4;
  const weights = new Float32Array(2 * 2 * n * n);
  weights.set(causalHead(n, { onPrevious: 0.9 }), 3 * n * n); // layer 1, head 1
  for (let lh = 0; lh < 3; lh++) weights.set(causalHead(n, {}), lh * n * n);
  const roles = headRoles(weights, { layers: 2, heads: 2, n });
  assert.deepEqual(roles.filter((r) => r.role).map(({ layer, head, role }) => [layer, head, role]), [[1, 1, 'previous token']]);
  assert.deepEqual(headRoles(new Float32Array(4), { heads: 1, n: 2 }), []);
});
