// The page's state, in one place: parts change it with set() and draw
// themselves from it in subscribe(); none calls another part back.
//
// A listener gets the state and the set of keys that changed. A set() made
// while listeners run (a part reacting with a change of its own) is applied
// and announced after the current round, so every listener sees each state in
// order.

export function createStore(initial) {
  let state = initial;
  const listeners = new Set();
  const queue = [];
  let notifying = false;

  function set(patch) {
    queue.push(patch);
    if (notifying) return;
    notifying = true;
    try {
      while (queue.length > 0) {
        const next = queue.shift();
        const changed = new Set(Object.keys(next).filter((key) => next[key] !== state[key]));
        if (changed.size === 0) continue;
        state = { ...state, ...next };
        for (const listener of listeners) listener(state, changed);
      }
    } finally {
      notifying = false;
      queue.length = 0;
    }
  }

  return {
    get state() { return state; },
    set,
    /** Merges `patch` into the settings (a new object, so `settings` counts as changed). */
    setSettings(patch) {
      set({ settings: { ...state.settings, ...patch } });
    },
    /** Calls `listener(state, changedKeys)` after every change; returns the unsubscribe function. */
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
