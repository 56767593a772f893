// A destination's health: requests, success share, latency and the last error over the last
// hour and day, for the destination and each webhook by URL, with its circuit breaker.

import { api } from './api.js';
import { errorBox, h, link, show, showError, table, when } from './dom.js';
import { hashOf } from './router.js';

const WINDOWS = [
  ['hour', 'Last hour'],
  ['day', 'Last day'],
];

function share(figures) {
  return figures.successShare === null ? '—' : `${(figures.successShare * 100).toFixed(1)} %`;
}

function ms(value) {
  return value === null ? '—' : `${Math.round(value)} ms`;
}

function lastError(e) {
  if (!e) return '—';
  return [
    when(e.at),
    ' ',
    e.reason ? h('code', {}, e.reason) : null,
    e.detail ? ` ${e.detail}` : '',
  ];
}

/** One row per window: attempts, success share, p50, p99, last error. */
function windowsTable(caption, of) {
  return table(
    caption,
    [
      { label: 'Window', cell: ([, label]) => label },
      { label: 'Requests', cell: ([name]) => String(of[name].attempts) },
      { label: 'Success', cell: ([name]) => share(of[name]) },
      { label: 'p50', cell: ([name]) => ms(of[name].latencyP50Ms) },
      { label: 'p99', cell: ([name]) => ms(of[name].latencyP99Ms) },
      { label: 'Last error', cell: ([name]) => lastError(of[name].lastError) },
    ],
    WINDOWS,
    ([name]) => ({ 'data-window': name }),
  );
}

export async function healthPage(view, sourceId, destinationId) {
  const alert = errorBox();
  const body = h('div', { 'data-testid': 'health' });
  view.append(h('h1', { tabindex: -1 }, 'Destination health'), alert, body);
  let health;
  try {
    health = await api('GET', `/destinations/${encodeURIComponent(destinationId)}/health`);
  } catch (error) {
    return showError(alert, error);
  }
  const breaker = health.breaker;
  show(
    body,
    h(
      'section',
      { class: 'card' },
      h('h2', {}, health.name),
      h(
        'p',
        {},
        health.enabled ? 'Enabled' : 'Disabled',
        '. Circuit breaker ',
        h('strong', { 'data-testid': 'breaker-state' }, breaker.state.replace('_', '-')),
        breaker.state === 'closed' ? '' : ` in ${breaker.openReplicas} dispatcher(s)`,
        breaker.since ? [' since ', when(breaker.since)] : '',
        '.',
      ),
      windowsTable('The destination', health),
      h(
        'p',
        { class: 'muted small' },
        'Requests to its webhooks (one per webhook per attempt) of the deliveries first attempted in the window.',
      ),
      h(
        'p',
        { class: 'actions' },
        link('Destination', hashOf(['sources', sourceId, 'destinations', destinationId])),
        link('Its failures', hashOf(['deliveries'], { sourceId, destinationId, outcome: 'dead' })),
      ),
    ),
    health.webhooks.map((w) =>
      h(
        'section',
        { class: 'card', 'data-webhook-id': w.webhookId },
        h('h2', {}, h('code', { class: 'url' }, w.url ?? `${w.webhookId} (removed)`)),
        windowsTable(`Webhook ${w.url ?? w.webhookId}`, w),
      ),
    ),
  );
}
