// The lifecycle of a mounted view made of DOM (headScores, logitLens, steps):
// listeners on its root, update (take, then render), destroy that leaves
// nothing, and the methods a view adds, refused after destroy.

/**
 * Listens, and returns the mounted view: update (take, then render), destroy (leaves nothing),
 * toCSV when `csv` is given, and what `extend(alive)` adds (getters, toJSON: `alive(method)` refuses it after destroy).
 */
export function mountedTableView(name, root, handlers, releaseStyles, { take, render, csv, extend }) {
  for (const type in handlers) root.addEventListener(type, handlers[type]);
  render();
  let destroyed = false;
  const alive = (method) => { if (destroyed) throw new Error(`attnlens/views: ${name}.${method}() after destroy()`); };
  const view = {
    element: root,
    update(nextData, nextOptions) {
      alive('update');
      take(nextData, nextOptions);
      render();
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      for (const type in handlers) root.removeEventListener(type, handlers[type]);
      root.remove();
      releaseStyles();
    },
    ...(csv && {
      toCSV() {
        alive('toCSV');
        return csv();
      },
    }),
  };
  return extend ? Object.defineProperties(view, Object.getOwnPropertyDescriptors(extend(alive))) : view;
}
