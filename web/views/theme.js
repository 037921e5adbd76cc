// Theming. Every colour and the font of a view come from CSS custom
// properties on (or above) the element it is mounted in, with light and
// `prefers-color-scheme: dark` defaults:
//   --attnlens-background  --attnlens-text    --attnlens-muted   --attnlens-faint
//   --attnlens-strong      --attnlens-accent  --attnlens-highlight  --attnlens-line
//   --attnlens-font        --attnlens-font-size  --attnlens-max-size (largest chart side, px)
// The weights themselves always use viridis (colors.js), legible in both.

const font = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

export const lightTheme = {
  background: '#fff', text: '#222', muted: '#555', faint: '#999', strong: '#000',
  accent: '#1f4e9c', highlight: '#ffe8a3', line: '#0a2f6e', font,
};

export const darkTheme = {
  background: '#15171c', text: '#e6e6e6', muted: '#aab', faint: '#667', strong: '#fff',
  accent: '#8ab4ff', highlight: '#5c4a12', line: '#9cc2ff', font,
};

export function prefersDark() {
  return globalThis.matchMedia?.('(prefers-color-scheme: dark)').matches ?? false;
}

/** The theme in force at `element`: its custom properties over the light or dark defaults. */
export function readTheme(element) {
  const base = prefersDark() ? darkTheme : lightTheme;
  const style = getComputedStyle(element);
  const theme = {};
  for (const [name, fallback] of Object.entries(base)) {
    theme[name] = style.getPropertyValue(`--attnlens-${name}`).trim() || fallback;
  }
  theme.maxSize = parseFloat(style.getPropertyValue('--attnlens-max-size')) || 0;
  return theme;
}

// The few rules the HTML parts need (tooltip, readout, focus ring, buttons),
// added once to the document while any view is mounted. A band's spacer clips
// its canvas (8 px out, for the focus ring): a canvas a little wider than its
// scene (scene.js renderCanvas's slack) scrolls no further than the scene.
const css = `
.attnlens-view{position:relative;max-width:100%;color:var(--attnlens-text,#222);background:var(--attnlens-background,#fff);
font-family:var(--attnlens-font,system-ui,sans-serif);font-size:var(--attnlens-font-size,13px)}
.attnlens-scroll{overflow:auto;max-width:100%}
.attnlens-view canvas{display:block}
.attnlens-band{position:relative;overflow:clip;overflow-clip-margin:8px}
.attnlens-band>canvas{position:absolute;left:0;overflow-anchor:none}
.attnlens-row-marker{position:absolute;width:1px;pointer-events:none;overflow-anchor:none}
.attnlens-with-legend{display:flex;gap:8px;align-items:flex-start}
.attnlens-view :focus-visible,.attnlens-view canvas:focus{outline:3px solid var(--attnlens-accent,#1f4e9c);outline-offset:2px}
.attnlens-readout{min-height:1.4em;margin:4px 0;font-variant-numeric:tabular-nums}
.attnlens-tooltip{position:absolute;z-index:1;pointer-events:none;padding:3px 6px;border-radius:4px;white-space:nowrap;
background:var(--attnlens-text,#222);color:var(--attnlens-background,#fff);font-variant-numeric:tabular-nums}
.attnlens-grid{display:grid;gap:8px;align-items:center;justify-content:start}
.attnlens-grid>span{color:var(--attnlens-muted,#555);text-align:center;white-space:nowrap}
.attnlens-grid button{padding:4px;border:1px solid var(--attnlens-faint,#999);border-radius:6px;line-height:0;background:none;cursor:pointer}
.attnlens-grid button[aria-current=true]{border:2px solid var(--attnlens-accent,#1f4e9c);padding:3px}
.attnlens-view table{border-collapse:collapse;font-variant-numeric:tabular-nums}
.attnlens-view caption{text-align:left;padding-bottom:4px}
.attnlens-view th,.attnlens-view td{padding:2px 7px;border:1px solid var(--attnlens-faint,#ccc);text-align:right;white-space:nowrap}
.attnlens-view th[scope=row]{text-align:left}
.attnlens-view tr.attnlens-highlight th{background:var(--attnlens-highlight,#ffe8a3)}
.matrix-shape,.matrix-clipped{color:var(--attnlens-muted,#555)}
.attnlens-scores{display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start}
.attnlens-scores td{width:14px;height:14px;padding:0;font-size:0}.attnlens-scores thead th{font-size:0;padding:0}
@media (prefers-color-scheme:dark){
.attnlens-view{color:var(--attnlens-text,#e6e6e6);background:var(--attnlens-background,#15171c)}
.attnlens-tooltip{background:var(--attnlens-text,#e6e6e6);color:var(--attnlens-background,#15171c)}
.attnlens-view :focus-visible,.attnlens-view canvas:focus{outline-color:var(--attnlens-accent,#8ab4ff)}
.attnlens-grid>span,.matrix-shape,.matrix-clipped{color:var(--attnlens-muted,#aab)}
.attnlens-grid button[aria-current=true]{border-color:var(--attnlens-accent,#8ab4ff)}
.attnlens-view tr.attnlens-highlight th{background:var(--attnlens-highlight,#5c4a12)}}`;

let styleElement = null;
let users = 0;

/** Adds the stylesheet for one more mounted view; the returned function removes it after the last. */
export function useStyles(document) {
  users += 1;
  if (!styleElement) {
    styleElement = document.createElement('style');
    styleElement.dataset.attnlens = 'views';
    styleElement.textContent = css;
    document.head.append(styleElement);
  }
  return () => {
    users -= 1;
    if (users === 0) {
      styleElement.remove();
      styleElement = null;
    }
  };
}
