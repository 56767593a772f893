// One delivery: who and what it was, where it stands, and every attempt with each webhook's
// answer (its URL, status, the start of its response body, the headers sent).

import { api } from './api.js';
import { badge, errorBox, facts, h, link, show, showError, table, when } from './dom.js';
import { outcomeCell, sourceCell, sourceSelect } from './deliveries.js';
import { rowReplay } from './replay.js';
import { hashOf } from './router.js';

/** The URLs of a destination's webhooks by id; empty when it cannot be read (deleted since). */
async function webhookUrls(delivery) {
  try {
    const path = `/sources/${encodeURIComponent(delivery.sourceId)}/destinations/${encodeURIComponent(delivery.destinationId)}`;
    const destination = await api('GET', path);
    return new Map(destination.webhooks.map((w) => [w.id, w.url]));
  } catch {
    return new Map();
  }
}

export async function deliveryPage(view, deliveryId) {
  const alert = errorBox();
  const body = h('div');
  view.append(h('h1', { tabindex: -1 }, 'Delivery'), alert, body);
  let delivery;
  try {
    delivery = await api('GET', `/deliveries/${encodeURIComponent(deliveryId)}`);
  } catch (error) {
    return showError(alert, error);
  }
  const [urls] = await Promise.all([webhookUrls(delivery), sourceSelect().ready]);
  show(
    body,
    h('section', { class: 'card' }, summary(delivery), actions(delivery)),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Attempts'),
      attemptsList(delivery.history ?? [], urls),
    ),
  );
}

function summary(d) {
  const number = (n, unit = '') => (typeof n === 'number' ? `${Math.round(n)}${unit}` : null);
  return facts([
    ['Outcome', h('span', { 'data-testid': 'delivery-outcome' }, outcomeCell(d))],
    ['Message id', h('code', {}, d.messageId)],
    ['Call', [d.type ?? '', d.event ? h('span', { class: 'event' }, ' ', d.event) : null]],
    ['User id', d.userId ? h('code', {}, d.userId) : null],
    ['Anonymous id', d.anonymousId ? h('code', {}, d.anonymousId) : null],
    ['Reason', d.reason ? h('code', {}, d.reason) : null],
    ['Last status', number(d.lastStatus)],
    ['Last detail', d.lastDetail],
    ['Last latency', number(d.lastLatencyMs, ' ms')],
    ['Attempts', String(d.attempts)],
    ['First attempt', when(d.firstAttemptAt)],
    ['Next attempt', d.outcome === 'retrying' ? when(d.nextAttemptAt) : null],
    ['Updated', when(d.updatedAt)],
    ['Source', link(sourceCell(d.sourceId), hashOf(['sources', d.sourceId]))],
    [
      'Destination',
      link(
        d.destinationName ?? d.destinationId,
        hashOf(['sources', d.sourceId, 'destinations', d.destinationId]),
      ),
    ],
    ['Delivery id', h('code', {}, d.id)],
    ['Replay of', d.replayOf ? link(d.replayOf, hashOf(['deliveries', d.replayOf])) : null],
    ['Replays', String(d.replays ?? 0)],
    [
      'Latest replay',
      d.lastReplayId ? link(d.lastReplayId, hashOf(['deliveries', d.lastReplayId])) : null,
    ],
    [
      'Dead letter',
      d.deadLetter ? `partition ${d.deadLetter.partition}, offset ${d.deadLetter.offset}` : null,
    ],
  ]);
}

function actions(d) {
  return h(
    'p',
    { class: 'actions' },
    d.outcome === 'dead' ? rowReplay(d) : null,
    link('Every delivery of this message id', hashOf(['deliveries'], { messageId: d.messageId })),
    d.userId || d.anonymousId
      ? link(
          'Every delivery of this user',
          hashOf(['deliveries'], { user: d.userId ?? d.anonymousId }),
        )
      : null,
  );
}

function attemptsList(history, urls) {
  if (!history.length) return h('p', {}, 'No attempt recorded yet.');
  return h(
    'ol',
    { class: 'attempts' },
    history.map((entry) =>
      h(
        'li',
        {},
        h(
          'p',
          {},
          h('strong', {}, `Attempt ${entry.attempts}`),
          ' ',
          badge(entry.result),
          ' at ',
          when(entry.at),
          typeof entry.lastStatus === 'number' ? ` · HTTP ${entry.lastStatus}` : '',
          entry.reason ? [' · ', h('code', {}, entry.reason)] : '',
          entry.nextAttemptAt ? [' · next attempt ', when(entry.nextAttemptAt)] : '',
        ),
        entry.webhooks?.length
          ? [
              table('Webhooks of this attempt', webhookColumns(urls), entry.webhooks),
              entry.webhooks.map((w) => exchange(w, urls)),
            ]
          : h('p', { class: 'muted small' }, 'No webhook was called.'),
      ),
    ),
  );
}

/** A webhook by URL, its id on hover; its id alone once removed. */
function webhookCell(webhookId, urls) {
  const url = urls.get(webhookId);
  return url ? h('code', { class: 'url', title: webhookId }, url) : h('code', {}, webhookId);
}

function webhookColumns(urls) {
  return [
    { label: 'Webhook', cell: (w) => webhookCell(w.webhookId, urls) },
    { label: 'Result', cell: (w) => w.kind },
    { label: 'Status', cell: (w) => (typeof w.status === 'number' ? String(w.status) : '—') },
    { label: 'Reason', cell: (w) => (w.reason ? h('code', {}, w.reason) : '—') },
    { label: 'Detail', cell: (w) => w.detail ?? '—' },
    {
      label: 'Response time',
      cell: (w) => (typeof w.latencyMs === 'number' ? `${Math.round(w.latencyMs)} ms` : '—'),
    },
  ];
}

/** A failed request's headers (values masked by Sluice) and the start of the answer's body. */
function exchange(w, urls) {
  if (!w.requestHeaders && w.responseBody === undefined) return null;
  const headers = Object.entries(w.requestHeaders ?? {});
  return h(
    'details',
    { class: 'exchange', open: true },
    h('summary', {}, 'Request and answer of ', webhookCell(w.webhookId, urls)),
    headers.length
      ? h(
          'dl',
          { class: 'headers' },
          headers.map(([name, value]) => [
            h('dt', {}, h('code', {}, name)),
            h('dd', {}, h('code', {}, value)),
          ]),
        )
      : null,
    w.responseBody !== undefined
      ? [
          h('p', { class: 'muted small' }, 'Response body (its start):'),
          h('pre', { class: 'response-body', 'data-testid': 'response-body' }, w.responseBody),
        ]
      : h('p', { class: 'muted small' }, 'No response body.'),
  );
}
