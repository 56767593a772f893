// A source's destinations: the list (oldest first), a form that creates one with its filter,
// and the filter editor a destination's page shows.

import { api } from './api.js';
import { deliverySummary } from './delivery-rules.js';
import { action, errorBox, field, h, link, show, showError, table, when } from './dom.js';
import { hashOf } from './router.js';

/** The API's limit of destinations per source. */
const MAX_DESTINATIONS = 20;

export async function destinationsPage(view, sourceId) {
  const alert = errorBox();
  const body = h('div');
  view.append(h('h1', { tabindex: -1 }, 'Destinations'), alert, body);
  const path = `/sources/${encodeURIComponent(sourceId)}/destinations`;
  try {
    const source = await api('GET', `/sources/${encodeURIComponent(sourceId)}`);
    view.querySelector('h1').textContent = `Destinations of ${source.name}`;
  } catch (error) {
    return showError(alert, error);
  }
  const reload = async () => {
    try {
      const list = await api('GET', path);
      show(body, destinationTable(sourceId, list), createForm(path, list.length, reload));
    } catch (error) {
      showError(alert, error);
    }
  };
  await reload();
}

function destinationTable(sourceId, list) {
  if (!list.length) return h('p', {}, 'No destination yet.');
  const columns = [
    {
      label: 'Name',
      cell: (d) => link(d.name, hashOf(['sources', sourceId, 'destinations', d.id])),
    },
    { label: 'State', cell: (d) => (d.enabled ? 'enabled' : 'disabled') },
    { label: 'Webhooks', cell: (d) => String(d.webhooks.length) },
    {
      label: 'Filter',
      cell: (d) => (d.filter ? h('code', {}, JSON.stringify(d.filter)) : 'every call'),
    },
    { label: 'Delivery', cell: (d) => deliverySummary(d) },
    { label: 'Created', cell: (d) => when(d.createdAt) },
  ];
  return table(`Destinations, oldest first (the first is ${list[0].name})`, columns, list, (d) => ({
    'data-destination-id': d.id,
  }));
}

function createForm(path, count, reload) {
  const alert = errorBox();
  alert.dataset.testid = 'create-error';
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 200 });
  const filter = filterInput(null);
  const create = () =>
    api('POST', path, { name: name.value.trim(), filter: parseFilter(filter.value) });
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, `New destination (${count} of ${MAX_DESTINATIONS})`),
    h(
      'p',
      {},
      'Each destination takes the calls its filter matches (all of them without one), to up to five webhook URLs. It is created disabled.',
    ),
    h(
      'form',
      { onsubmit: action(alert, reload, create) },
      field('Name', name, "Unique in the source: its key in a call's integrations object."),
      field('Filter (JSON)', filter, FILTER_HINT),
      h('p', { class: 'actions' }, h('button', { type: 'submit' }, 'Create destination')),
      alert,
    ),
  );
}

const FILTER_HINT =
  'Empty takes every call. Keys: types, events, eventPrefixes, where, e.g. ' +
  '{"types":["track"],"where":{"field":"properties.total","op":"gte","value":100}}.';

function filterInput(current) {
  const input = h('textarea', { name: 'filter', rows: 6, spellcheck: 'false' });
  input.value = current ? JSON.stringify(current, null, 2) : '';
  return input;
}

/** The filter typed in a form: null when empty; a typing mistake is said before any call. */
function parseFilter(text) {
  const raw = text.trim();
  if (!raw) return null;
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new Error(`The filter is not JSON: ${error.message}`, { cause: error });
  }
}

/** A destination's filter, editable: the API's answer to a bad one is shown under it. */
export function filterSection(destination, path, reload) {
  const alert = errorBox();
  alert.dataset.testid = 'filter-error';
  const input = filterInput(destination.filter);
  const save = () => api('PATCH', path, { filter: parseFilter(input.value) });
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Filter'),
    h(
      'p',
      { 'data-testid': 'filter-state' },
      destination.filter ? 'Takes only the calls this filter matches.' : 'Takes every call.',
    ),
    h(
      'form',
      { onsubmit: action(alert, reload, save) },
      field('Filter (JSON)', input, FILTER_HINT),
      h('p', { class: 'actions' }, h('button', { type: 'submit' }, 'Save filter')),
      alert,
    ),
  );
}
