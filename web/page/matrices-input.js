// The custom-matrices editor's content: the worked example, and matrices
// written as readable JSON. What is typed is read by views/input.js
// (readMatrices, shared with <attnlens-matrices>).

// The worked example of issue 2: 3 tokens, d = 4, one head, W_O = identity.
export const workedExample = Object.freeze({
  x: [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]],
  wq: [[0.1, 0.2, 0, 0], [0, 0.1, 0.3, 0], [0.1, 0, 0, 0.2], [0, 0, 0.2, 0.3]],
  wk: [[0.2, 0, 0.1, 0], [0, 0.1, 0, 0.3], [0.1, 0, 0.2, 0], [0, 0.2, 0, 0.1]],
  wv: [[0, 0.1, 0, 0.2], [0.2, 0, 0.2, 0], [0, 0.3, 0.1, 0], [0.1, 0, 0, 0.3]],
});

// JSON with one matrix row per line: readable in the editor.
export function matricesToJson(matrices) {
  const entries = Object.entries(matrices).map(([name, value]) => {
    if (!Array.isArray(value)) return `  "${name}": ${JSON.stringify(value)}`;
    const rows = value.map((row) => `    ${JSON.stringify(row)}`).join(',\n');
    return `  "${name}": [\n${rows}\n  ]`;
  });
  return `{\n${entries.join(',\n')}\n}`;
}
