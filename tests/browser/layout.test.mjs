// The page laid out for looking (issue 11): on a 1280 x 720 laptop screen the
// chart is in the first screen, whole, beside the controls; on narrow screens
// the controls sit compact above it; a phone never scrolls sideways. Measured
// in headless Chromium on the BUILT page, with the boxes a user would see.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openPageAroundTests, waitForResult } from './page-fixture.mjs';

// 11 tokens with the random projections' word-level tokens:
// The | animal | didn't | cross | the | street | because | it | was | tired | .
const elevenTokens = 'The animal didn\'t cross the street because it was tired.';
const sixteenTokens = 'The quick brown fox jumps over the lazy dog while the old cat sleeps nearby.';

let session;
let page;
openPageAroundTests((opened) => {
  session = opened;
  page = opened.page;
}, { viewport: { width: 1280, height: 720 } });

function assertQuiet() {
  assert.deepEqual(session.errors, [], 'console errors or uncaught exceptions in the page');
}

async function openSentence(text) {
  await session.goto(`#s=${encodeURIComponent(text)}`);
  await page.waitForFunction(() => document.getElementById('heatmap-canvas').layout);
}

// Where a box is on screen (viewport coordinates), with the page scroll.
function boxOf(selector) {
  return page.locator(selector).evaluate((element) => {
    const { left, top, right, bottom } = element.getBoundingClientRect();
    return { left, top, right, bottom, scrollX: window.scrollX, scrollY: window.scrollY };
  });
}

async function assertChartInFirstScreen(where) {
  const { width, height } = page.viewportSize();
  const chart = await boxOf('#heatmap-canvas');
  assert.equal(chart.scrollY, 0, `${where}: the page is not scrolled`);
  assert.ok(chart.top >= 0 && chart.left >= 0, `${where}: the chart starts on screen (${chart.left}, ${chart.top})`);
  assert.ok(chart.bottom <= height && chart.right <= width,
    `${where}: the chart ends on screen: its corner is at (${chart.right}, ${chart.bottom}) in a ${width} x ${height} screen`);
  // The chart's own box shows it whole: nothing to scroll inside it either.
  const inside = await page.locator('#heatmap-canvas').evaluate((canvas) => {
    const box = canvas.parentElement;
    return { scrollHeight: box.scrollHeight, clientHeight: box.clientHeight, scrollWidth: box.scrollWidth, clientWidth: box.clientWidth };
  });
  assert.ok(inside.scrollHeight <= inside.clientHeight, `${where}: the heatmap box scrolls vertically (${inside.scrollHeight} > ${inside.clientHeight})`);
  assert.ok(inside.scrollWidth <= inside.clientWidth, `${where}: the heatmap box scrolls sideways (${inside.scrollWidth} > ${inside.clientWidth})`);
}

describe('a 1280 x 720 laptop screen', () => {
  test('an 11-token heatmap is whole in the first screen, with readable square cells', async () => {
    await openSentence(elevenTokens);
    const tokens = await page.evaluate(() => window.attnlens.last.tokens.length);
    assert.equal(tokens, 11);
    await assertChartInFirstScreen('11 tokens');
    // Sized to the room it has, not a fixed small picture: cells big enough to read.
    const layout = await page.locator('#heatmap-canvas').evaluate((canvas) => canvas.layout);
    assert.equal(layout.rows, 11);
    assert.ok(layout.cell >= 24, `cells of ${layout.cell} px are too small to read`);
    assertQuiet();
  });

  test('a 16-token heatmap fits too', async () => {
    await openSentence(sixteenTokens);
    assert.equal(await page.evaluate(() => window.attnlens.last.tokens.length), 16);
    await assertChartInFirstScreen('16 tokens');
    assertQuiet();
  });

  test('the controls sit beside the chart, the sentence field in the first screen', async () => {
    await openSentence(elevenTokens);
    const controls = await boxOf('#input');
    const views = await boxOf('#views');
    const sentence = await boxOf('#sentence');
    assert.ok(controls.right <= views.left, `the control column (right edge ${controls.right}) overlaps the views (left edge ${views.left})`);
    assert.ok(sentence.bottom <= 720, 'the sentence field is in the first screen');
    assertQuiet();
  });

  test('the "not meaning" caveat of random projections stays in view, the details open on demand', async () => {
    await openSentence(elevenTokens);
    const note = page.locator('#random-note');
    assert.equal(await note.isVisible(), true);
    assert.match(await note.locator('summary').textContent(), /token identity and position, not meaning/);
    const details = note.locator('p');
    assert.equal(await details.isVisible(), false, 'the long explanation starts closed');
    await note.locator('summary').click();
    assert.equal(await details.isVisible(), true);
    assert.match(await details.textContent(), /random generator seeded by seed/);
    assertQuiet();
  });

  test('a smaller window redraws the chart to its new room', async () => {
    await openSentence(elevenTokens);
    const before = await page.locator('#heatmap-canvas').evaluate((canvas) => canvas.layout.cell);
    await page.setViewportSize({ width: 1000, height: 600 });
    try {
      await page.waitForFunction((cell) => document.getElementById('heatmap-canvas').layout.cell < cell, before);
      await assertChartInFirstScreen('1000 x 600 after resizing');
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
    assertQuiet();
  });

  test('an encoder-decoder\'s model view: each of its three grids whole and titled on screen', async () => {
    await session.goto('#model=tiny-translator&view=model', { builtinModel: true });
    const sections = page.locator('#model-grid .model-kinds > section');
    await sections.nth(2).locator('canvas').first().waitFor();
    const grids = await sections.evaluateAll((parts) => parts.map((part) => {
      const scroll = part.querySelector('.attnlens-scroll');
      return { label: part.getAttribute('aria-label'), shown: part.innerText, scrollWidth: scroll.scrollWidth, clientWidth: scroll.clientWidth };
    }));
    for (const { label, shown, scrollWidth, clientWidth } of grids) {
      assert.ok(shown.startsWith(label), `the ${label} grid shows its title; it shows ${JSON.stringify(shown.slice(0, 40))}`);
      assert.ok(scrollWidth <= clientWidth, `the ${label} grid is cut off at ${clientWidth} of its ${scrollWidth} px`);
    }
    assertQuiet();
  });
});

describe('narrow screens', () => {
  test('at 800 px the controls are above the chart, in one column', async () => {
    await page.setViewportSize({ width: 800, height: 900 });
    try {
      await openSentence(elevenTokens);
      const chart = await boxOf('#heatmap-canvas');
      for (const id of ['#sentence', '#random-controls', '#random-note']) {
        const control = await boxOf(id);
        assert.ok(control.bottom <= chart.top, `${id} (bottom ${control.bottom}) is not above the chart (top ${chart.top})`);
      }
      const controls = await boxOf('#input');
      const views = await boxOf('#views');
      assert.ok(controls.bottom <= views.top, 'the views start below the controls');
      assert.ok(Math.abs(controls.left - views.left) < 1, 'controls and views share one column');
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scroll at 800 px');
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
    assertQuiet();
  });

  // The page opens on its built-in model, whose panel (built-in models, files, URL, ready models) was
  // 1300 px tall above the chart on a phone: it folds behind one button there, and only there.
  test('on a 375 x 812 phone the chart starts within about a screen; the model panel is one tap (or key) away', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    try {
      await session.goto('', { builtinModel: true });
      await waitForResult(page, 'window.attnlens.last.model !== null');
      const chart = await boxOf('#heatmap-canvas');
      assert.ok(chart.top <= 1000, `the chart starts ${Math.round(chart.top)} px down a 812 px phone screen`);
      const toggle = page.getByRole('button', { name: 'Open another model' });
      const readyList = page.getByRole('list', { name: 'Ready models' });
      assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
      assert.equal(await readyList.isVisible(), false);
      await toggle.focus();
      await page.keyboard.press('Enter');
      assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
      await readyList.waitFor({ state: 'visible' });
      await page.keyboard.press('Tab'); // the next stop is the panel's first control
      assert.equal(await page.evaluate(() => document.activeElement.dataset.builtin), 'tiny-english');
      await toggle.click();
      assert.equal(await readyList.isVisible(), false);
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
    // A wide screen shows the whole panel beside the chart, without the button.
    await page.waitForFunction(() => window.innerWidth === 1280);
    assert.equal(await page.getByRole('button', { name: 'Open another model' }).isVisible(), false);
    assert.equal(await page.getByRole('list', { name: 'Ready models' }).isVisible(), true);
    assertQuiet();
  });

  test('a 390 x 844 phone never scrolls sideways, in any view', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await openSentence(sixteenTokens);
      for (const view of ['Heatmap', 'All heads', 'Lines', 'Head average', 'Step by step']) {
        await page.getByRole('button', { name: view, exact: true }).click();
        await page.waitForTimeout(50);
        const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(scrollWidth <= 390, `${view}: the page is ${scrollWidth} px wide on a 390 px phone`);
      }
      await page.getByRole('button', { name: 'Heatmap', exact: true }).click();
      // The grid and its labels fit the phone's width, with cells big enough
      // to label every token (only the legend, right of it, may need a sideways
      // scroll of the chart's own box).
      const fit = await page.locator('#heatmap-canvas').evaluate((canvas) => {
        const box = canvas.parentElement.getBoundingClientRect();
        const { x, cell, cols } = canvas.layout;
        return { gridRight: canvas.getBoundingClientRect().left + x + cell * cols, boxRight: box.right, cell };
      });
      assert.ok(fit.gridRight <= fit.boxRight, `the grid ends at ${fit.gridRight}, beyond its box (${fit.boxRight})`);
      assert.ok(fit.cell >= 14, `cells of ${fit.cell} px on a phone: too small to label every token`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
    assertQuiet();
  });
});

describe('the page as it opens', () => {
  test('its first chart is whole in a 1280 x 720 screen', async () => {
    // Whatever the page opens on (its built-in model, when there is one).
    await session.goto('', { builtinModel: true });
    await waitForResult(page);
    await page.waitForFunction(() => document.getElementById('heatmap-canvas').layout);
    await assertChartInFirstScreen('the page as it opens');
    assertQuiet();
  });
});

// WCAG 2's contrast ratio of two rgb() colours (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio).
function contrast(foreground, background) {
  const luminance = (css) => {
    const [r, g, b] = css.match(/[\d.]+/g).slice(0, 3).map((value) => {
      const channel = Number(value) / 255;
      return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [light, dark] = [luminance(foreground), luminance(background)].sort((a, b) => b - a);
  return (light + 0.05) / (dark + 0.05);
}

describe('readable text', () => {
  test('the token strip\'s position numbers have the contrast of small text (4.5:1, WCAG AA)', async () => {
    await openSentence(elevenTokens);
    const colours = await page.locator('#token-strip .token-index').first().evaluate((index) => ({
      text: getComputedStyle(index).color, background: getComputedStyle(index.parentElement).backgroundColor,
    }));
    const ratio = contrast(colours.text, colours.background);
    assert.ok(ratio >= 4.5, `${colours.text} on ${colours.background}: ${ratio.toFixed(2)}:1`);
    assertQuiet();
  });
});
