// Sources: the list and a new source, one source's details, write key rotation and usage.

import { api, query } from './api.js';
import { barChart } from './chart.js';
import {
  button,
  DAY_MS,
  errorBox,
  facts,
  field,
  h,
  link,
  show,
  showError,
  table,
  when,
} from './dom.js';
import { hashOf } from './router.js';

const USAGE_DAYS = 30;

export async function sourcesPage(view) {
  const list = h('div', { 'aria-live': 'polite' }, h('p', {}, 'Loading…'));
  const created = h('div', { role: 'status' });
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 200 });
  const alert = errorBox();
  const form = h(
    'form',
    {
      class: 'inline-form',
      onsubmit: async (e) => {
        e.preventDefault();
        alert.hidden = true;
        try {
          const source = await api('POST', '/sources', { name: name.value.trim() });
          name.value = '';
          show(created, writeKeyPanel(`Source “${source.name}” created.`, source));
          await loadSources(list);
        } catch (error) {
          showError(alert, error);
        }
      },
    },
    field('Name', name),
    h('button', { type: 'submit' }, 'Create source'),
  );
  view.append(
    h('h1', { tabindex: -1 }, 'Sources'),
    h('section', { class: 'card' }, h('h2', {}, 'New source'), form, alert, created),
    h('section', {}, h('h2', {}, 'All sources'), list),
  );
  await loadSources(list);
}

/** A write key just made: shown this once. */
function writeKeyPanel(headline, source) {
  return h(
    'div',
    { class: 'notice' },
    h('p', {}, headline, ' Its write key is shown only now; rotate it to get a new one.'),
    h(
      'p',
      {},
      h('span', { id: 'write-key-label' }, 'Write key: '),
      h(
        'code',
        { class: 'secret', 'data-testid': 'write-key', 'aria-labelledby': 'write-key-label' },
        source.writeKey,
      ),
    ),
  );
}

async function loadSources(list) {
  try {
    const sources = await api('GET', '/sources');
    if (!sources.length) return show(list, h('p', {}, 'No sources yet.'));
    show(
      list,
      table('Sources', SOURCE_COLUMNS, sources, (source) => ({ 'data-source-id': source.id })),
    );
  } catch (error) {
    show(list, errorBox());
    showError(list.firstChild, error);
  }
}

const SOURCE_COLUMNS = [
  { label: 'Name', cell: (src) => link(src.name, hashOf(['sources', src.id])) },
  { label: 'Id', cell: (src) => h('code', {}, src.id) },
  { label: 'State', cell: (src) => (src.enabled ? 'enabled' : 'disabled') },
  { label: 'Created', cell: (src) => when(src.createdAt) },
  {
    label: 'Pages',
    cell: (src) =>
      h(
        'span',
        { class: 'actions' },
        link('Destination', hashOf(['sources', src.id, 'destination'])),
        link('All destinations', hashOf(['sources', src.id, 'destinations'])),
        link('Deliveries', hashOf(['deliveries'], { sourceId: src.id })),
      ),
  },
];

export async function sourcePage(view, sourceId) {
  const alert = errorBox();
  view.append(h('h1', { tabindex: -1 }, 'Source'), alert);
  let source;
  try {
    source = await api('GET', `/sources/${encodeURIComponent(sourceId)}`);
  } catch (error) {
    return showError(alert, error);
  }
  view.querySelector('h1').textContent = `Source: ${source.name}`;
  const details = h('div');
  const renderDetails = (src) =>
    show(
      details,
      facts([
        ['Id', h('code', {}, src.id)],
        ['State', src.enabled ? 'enabled' : 'disabled'],
        ['Created', when(src.createdAt)],
        ['Updated', when(src.updatedAt)],
      ]),
      h(
        'p',
        { class: 'actions' },
        link('First destination', hashOf(['sources', src.id, 'destination'])),
        link('All destinations', hashOf(['sources', src.id, 'destinations'])),
        link('Deliveries', hashOf(['deliveries'], { sourceId: src.id })),
        link('Dead letters', hashOf(['dead'], { sourceId: src.id })),
        button(src.enabled ? 'Disable source' : 'Enable source', async () => {
          try {
            source = await api('PATCH', `/sources/${encodeURIComponent(src.id)}`, {
              enabled: !src.enabled,
            });
            renderDetails(source);
          } catch (error) {
            showError(alert, error);
          }
        }),
      ),
    );
  renderDetails(source);
  const chart = h('div', {}, h('p', {}, 'Loading…'));
  view.append(
    h('section', { class: 'card' }, details),
    h('section', { class: 'card' }, h('h2', {}, 'Write key'), rotation(source)),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, `Calls accepted per day (UTC), last ${USAGE_DAYS} days`),
      chart,
    ),
  );
  await loadUsage(chart, source.id);
}

/** Write key rotation, confirmed in a second step. */
function rotation(source) {
  const box = h('div');
  const alert = errorBox();
  const ask = () =>
    show(
      box,
      h(
        'p',
        {},
        'Write keys are shown only when they are made. Rotating makes a new one; the current key stops working at once.',
      ),
      button('Rotate write key', confirm),
    );
  const confirm = () => {
    const yes = button('Rotate now', rotate, { class: 'danger' });
    show(
      box,
      h('p', {}, 'Clients still using the current key will be refused from now on.'),
      h('p', { class: 'actions' }, yes, button('Cancel', ask)),
    );
    yes.focus();
  };
  const rotate = async () => {
    try {
      const rotated = await api('POST', `/sources/${encodeURIComponent(source.id)}/write-key`);
      show(
        box,
        writeKeyPanel('The write key was rotated.', rotated),
        button('Rotate again', confirm),
      );
    } catch (error) {
      showError(alert, error);
    }
  };
  ask();
  return h('div', {}, box, alert);
}

/** The last USAGE_DAYS UTC days, with days the API did not list as 0. */
function usageDays(rows, today = new Date()) {
  const counts = new Map(rows.map((row) => [row.day, row.calls]));
  const days = [];
  for (let i = USAGE_DAYS - 1; i >= 0; i -= 1) {
    const day = new Date(today.getTime() - i * DAY_MS).toISOString().slice(0, 10);
    days.push({ label: day, value: counts.get(day) ?? 0 });
  }
  return days;
}

async function loadUsage(box, sourceId) {
  const today = new Date();
  const from = new Date(today.getTime() - (USAGE_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
  try {
    const usage = await api(
      'GET',
      `/sources/${encodeURIComponent(sourceId)}/usage${query({ from, to: today.toISOString().slice(0, 10) })}`,
    );
    const days = usageDays(usage.days, today);
    const total = days.reduce((sum, d) => sum + d.value, 0);
    show(
      box,
      barChart(days, `Calls accepted per day, ${days[0].label} to ${days.at(-1).label}`, 'calls'),
      h('p', {}, `${total.toLocaleString('en')} calls in ${USAGE_DAYS} days.`),
      h(
        'details',
        {},
        h('summary', {}, 'As a table'),
        table(
          'Calls per day',
          [
            { label: 'Day', cell: (d) => d.label },
            { label: 'Calls', cell: (d) => d.value.toLocaleString('en') },
          ],
          days.filter((d) => d.value > 0),
        ),
      ),
    );
  } catch (error) {
    show(box, errorBox());
    showError(box.firstChild, error);
  }
}
