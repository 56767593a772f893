// Deliveries: the list filtered by user, event, type, status, outcome, source and time (shared
// with the dead letters page).

import { api, query } from './api.js';
import {
  badge,
  DAY_MS,
  errorBox,
  field,
  h,
  isoFromInput,
  link,
  localInputValue,
  OUTCOMES,
  show,
  showError,
  table,
  button,
  when,
  zoneText,
} from './dom.js';
import { hashOf } from './router.js';

const PAGE_SIZE = 50;
const CALL_TYPES = ['track', 'page', 'screen', 'identify', 'group', 'alias', 'delete'];

/** Source names by id, filled by `sourceSelect`: rows show sources by name. */
const sourceNames = new Map();

/**
 * A source filter. The chosen source is an option at once (so the first listing, made before
 * the names arrive, is already that source's); `ready` resolves once every source is listed.
 */
export function sourceSelect(selected) {
  const chosen = selected ? h('option', { value: selected, selected: true }, selected) : null;
  const select = h(
    'select',
    { name: 'sourceId' },
    h('option', { value: '' }, 'Any source'),
    chosen,
  );
  const ready = (async () => {
    try {
      for (const source of await api('GET', '/sources')) {
        sourceNames.set(source.id, source.name);
        if (source.id === selected) chosen.textContent = source.name;
        else select.append(h('option', { value: source.id }, source.name));
      }
    } catch {
      // The filter keeps what it has; the list's own call reports the problem.
    }
  })();
  return { select, ready };
}

/** A source by name (its id on hover), or its id when the name is not known. */
export function sourceCell(sourceId) {
  const name = sourceNames.get(sourceId);
  return name ? h('span', { title: sourceId }, name) : h('code', {}, sourceId);
}

/** Who a call was about: its userId, else its anonymousId (marked). */
export function userCell(d) {
  if (d.userId) return h('code', {}, d.userId);
  if (d.anonymousId)
    return [h('code', {}, d.anonymousId), h('span', { class: 'muted small' }, ' anon')];
  return '—';
}

/** That a delivery was replayed, and by which delivery (the latest); null when never. */
export function replayedMark(d) {
  if (!(d.replays > 0)) return null;
  return h(
    'span',
    { class: 'replayed small', 'data-testid': 'replayed' },
    ' replayed by ',
    d.lastReplayId
      ? link(d.lastReplayId.slice(0, 8), hashOf(['deliveries', d.lastReplayId]))
      : 'a delivery',
    d.replays > 1 ? ` (${d.replays} replays)` : '',
  );
}

/** An outcome, and whether it is a replay, or was replayed. */
export function outcomeCell(d) {
  return [
    badge(d.outcome),
    d.replayOf ? h('span', { class: 'muted small' }, ' replay') : null,
    replayedMark(d),
  ];
}

function select(name, anyText, values, selected) {
  return h(
    'select',
    { name },
    h('option', { value: '' }, anyText),
    values.map((v) => h('option', { value: v, selected: v === selected }, v)),
  );
}

const DELIVERY_COLUMNS = [
  { label: 'First attempt', cell: (d) => when(d.firstAttemptAt) },
  { label: 'Source', cell: (d) => sourceCell(d.sourceId) },
  { label: 'User', cell: userCell },
  {
    label: 'Call',
    cell: (d) => [d.type ?? '', d.event ? h('span', { class: 'event' }, ' ', d.event) : null],
  },
  { label: 'Outcome', cell: outcomeCell },
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

/** The text filters of the page, by their query name. */
const TEXT_FILTERS = [
  ['user', 'User (userId or anonymousId)'],
  ['event', 'Event'],
  ['messageId', 'Message id'],
  ['webhookUrl', 'Webhook URL'],
];

export function deliveriesPage(view, params) {
  const inputs = Object.fromEntries(
    TEXT_FILTERS.map(([name]) => [
      name,
      h('input', { type: 'search', name, maxlength: 2048, value: params.get(name) ?? '' }),
    ]),
  );
  const type = select('type', 'Any type', CALL_TYPES, params.get('type') ?? '');
  const outcome = select('outcome', 'Any outcome', OUTCOMES, params.get('outcome') ?? '');
  const status = h('input', {
    type: 'number',
    name: 'status',
    min: 100,
    max: 599,
    value: params.get('status') ?? '',
  });
  const source = sourceSelect(params.get('sourceId'));
  const destinationId = params.get('destinationId') ?? '';
  const from = h('input', {
    type: 'datetime-local',
    name: 'from',
    value: params.get('from') ?? '',
  });
  const to = h('input', { type: 'datetime-local', name: 'to', value: params.get('to') ?? '' });
  const results = h('div', { 'aria-live': 'polite', 'data-testid': 'results' });
  const search = (event) => {
    event?.preventDefault();
    const shown = {
      ...Object.fromEntries(TEXT_FILTERS.map(([name]) => [name, inputs[name].value.trim()])),
      type: type.value,
      status: status.value,
      outcome: outcome.value,
      sourceId: source.select.value,
      destinationId,
    };
    const kept = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v));
    history.replaceState(
      null,
      '',
      hashOf(['deliveries'], kept({ ...shown, from: from.value, to: to.value })),
    );
    const range = { from: isoFromInput(from.value), to: isoFromInput(to.value) };
    void listDeliveries(results, kept({ ...shown, ...range }), (d) =>
      link('Attempts', hashOf(['deliveries', d.id])),
    );
  };
  const zone = zoneText(new Date());
  const lastDay = button('Last 24 hours', () => {
    const now = Date.now();
    from.value = localInputValue(new Date(now - DAY_MS));
    to.value = localInputValue(new Date(now + 60_000));
    search();
  });
  view.append(
    h('h1', { tabindex: -1 }, 'Deliveries'),
    h(
      'form',
      { role: 'search', class: 'filters card', onsubmit: search },
      TEXT_FILTERS.map(([name, label]) => field(label, inputs[name])),
      field('Type', type),
      field('Last status', status),
      field('Outcome', outcome),
      field('Source', source.select),
      field(`First attempt from (${zone})`, from),
      field(`First attempt before (${zone})`, to),
      destinationId
        ? h('p', { class: 'muted small' }, 'Destination ', h('code', {}, destinationId))
        : null,
      h('p', { class: 'actions' }, h('button', { type: 'submit' }, 'Search'), lastDay),
    ),
    results,
  );
  // Source names first, so rows show them; the filter already holds the chosen source.
  void source.ready.then(() => search());
}

/**
 * One page of deliveries into `results`, and a button for the next. `lastCell` makes the
 * last column (a link, or a replay button); `keep` leaves rows out of the table.
 */
export async function listDeliveries(
  results,
  filters,
  lastCell,
  columns = DELIVERY_COLUMNS,
  keep = () => true,
) {
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
      rows.push(...page.items.filter(keep));
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
