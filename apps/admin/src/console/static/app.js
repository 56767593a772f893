// Sluice operator console: one ES module, no framework, no build step, nothing fetched from
// anywhere but this admin app. Every value that comes from the API reaches the page as text
// (text nodes, textContent, attribute values): never as HTML.

const TOKEN_KEY = 'sluice.console.token';
const API = '/admin/v1';
const SVG_NS = 'http://www.w3.org/2000/svg';
/** How often the live view reads the rates. */
const LIVE_POLL_MS = 5_000;
/** How often a running bulk replay's progress is read. */
const REPLAY_POLL_MS = 1_000;
/** Samples the live view's small charts keep. */
const LIVE_SAMPLES = 30;
const USAGE_DAYS = 30;
const DAY_MS = 86_400_000;
const OUTCOMES = ['delivered', 'retrying', 'dead', 'discarded'];
/** The API's limits: webhooks per destination, static headers per webhook. */
const MAX_WEBHOOKS = 5;
const MAX_HEADERS = 5;
const PAGE_SIZE = 50;

const main = document.getElementById('main');
const nav = document.getElementById('nav');

/** The admin token of this tab: in memory, and in sessionStorage once the API accepted it. */
let token = sessionStorage.getItem(TOKEN_KEY);
/** Stops the timers of the page on show; called when another page replaces it. */
let cleanups = [];

// ------------------------------------------------------------------ DOM helpers

/** An element; strings among the children become text nodes. */
function h(tag, props = {}, ...children) {
  return fill(document.createElement(tag), props, children);
}

/** An SVG element, the same way. */
function s(tag, props = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), props, children);
}

function fill(el, props, children) {
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child !== undefined && child !== null && child !== false) el.append(child);
  }
  return el;
}

/** Replaces an element's content. */
function show(el, ...children) {
  el.replaceChildren();
  return fill(el, {}, children);
}

/** A labelled form control; `control` gets the id the label points at. */
function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  const hintEl = hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}

function button(text, onclick, props = {}) {
  return h('button', { type: 'button', onclick, ...props }, text);
}

/** A table whose cells carry their column's name, for the stacked layout on narrow screens. */
function table(caption, columns, rows, rowProps = () => ({})) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'rows' },
      h('caption', { class: 'visually-hidden' }, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((c) => h('th', { scope: 'col' }, c.label)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((row) =>
          h(
            'tr',
            rowProps(row),
            columns.map((c) => h('td', { 'data-label': c.label }, h('div', {}, c.cell(row)))),
          ),
        ),
      ),
    ),
  );
}

function badge(outcome) {
  return h(
    'span',
    { class: `badge badge-${OUTCOMES.includes(outcome) ? outcome : 'other'}` },
    outcome ?? '—',
  );
}

/** A definition list of [term, value] pairs. */
function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs.map(([term, value]) => [h('dt', {}, term), h('dd', {}, value ?? '—')]),
  );
}

function pad2(n) {
  return String(n).padStart(2, '0');
}

/** Local time as `YYYY-MM-DD HH:MM:SS`. */
function localText(date) {
  return (
    `${date.getFullYear()}-${pad2(date.getMonth() + 1)}-${pad2(date.getDate())} ` +
    `${pad2(date.getHours())}:${pad2(date.getMinutes())}:${pad2(date.getSeconds())}`
  );
}

/** A time from the API, shown in local time with the exact value on hover. */
function when(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return h('time', { datetime: iso, title: iso }, localText(date));
}

/** A `datetime-local` input's value for a time. */
function localInputValue(date) {
  return `${localText(date).slice(0, 10)}T${pad2(date.getHours())}:${pad2(date.getMinutes())}`;
}

/** ISO 8601 from a `datetime-local` value, or undefined when empty or invalid. */
function isoFromInput(value) {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function errorBox() {
  return h('p', { class: 'error', role: 'alert', hidden: true });
}

function showError(box, error) {
  box.hidden = false;
  show(box, describeError(error));
}

function describeError(error) {
  if (error instanceof ApiError) return `${error.message} (${error.code}, HTTP ${error.status})`;
  return String(error?.message ?? error);
}

function link(text, hash) {
  return h('a', { href: hash }, text);
}

/** `#/path?query`, with each path part encoded. */
function hashOf(parts, params) {
  const path = `#/${parts.map(encodeURIComponent).join('/')}`;
  const query = params ? new URLSearchParams(params).toString() : '';
  return query ? `${path}?${query}` : path;
}

// ------------------------------------------------------------------ the admin API

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** One call to the admin API with `bearer`; throws ApiError for anything but 2xx. */
async function request(method, path, body, bearer) {
  const headers = { authorization: `Bearer ${bearer}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(API + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, 'network_error', 'the admin API cannot be reached');
  }
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    throw new ApiError(
      res.status,
      typeof json?.code === 'string' ? json.code : `http_${res.status}`,
      typeof json?.message === 'string' ? json.message : text.slice(0, 200) || res.statusText,
    );
  }
  return json;
}

/** A call with the tab's token; a refused token signs the tab out. */
async function api(method, path, body) {
  try {
    return await request(method, path, body, token);
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      signOut(`The admin API no longer accepts the token (${error.message}). Sign in again.`);
    }
    throw error;
  }
}

function query(params) {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') q.set(name, String(value));
  }
  const text = q.toString();
  return text ? `?${text}` : '';
}

// ------------------------------------------------------------------ routing and sign-in

const PAGES = [
  { match: ['sources'], nav: 'sources', render: sourcesPage },
  { match: ['sources', '*'], nav: 'sources', render: sourcePage },
  { match: ['sources', '*', 'destination'], nav: 'sources', render: destinationPage },
  { match: ['deliveries'], nav: 'deliveries', render: deliveriesPage },
  { match: ['deliveries', '*'], nav: 'deliveries', render: deliveryPage },
  { match: ['dead'], nav: 'dead', render: deadLettersPage },
  { match: ['live'], nav: 'live', render: livePage },
];

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, search = ''] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(safeDecode);
  return { parts: parts.length ? parts : ['sources'], params: new URLSearchParams(search) };
}

function safeDecode(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** A new, empty view in `main`; pages render into it, so a late answer lands nowhere. */
function newView() {
  for (const stop of cleanups) stop();
  cleanups = [];
  const view = h('div', { class: 'view' });
  show(main, view);
  return view;
}

function route() {
  if (!token) return loginPage();
  nav.hidden = false;
  const { parts, params } = parseHash();
  const page = PAGES.find(
    (p) => p.match.length === parts.length && p.match.every((m, i) => m === '*' || m === parts[i]),
  );
  for (const a of nav.querySelectorAll('a')) {
    if (a.dataset.page === page?.nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const view = newView();
  if (!page) {
    view.append(h('h1', { tabindex: -1 }, 'Not found'), h('p', {}, link('Sources', '#/sources')));
  } else {
    const ids = parts.filter((_, i) => page.match[i] === '*');
    page.render(view, ...ids, params);
  }
  view.querySelector('h1')?.focus();
}

function loginPage(message) {
  nav.hidden = true;
  const view = newView();
  const input = h('input', {
    type: 'password',
    name: 'token',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
  });
  const alert = errorBox();
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { class: 'card narrow', onsubmit: (e) => signIn(e, input, submit, alert) },
    field(
      'Admin token',
      input,
      "One of the admin app's ADMIN_TOKENS. It is sent only to this admin app and kept in " +
        "this tab's session storage until you sign out or close the tab.",
    ),
    submit,
    alert,
  );
  view.append(h('h1', { tabindex: -1 }, 'Sign in'), form);
  if (message) showError(alert, message);
  input.focus();
}

async function signIn(event, input, submit, alert) {
  event.preventDefault();
  const candidate = input.value.trim();
  if (!candidate) return showError(alert, 'Enter the admin token.');
  submit.disabled = true;
  try {
    // Any call that needs the token tells whether it is accepted; nothing is kept before.
    await request('GET', '/sources', undefined, candidate);
  } catch (error) {
    submit.disabled = false;
    input.value = '';
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      return showError(
        alert,
        `The admin API refused this token (HTTP ${error.status}: ${error.message}). ` +
          'Nothing was stored; check the token and try again.',
      );
    }
    return showError(alert, `Could not sign in: ${describeError(error)}`);
  }
  token = candidate;
  sessionStorage.setItem(TOKEN_KEY, candidate);
  route();
}

function signOut(message) {
  token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  loginPage(message);
}

// ------------------------------------------------------------------ sources

async function sourcesPage(view) {
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
        link('Deliveries', hashOf(['deliveries'], { sourceId: src.id })),
      ),
  },
];

async function sourcePage(view, sourceId) {
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
        link('Destination', hashOf(['sources', src.id, 'destination'])),
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

/**
 * An inline SVG bar chart that stretches to its box (CSS sets the height); its labels are
 * HTML around it, so they keep their size on any screen. Each bar tells its label and value
 * to pointers and screen readers. With more `slots` than points, the points fill the
 * right-hand end (the latest at the edge).
 */
function barChart(points, title, unit, { labels = true, slots = points.length } = {}) {
  const width = 1000;
  const height = 100;
  const max = Math.max(0, ...points.map((p) => p.value));
  const first = Math.max(0, slots - points.length);
  const slot = width / Math.max(1, slots, points.length);
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`,
    preserveAspectRatio: 'none',
    class: 'chart',
    role: 'img',
    'aria-label': `${title}; highest ${max.toLocaleString('en')} ${unit}`,
  });
  svg.append(s('title', {}, title));
  points.forEach((p, i) => {
    const barHeight = max === 0 ? 0 : Math.max(p.value > 0 ? 1 : 0, (height * p.value) / max);
    svg.append(
      s(
        'rect',
        {
          x: ((first + i) * slot + slot * 0.1).toFixed(1),
          y: (height - barHeight).toFixed(1),
          width: (slot * 0.8).toFixed(1),
          height: barHeight.toFixed(1),
          class: 'bar',
        },
        s('title', {}, `${p.label}: ${p.value.toLocaleString('en')} ${unit}`),
      ),
    );
  });
  if (!labels) return h('figure', { class: 'chart-box' }, svg);
  return h(
    'figure',
    { class: 'chart-box' },
    h('figcaption', { class: 'chart-max muted small' }, `${max.toLocaleString('en')} ${unit}`),
    svg,
    points.length
      ? h(
          'div',
          { class: 'chart-axis muted small', 'aria-hidden': 'true' },
          h('span', {}, points[0].label),
          h('span', {}, points.at(-1).label),
        )
      : null,
  );
}

// ------------------------------------------------------------------ a source's destination

async function destinationPage(view, sourceId) {
  const alert = errorBox();
  const body = h('div');
  view.append(h('h1', { tabindex: -1 }, 'Destination'), alert, body);
  const path = `/sources/${encodeURIComponent(sourceId)}/destination`;
  const reload = async () => {
    try {
      show(body, renderDestination(await api('GET', path), path, reload, alert));
    } catch (error) {
      if (error instanceof ApiError && error.code === 'destination_not_found') {
        show(body, createDestinationForm(path, reload, alert));
      } else {
        showError(alert, error);
      }
    }
  };
  try {
    const source = await api('GET', `/sources/${encodeURIComponent(sourceId)}`);
    view.querySelector('h1').textContent = `Destination of ${source.name}`;
  } catch (error) {
    return showError(alert, error);
  }
  await reload();
}

/** Runs an API call for a button or form, shows its error, then reloads the page's data. */
function action(alert, reload, call) {
  return async (event) => {
    event?.preventDefault?.();
    alert.hidden = true;
    try {
      await call();
      await reload();
    } catch (error) {
      showError(alert, error);
    }
  };
}

function createDestinationForm(path, reload, alert) {
  const name = h('input', {
    type: 'text',
    name: 'name',
    required: true,
    maxlength: 200,
    value: 'Webhooks',
  });
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'No destination yet'),
    h(
      'p',
      {},
      'A source sends its calls to one webhooks destination: up to five URLs, signed with a shared secret when one is set. It is created disabled.',
    ),
    h(
      'form',
      {
        class: 'inline-form',
        onsubmit: action(alert, reload, () =>
          api('POST', path, { name: name.value.trim(), kind: 'webhooks' }),
        ),
      },
      field('Destination name', name),
      h('button', { type: 'submit' }, 'Create webhooks destination'),
    ),
  );
}

function renderDestination(destination, path, reload, alert) {
  const toggle = destination.enabled
    ? button(
        'Disable',
        action(alert, reload, () => api('POST', `${path}/disable`)),
      )
    : button(
        'Enable',
        action(alert, reload, () => api('POST', `${path}/enable`)),
      );
  return [
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Settings'),
      facts([
        ['Name', destination.name],
        ['Id', h('code', {}, destination.id)],
        ['Kind', destination.kind],
        [
          'State',
          h(
            'span',
            { 'data-testid': 'destination-state' },
            destination.enabled ? 'enabled' : 'disabled',
          ),
        ],
        ['Updated', when(destination.updatedAt)],
      ]),
      h(
        'p',
        { class: 'actions' },
        toggle,
        link('Deliveries', hashOf(['deliveries'], { sourceId: destination.sourceId })),
        link('Dead letters', hashOf(['dead'], { sourceId: destination.sourceId })),
      ),
    ),
    secretSection(destination, path, reload, alert),
    webhooksSection(destination, path, reload, alert),
  ];
}

function secretSection(destination, path, reload, alert) {
  const secret = h('input', {
    type: 'password',
    name: 'sharedSecret',
    autocomplete: 'new-password',
    required: true,
    maxlength: 1024,
  });
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Shared secret'),
    h(
      'p',
      { 'data-testid': 'secret-state' },
      destination.sharedSecretSet
        ? 'A shared secret is set: every POST carries X-Signature (HMAC-SHA1 of the body).'
        : 'No shared secret is set: POSTs are not signed.',
    ),
    h(
      'form',
      {
        class: 'inline-form',
        onsubmit: action(alert, reload, () =>
          api('PUT', `${path}/shared-secret`, { sharedSecret: secret.value }),
        ),
      },
      field(
        destination.sharedSecretSet ? 'Replace the shared secret' : 'Shared secret',
        secret,
        'Never shown again, not even here.',
      ),
      h('button', { type: 'submit' }, 'Set secret'),
      destination.sharedSecretSet
        ? button(
            'Remove secret',
            action(alert, reload, () => api('DELETE', `${path}/shared-secret`)),
            { class: 'danger' },
          )
        : null,
    ),
  );
}

function webhooksSection(destination, path, reload, alert) {
  const editor = h('div');
  const openEditor = (webhook) => {
    show(
      editor,
      webhookForm(webhook, path, reload, alert, () => show(editor)),
    );
    editor.querySelector('input')?.focus();
  };
  const items = destination.webhooks.map((webhook, i) =>
    h(
      'li',
      { class: 'webhook', 'data-webhook-id': webhook.id },
      h(
        'p',
        {},
        h('span', { class: 'muted' }, `Webhook ${i + 1}: `),
        h('code', { class: 'url' }, webhook.url),
      ),
      headerList(webhook.headers),
      h('p', { class: 'muted small' }, 'Id ', h('code', {}, webhook.id)),
      h(
        'p',
        { class: 'actions' },
        button('Edit', () => openEditor(webhook), { 'aria-label': `Edit webhook ${i + 1}` }),
        button(
          'Remove',
          action(alert, reload, () =>
            api('DELETE', `${path}/webhooks/${encodeURIComponent(webhook.id)}`),
          ),
          { class: 'danger', 'aria-label': `Remove webhook ${i + 1}` },
        ),
      ),
    ),
  );
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, `Webhooks (${destination.webhooks.length} of ${MAX_WEBHOOKS})`),
    items.length
      ? h('ol', { class: 'webhooks' }, items)
      : h('p', {}, 'No webhook yet: add one before enabling.'),
    destination.webhooks.length < MAX_WEBHOOKS
      ? button('Add webhook', () => openEditor(null))
      : null,
    editor,
  );
}

function headerList(headers) {
  const entries = Object.entries(headers ?? {});
  if (!entries.length) return h('p', { class: 'muted small' }, 'No static headers.');
  return h(
    'dl',
    { class: 'headers' },
    entries.map(([name, value]) => [h('dt', {}, name), h('dd', {}, h('code', {}, value))]),
  );
}

/** Adds a webhook, or edits one in place (it keeps its id). */
function webhookForm(webhook, path, reload, alert, close) {
  const url = h('input', {
    type: 'url',
    name: 'url',
    required: true,
    maxlength: 2048,
    value: webhook?.url ?? '',
    placeholder: 'https://example.com/hooks/sluice',
  });
  const existing = Object.entries(webhook?.headers ?? {});
  const rows = Array.from({ length: MAX_HEADERS }, (_, i) => ({
    name: h('input', {
      type: 'text',
      name: `header-name-${i}`,
      value: existing[i]?.[0] ?? '',
      autocomplete: 'off',
    }),
    value: h('input', {
      type: 'text',
      name: `header-value-${i}`,
      value: existing[i]?.[1] ?? '',
      autocomplete: 'off',
    }),
  }));
  const submit = async () => {
    const headers = {};
    for (const row of rows) {
      if (row.name.value.trim()) headers[row.name.value.trim()] = row.value.value;
    }
    const body = { url: url.value.trim(), headers };
    if (webhook) await api('PATCH', `${path}/webhooks/${encodeURIComponent(webhook.id)}`, body);
    else await api('POST', `${path}/webhooks`, body);
  };
  return h(
    'form',
    { class: 'card inset', onsubmit: action(alert, reload, submit) },
    h('h3', {}, webhook ? 'Edit webhook' : 'New webhook'),
    field('URL', url),
    h(
      'fieldset',
      {},
      h('legend', {}, `Static headers (up to ${MAX_HEADERS})`),
      rows.map((row, i) =>
        h(
          'div',
          { class: 'header-row' },
          field(`Header ${i + 1} name`, row.name),
          field(`Header ${i + 1} value`, row.value),
        ),
      ),
    ),
    h(
      'p',
      { class: 'actions' },
      h('button', { type: 'submit' }, 'Save webhook'),
      button('Cancel', close),
    ),
  );
}

// ------------------------------------------------------------------ deliveries

/** Source names by id, for the filters. */
async function sourceOptions(select, selected) {
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

function deliveriesPage(view, params) {
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
async function listDeliveries(results, filters, lastCell, columns = DELIVERY_COLUMNS) {
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

async function deliveryPage(view, deliveryId) {
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
        ['Destination', h('code', {}, delivery.destinationId)],
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

/** Replays one dead delivery; the answer (the new delivery) or the refusal goes to `status`. */
function replayButton(delivery, status) {
  const replay = button(
    'Replay',
    async () => {
      replay.disabled = true;
      try {
        const answer = await api('POST', `/deliveries/${encodeURIComponent(delivery.id)}/replay`);
        show(
          status,
          h('span', { class: 'ok' }, 'Replayed as '),
          link(answer.deliveryId, hashOf(['deliveries', answer.deliveryId])),
        );
      } catch (error) {
        show(status, h('span', { class: 'error' }, describeError(error)));
      } finally {
        replay.disabled = false;
      }
    },
    { 'aria-label': `Replay message ${delivery.messageId}` },
  );
  return replay;
}

// ------------------------------------------------------------------ dead letters

const DEAD_COLUMNS = [
  { label: 'First attempt', cell: (d) => when(d.firstAttemptAt) },
  { label: 'Message id', cell: (d) => link(d.messageId, hashOf(['deliveries', d.id])) },
  {
    label: 'Call',
    cell: (d) => [d.type ?? '', d.event ? h('span', { class: 'event' }, ' ', d.event) : null],
  },
  { label: 'Reason', cell: (d) => (d.reason ? h('code', {}, d.reason) : '—') },
  {
    label: 'Last status',
    cell: (d) => (d.lastStatus === null || d.lastStatus === undefined ? '—' : String(d.lastStatus)),
  },
  { label: 'Detail', cell: (d) => d.lastDetail ?? '—' },
  { label: 'Attempts', cell: (d) => String(d.attempts ?? '—') },
  { label: 'Replays', cell: (d) => String(d.replays ?? 0) },
  { label: 'Replay', cell: () => null },
];

function deadLettersPage(view, params) {
  const now = new Date();
  const source = h('select', { name: 'sourceId' }, h('option', { value: '' }, 'Any source'));
  void sourceOptions(source, params.get('sourceId'));
  const reason = h('input', {
    type: 'text',
    name: 'reason',
    placeholder: 'e.g. http_4xx',
    value: params.get('reason') ?? '',
    autocomplete: 'off',
  });
  const from = h('input', {
    type: 'datetime-local',
    name: 'from',
    value: params.get('from') ?? localInputValue(new Date(now.getTime() - DAY_MS)),
  });
  const to = h('input', {
    type: 'datetime-local',
    name: 'to',
    value: params.get('to') ?? localInputValue(new Date(now.getTime() + 60_000)),
  });
  const results = h('div', { 'aria-live': 'polite', 'data-testid': 'results' });
  const filters = () => ({
    outcome: 'dead',
    sourceId: source.value,
    reason: reason.value.trim(),
    from: isoFromInput(from.value),
    to: isoFromInput(to.value),
  });
  const list = (event) => {
    event?.preventDefault();
    const hashParams = {
      sourceId: source.value,
      reason: reason.value.trim(),
      from: from.value,
      to: to.value,
    };
    history.replaceState(
      null,
      '',
      hashOf(['dead'], Object.fromEntries(Object.entries(hashParams).filter(([, v]) => v))),
    );
    void listDeliveries(results, filters(), (d) => rowReplay(d), DEAD_COLUMNS);
  };
  const bulk = h('section', { class: 'card' });
  view.append(
    h('h1', { tabindex: -1 }, 'Dead letters'),
    h(
      'p',
      {},
      'Deliveries that no webhook took: permanent refusals, or the retry window closed. Replaying one sends its original bytes again with a fresh retry window; the receiver sees the same messageId with a new signature.',
    ),
    h(
      'form',
      { class: 'filters card', onsubmit: list },
      field('Source', source),
      field('Reason', reason),
      field('First attempt from', from),
      field('First attempt before', to),
      h('button', { type: 'submit' }, 'Show dead letters'),
    ),
    bulk,
    results,
  );
  bulkReplay(bulk, () => ({
    sourceId: source.value,
    reason: reason.value.trim(),
    from: isoFromInput(from.value),
    to: isoFromInput(to.value),
  }));
  list();
}

/** The replay button of one dead letter row, with its outcome beside it. */
function rowReplay(delivery) {
  const status = h('span', { class: 'row-status', role: 'status' });
  const replay = replayButton(delivery, status);
  if (!delivery.deadLetter) {
    // The ledger has the outcome but not yet the dead letter's position: nothing to re-send.
    replay.disabled = true;
    status.textContent = 'dead letter not recorded yet';
  }
  return h('span', { class: 'actions' }, replay, status);
}

/** Bulk replay of a destination's dead letters in the form's range, with the job's progress. */
function bulkReplay(section, readForm) {
  const alert = errorBox();
  const progress = h('div', { 'data-testid': 'replay-job' });
  const start = async () => {
    alert.hidden = true;
    const { sourceId, reason, from, to } = readForm();
    if (!sourceId)
      return showError(alert, 'Choose a source: a bulk replay covers one destination.');
    if (!from || !to) return showError(alert, 'Give the range: first attempt from and before.');
    try {
      const job = await api('POST', `/sources/${encodeURIComponent(sourceId)}/destination/replay`, {
        from,
        to,
        ...(reason ? { reason } : {}),
      });
      followJob(progress, job);
    } catch (error) {
      showError(alert, error);
    }
  };
  show(
    section,
    h('h2', {}, 'Bulk replay'),
    h(
      'p',
      {},
      "Replays every dead letter of the chosen source's destination first attempted in the range above (and with the reason, when one is given).",
    ),
    button('Replay all in range', start),
    alert,
    progress,
  );
}

/** Shows a replay job and reads it again until it is no longer running. */
function followJob(box, job) {
  let timer;
  const render = (j) => {
    const done = (j.replayed ?? 0) + (j.failed ?? 0);
    show(
      box,
      h(
        'p',
        { role: 'status' },
        `Replay job ${j.id}: ${j.status}. ${j.replayed} of ${j.total} replayed, ${j.failed} failed.`,
      ),
      h('progress', {
        max: Math.max(1, j.total),
        value: j.total ? done : j.status === 'running' ? 0 : 1,
        'aria-label': 'Replay progress',
      }),
      j.error ? h('p', { class: 'error' }, j.error) : null,
    );
  };
  const poll = async () => {
    try {
      const current = await api('GET', `/replays/${encodeURIComponent(job.id)}`);
      render(current);
      if (current.status === 'running') timer = setTimeout(poll, REPLAY_POLL_MS);
    } catch (error) {
      box.append(h('p', { class: 'error' }, describeError(error)));
    }
  };
  render(job);
  if (job.status === 'running') timer = setTimeout(poll, REPLAY_POLL_MS);
  cleanups.push(() => clearTimeout(timer));
}

// ------------------------------------------------------------------ live rates

const LIVE_TILES = [
  { key: 'accepted', label: 'Accepted', unit: 'calls/s' },
  { key: 'delivered', label: 'Delivered', unit: 'per min' },
  { key: 'retrying', label: 'Retrying', unit: 'per min' },
  { key: 'dead', label: 'Dead', unit: 'per min' },
];

function livePage(view) {
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
  cleanups.push(() => {
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

// ------------------------------------------------------------------ start

document.getElementById('sign-out').addEventListener('click', () => {
  signOut();
  history.replaceState(null, '', '#/sources');
});
window.addEventListener('hashchange', route);
route();
