// Live rates: calls accepted and deliveries by outcome, read every few seconds.

import { api, query } from './api.js';
import { barChart } from './chart.js';
import { DAY_MS, errorBox, h, localText, show, showError } from './dom.js';
import { onLeave } from './router.js';

/** How often the live view reads the rates. */
const LIVE_POLL_MS = 5_000;
/** Samples the live view's small charts keep. */
const LIVE_SAMPLES = 30;

const LIVE_TILES = [
  { key: 'accepted', label: 'Accepted', unit: 'calls/s' },
  { key: 'delivered', label: 'Delivered', unit: 'per min' },
  { key: 'retrying', label: 'Retrying', unit: 'per min' },
  { key: 'dead', label: 'Dead', unit: 'per min' },
];

export function livePage(view) {
  const samples = Object.fromEntries(LIVE_TILES.map((t) => [t.key, []]));
  const tiles = Object.fromEntries(
    LIVE_TILES.map((t) => [
      t.key,
      { value: h('span', { class: 'big', 'data-testid': `live-${t.key}` }, '—'), chart: h('div') },
    ]),
  );
  const status = h('p', { class: 'muted' }, 'Reading…');
  const alert = errorBox();
  view.append(
    h('h1', { tabindex: -1 }, 'Live'),
    h(
      'p',
      {},
      `Read every ${LIVE_POLL_MS / 1000} s from the admin API. Accepted: calls counted by ingest ` +
        '(usage of every source), diffed between two reads. Delivered, retrying and dead: deliveries ' +
        'whose ledger row changed in the last minute (successes as sampled by the dispatcher).',
    ),
    h(
      'div',
      { class: 'tiles' },
      LIVE_TILES.map((t) =>
        h(
          'section',
          { class: 'tile card', 'aria-label': t.label },
          h('h2', {}, t.label),
          h('p', {}, tiles[t.key].value, ' ', h('span', { class: 'muted' }, t.unit)),
          tiles[t.key].chart,
        ),
      ),
    ),
    status,
    alert,
  );
  let previous;
  let timer;
  let stopped = false;
  const tick = async () => {
    try {
      const [total, stats] = await Promise.all([
        acceptedTotal(),
        api('GET', '/deliveries/stats?minutes=1'),
      ]);
      const now = Date.now();
      const accepted =
        previous && total >= previous.total
          ? (total - previous.total) / ((now - previous.at) / 1000)
          : null;
      previous = { total, at: now };
      const values = { accepted, ...stats.counts };
      for (const t of LIVE_TILES) {
        const value = values[t.key];
        tiles[t.key].value.textContent =
          value === null || value === undefined ? '—' : formatRate(value);
        if (value !== null && value !== undefined) {
          samples[t.key].push({ label: localText(new Date(now)), value });
          if (samples[t.key].length > LIVE_SAMPLES) samples[t.key].shift();
          show(
            tiles[t.key].chart,
            barChart(samples[t.key], `${t.label}, last ${samples[t.key].length} reads`, t.unit, {
              labels: false,
              slots: LIVE_SAMPLES,
            }),
          );
        }
      }
      alert.hidden = true;
      show(status, `Updated ${localText(new Date(now))}.`);
    } catch (error) {
      showError(alert, error);
    }
    if (!stopped) timer = setTimeout(tick, LIVE_POLL_MS);
  };
  onLeave(() => {
    stopped = true;
    clearTimeout(timer);
  });
  void tick();
}

function formatRate(value) {
  return value >= 100 || Number.isInteger(value)
    ? Math.round(value).toLocaleString('en')
    : value.toFixed(1);
}

/** Calls accepted yesterday and today (UTC) over every source: a counter that only grows within a day pair. */
async function acceptedTotal() {
  const sources = await api('GET', '/sources');
  const today = new Date();
  const range = query({
    from: new Date(today.getTime() - DAY_MS).toISOString().slice(0, 10),
    to: today.toISOString().slice(0, 10),
  });
  const usages = await Promise.all(
    sources.map((src) => api('GET', `/sources/${encodeURIComponent(src.id)}/usage${range}`)),
  );
  return usages.reduce((sum, usage) => sum + usage.days.reduce((n, d) => n + d.calls, 0), 0);
}
