// A destination's delivery settings (signature mode, batching, ordering, traceparent): each shown with
// what it does now, edited with a PATCH of that field alone, the API's refusal shown under it.

import { api } from './api.js';
import {
  BATCH_BOUNDS,
  ORDERING_BOUNDS,
  SIGNATURE_MODES,
  batchingBody,
  batchingText,
  boundHint,
  orderingBody,
  orderingText,
  signatureModeText,
  traceparentText,
} from './delivery-rules.js';
import { action, button, errorBox, field, h } from './dom.js';

/**
 * The settings, in the order shown. `id` names the test ids `<id>-state` and `<id>-error`;
 * `state` says what the destination does now; `controls` edits it, each change sent through
 * `save(() => patchBody)`. Another setting is one more entry.
 */
const SETTINGS = [
  {
    id: 'signature-mode',
    title: 'Signature mode',
    state: (d) => signatureModeText(d.signatureMode),
    controls: signatureControls,
  },
  {
    id: 'batching',
    title: 'Batching',
    state: (d) => batchingText(d.batching),
    controls: batchingControls,
  },
  {
    id: 'ordering',
    title: 'Ordering',
    state: (d) => orderingText(d.ordering),
    controls: orderingControls,
  },
  {
    id: 'traceparent',
    title: 'Trace context',
    state: (d) => traceparentText(d.sendTraceparent),
    controls: traceparentControls,
  },
];

/** The card of delivery settings on a destination's page. */
export function deliverySection(destination, path, reload) {
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Delivery'),
    SETTINGS.map((setting) => settingBlock(setting, destination, path, reload)),
  );
}

function settingBlock(setting, destination, path, reload) {
  const alert = errorBox();
  alert.dataset.testid = `${setting.id}-error`;
  const save = (body) => action(alert, reload, () => api('PATCH', path, body()));
  return h(
    'div',
    { class: 'setting', 'data-setting': setting.id },
    h('h3', {}, setting.title),
    h('p', { 'data-testid': `${setting.id}-state` }, setting.state(destination)),
    setting.controls(destination, save),
    alert,
  );
}

function signatureControls(destination, save) {
  const select = h(
    'select',
    { name: 'signatureMode' },
    SIGNATURE_MODES.map(({ value }) =>
      h('option', { value, selected: value === destination.signatureMode }, value),
    ),
  );
  return h(
    'form',
    { class: 'inline-form', onsubmit: save(() => ({ signatureMode: select.value })) },
    field(
      'Signature mode',
      select,
      'standard-webhooks takes only a whsec_ secret: with another secret set, set a whsec_ one first (below), or remove it.',
    ),
    h('button', { type: 'submit' }, 'Save signature mode'),
  );
}

/** Batching's bounds as typed (an empty field takes its default); the API checks the ranges. */
function batchingControls(destination, save) {
  return boundsControls('batching', BATCH_BOUNDS, destination.batching, batchingBody, save);
}

/** Ordering's bounds, as batching's are; the API refuses ordering beside batching. */
function orderingControls(destination, save) {
  return boundsControls('ordering', ORDERING_BOUNDS, destination.ordering, orderingBody, save);
}

/**
 * A setting that is null (off) or an object of bounds: a field per bound, filled with the saved
 * value; its button turns it on or saves the bounds, and another turns it off.
 */
function boundsControls(name, bounds, current, bodyOf, save) {
  const inputs = bounds.map((bound) => ({
    bound,
    input: h('input', {
      type: 'text',
      inputmode: 'numeric',
      name: bound.key,
      autocomplete: 'off',
      value: current?.[bound.key] ?? '',
      placeholder: String(bound.byDefault),
    }),
  }));
  const typed = () =>
    Object.fromEntries(inputs.map(({ bound, input }) => [bound.key, input.value]));
  return h(
    'form',
    { class: 'inline-form', onsubmit: save(() => bodyOf(typed())) },
    inputs.map(({ bound, input }) => field(bound.label, input, boundHint(bound))),
    h('button', { type: 'submit' }, current ? `Save ${name}` : `Turn ${name} on`),
    current
      ? button(
          `Turn ${name} off`,
          save(() => ({ [name]: null })),
          { class: 'danger' },
        )
      : null,
  );
}

function traceparentControls(destination, save) {
  const on = destination.sendTraceparent;
  return h(
    'p',
    { class: 'actions' },
    button(
      on ? 'Stop sending traceparent' : 'Send traceparent',
      save(() => ({ sendTraceparent: !on })),
    ),
  );
}
