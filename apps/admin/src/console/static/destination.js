// A destination of a source (by id, or the source's first): create the first, its settings,
// filter, delivery settings (delivery-settings.js), shared secret (secret.js) and webhooks.

import { api, ApiError } from './api.js';
import { deliverySection } from './delivery-settings.js';
import { filterSection } from './destinations.js';
import { action, button, errorBox, facts, field, h, link, show, showError, when } from './dom.js';
import { hashOf } from './router.js';
import { secretSection } from './secret.js';

/** The API's limits: webhooks per destination, static headers per webhook. */
const MAX_WEBHOOKS = 5;
const MAX_HEADERS = 5;

/** `#/sources/<id>/destination`: the source's first (oldest) destination, or a form creating it. */
export function destinationPage(view, sourceId) {
  return destinationView(view, sourceId, `/sources/${encodeURIComponent(sourceId)}/destination`);
}

/** `#/sources/<id>/destinations/<destinationId>`: one destination of the source. */
export function destinationByIdPage(view, sourceId, destinationId) {
  const path = `/sources/${encodeURIComponent(sourceId)}/destinations/${encodeURIComponent(destinationId)}`;
  return destinationView(view, sourceId, path, false);
}

async function destinationView(view, sourceId, path, offerCreate = true) {
  const alert = errorBox();
  const body = h('div');
  view.append(h('h1', { tabindex: -1 }, 'Destination'), alert, body);
  const reload = async () => {
    try {
      show(body, renderDestination(await api('GET', path), path, reload, alert));
    } catch (error) {
      if (offerCreate && error instanceof ApiError && error.code === 'destination_not_found') {
        show(body, createDestinationForm(path, reload, alert));
      } else {
        showError(alert, error);
      }
    }
  };
  try {
    const source = await api('GET', `/sources/${encodeURIComponent(sourceId)}`);
    view.querySelector('h1').textContent = `Destination of ${source.name}`;
    view.insertBefore(
      h(
        'p',
        { class: 'actions' },
        link(`All destinations of ${source.name}`, hashOf(['sources', sourceId, 'destinations'])),
      ),
      alert,
    );
  } catch (error) {
    return showError(alert, error);
  }
  await reload();
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
      "This is the source's first destination: up to five URLs, signed with a shared secret when one is set. It is created disabled. A source may have up to 20, each with its own filter: see all of its destinations.",
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
        [
          'Rate limit',
          h(
            'span',
            { 'data-testid': 'rate-limit' },
            destination.rateLimitPerSecond
              ? `${destination.rateLimitPerSecond} deliveries a second, over every dispatcher`
              : 'none',
          ),
        ],
        ...(destination.breaker ? [['Circuit breaker', breakerState(destination.breaker)]] : []),
      ]),
      h(
        'p',
        { class: 'actions' },
        toggle,
        link(
          'Deliveries',
          hashOf(['deliveries'], {
            sourceId: destination.sourceId,
            destinationId: destination.id,
          }),
        ),
        link('Dead letters', hashOf(['dead'], { sourceId: destination.sourceId })),
        link(
          'Health',
          hashOf(['sources', destination.sourceId, 'destinations', destination.id, 'health']),
        ),
      ),
    ),
    filterSection(destination, path, reload),
    deliverySection(destination, path, reload),
    secretSection(destination, path, reload),
    webhooksSection(destination, path, reload, alert),
  ];
}

/** The breaker over every dispatcher: closed, or open (probing) since when and in how many. */
function breakerState(breaker) {
  const text =
    breaker.state === 'closed'
      ? 'closed: requests go out'
      : `${breaker.state === 'open' ? 'open' : 'half-open (probing)'} in ${breaker.openReplicas} dispatcher(s): no requests but probes, deliveries wait on the retry tiers`;
  return h(
    'span',
    { 'data-testid': 'breaker-state' },
    text,
    breaker.since ? h('span', {}, ' since ', when(breaker.since)) : '',
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
