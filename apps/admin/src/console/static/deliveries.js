// Deliveries: the filtered list (shared with the dead letters page) and one delivery's attempts.

import { api, query } from './api.js';
import {
  badge,
  button,
  errorBox,
  facts,
  field,
  h,
  link,
  OUTCOMES,
  show,
  showError,
  table,
  when,
} from './dom.js';
import { rowReplay } from './replay.js';
import { hashOf } from './router.js';

const PAGE_SIZE = 50;

/** Source names by id, for the filters. */
export async function sourceOptions(select, selected) {
  try {
    const sources = await api('GET', '/sources');
    for (const source of sources) {
      select.append(
        h(
          'option',
          { value: source.id, selected: source.id === selected },
          `${source.name} (${source.id.slice(0, 8)})`,
        ),
      );
    }
  } catch {
    // The filter keeps "Any source"; the list's own call reports the problem.
  }
}

function outcomeSelect(selected) {
  return h(
    'select',
    { name: 'outcome' },
    h('option', { value: '' }, 'Any outcome'),
    OUTCOMES.map((o) => h('option', { value: o, selected: o === selected }, o)),
  );
}

const DELIVERY_COLUMNS = [
  { label: 'First attempt', cell: (d) => when(d.firstAttemptAt) },
  { label: 'Message id', cell: (d) => h('code', {}, d.messageId) },
  {
    label: 'Call',
    cell: (d) => [d.type ?? '', d.event ? h('span', { class: 'event' }, ' ', d.event) : null],
  },
  {
    label: 'Outcome',
    cell: (d) => [
      badge(d.outcome),
      d.replayOf ? h('span', { class: 'muted small' }, ' replay') : null,
    ],
  },
  { label: 'Attempts', cell: (d) => String(d.attempts ?? '—') },
  {
    label: 'Last status',
    cell: (d) => (d.lastStatus === null || d.lastStatus === undefined ? '—' : String(d.lastStatus)),
  },
  {
    label: 'Reason / detail',
    cell: (d) => [
      d.reason ? h('code', {}, d.reason) : null,
      d.reason && d.lastDetail ? ' ' : null,
      d.lastDetail ?? (d.reason ? null : '—'),
    ],
  },
  { label: 'Next attempt', cell: (d) => (d.outcome === 'retrying' ? when(d.nextAttemptAt) : '—') },
  { label: 'Details', cell: (d) => link('Attempts', hashOf(['deliveries', d.id])) },
];

export function deliveriesPage(view, params) {
  const messageId = h('input', {
    type: 'search',
    name: 'messageId',
    maxlength: 200,
    value: params.get('messageId') ?? '',
  });
  const outcome = outcomeSelect(params.get('outcome') ?? '');
  const source = h('select', { name: 'sourceId' }, h('option', { value: '' }, 'Any source'));
  void sourceOptions(source, params.get('sourceId'));
  const results = h('div', { 'aria-live': 'polite', 'data-testid': 'results' });
  const search = (event) => {
    event?.preventDefault();
    const filters = {
      messageId: messageId.value.trim(),
      outcome: outcome.value,
      sourceId: source.value,
    };
    history.replaceState(
      null,
      '',
      hashOf(['deliveries'], Object.fromEntries(Object.entries(filters).filter(([, v]) => v))),
    );
    void listDeliveries(results, filters, (d) => link('Attempts', hashOf(['deliveries', d.id])));
  };
  view.append(
    h('h1', { tabindex: -1 }, 'Deliveries'),
    h(
      'form',
      { role: 'search', class: 'filters card', onsubmit: search },
      field('Message id', messageId),
      field('Outcome', outcome),
      field('Source', source),
      h('button', { type: 'submit' }, 'Search'),
    ),
    results,
  );
  search();
}

/**
 * One page of deliveries into `results`, and a button for the next. `lastCell` makes the
 * last column (a link, or a replay button).
 */
export async function listDeliveries(results, filters, lastCell, columns = DELIVERY_COLUMNS) {
  results.setAttribute('aria-busy', 'true');
  show(results, h('p', {}, 'Loading…'));
  const cols = [...columns.slice(0, -1), { label: columns.at(-1).label, cell: lastCell }];
  const rows = [];
  const more = async (cursor) => {
    results.setAttribute('aria-busy', 'true');
    try {
      const page = await api(
        'GET',
        `/deliveries${query({ ...filters, limit: PAGE_SIZE, cursor })}`,
      );
      rows.push(...page.items);
      const next = page.nextCursor ? button('Load more', () => more(page.nextCursor)) : null;
      show(
        results,
        rows.length
          ? table('Deliveries', cols, rows, (d) => ({
              'data-delivery-id': d.id,
              'data-message-id': d.messageId,
            }))
          : h('p', {}, 'No delivery matches.'),
        h('p', { class: 'muted' }, `${rows.length} shown${page.nextCursor ? '; more match' : ''}.`),
        next,
      );
    } catch (error) {
      show(results, errorBox());
      showError(results.firstChild, error);
    }
    results.removeAttribute('aria-busy');
  };
  await more(undefined);
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
  show(
    body,
    h(
      'section',
      { class: 'card' },
      facts([
        ['Outcome', badge(delivery.outcome)],
        ['Message id', h('code', {}, delivery.messageId)],
        [
          'Call',
          [
            delivery.type ?? '',
            delivery.event ? h('span', { class: 'event' }, ' ', delivery.event) : null,
          ],
        ],
        ['Reason', delivery.reason ? h('code', {}, delivery.reason) : null],
        [
          'Last status',
          typeof delivery.lastStatus === 'number' ? String(delivery.lastStatus) : null,
        ],
        ['Last detail', delivery.lastDetail],
        [
          'Last latency',
          typeof delivery.lastLatencyMs === 'number'
            ? `${Math.round(delivery.lastLatencyMs)} ms`
            : null,
        ],
        ['Attempts', String(delivery.attempts)],
        ['First attempt', when(delivery.firstAttemptAt)],
        ['Next attempt', delivery.outcome === 'retrying' ? when(delivery.nextAttemptAt) : null],
        ['Updated', when(delivery.updatedAt)],
        ['Source', link(delivery.sourceId, hashOf(['sources', delivery.sourceId]))],
        [
          'Destination',
          delivery.destinationName
            ? [delivery.destinationName, ' ', h('code', {}, delivery.destinationId)]
            : h('code', {}, delivery.destinationId),
        ],
        ['Delivery id', h('code', {}, delivery.id)],
        [
          'Replay of',
          delivery.replayOf
            ? link(delivery.replayOf, hashOf(['deliveries', delivery.replayOf]))
            : null,
        ],
        ['Replays', String(delivery.replays ?? 0)],
        [
          'Dead letter',
          delivery.deadLetter
            ? `partition ${delivery.deadLetter.partition}, offset ${delivery.deadLetter.offset}`
            : null,
        ],
      ]),
      h(
        'p',
        { class: 'actions' },
        delivery.outcome === 'dead' ? rowReplay(delivery) : null,
        link(
          'Every delivery of this message id',
          hashOf(['deliveries'], { messageId: delivery.messageId }),
        ),
      ),
    ),
    h('section', { class: 'card' }, h('h2', {}, 'Attempts'), attemptsList(delivery.history ?? [])),
  );
}

function attemptsList(history) {
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
          entry.lastStatus !== undefined && entry.lastStatus !== null
            ? ` · HTTP ${entry.lastStatus}`
            : '',
          entry.reason ? [' · ', h('code', {}, entry.reason)] : '',
          entry.nextAttemptAt ? [' · next attempt ', when(entry.nextAttemptAt)] : '',
        ),
        entry.webhooks?.length
          ? table('Webhooks of this attempt', WEBHOOK_ATTEMPT_COLUMNS, entry.webhooks)
          : h('p', { class: 'muted small' }, 'No webhook was called.'),
      ),
    ),
  );
}

const WEBHOOK_ATTEMPT_COLUMNS = [
  { label: 'Webhook', cell: (w) => h('code', {}, w.webhookId) },
  { label: 'Result', cell: (w) => w.kind },
  {
    label: 'Status',
    cell: (w) => (w.status === undefined || w.status === null ? '—' : String(w.status)),
  },
  { label: 'Reason', cell: (w) => (w.reason ? h('code', {}, w.reason) : '—') },
  { label: 'Detail', cell: (w) => w.detail ?? '—' },
  {
    label: 'Latency',
    cell: (w) => (typeof w.latencyMs === 'number' ? `${Math.round(w.latencyMs)} ms` : '—'),
  },
];
