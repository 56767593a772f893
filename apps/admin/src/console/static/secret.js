// A destination's shared secret: whether one is set (never the secret), a rotation's overlap,
// and forms that set, rotate or remove it. A secret typed is cleared from its field as soon as
// it is sent, whatever the API answers, so it never stays in the page.

import { api } from './api.js';
import {
  MAX_OVERLAP_SECONDS,
  overlapState,
  rotationBody,
  secretHint,
  secretText,
} from './delivery-rules.js';
import { action, button, errorBox, field, h, when } from './dom.js';

/** The API's longest secret, in characters. */
const MAX_SECRET_CHARS = 1024;

export function secretSection(destination, path, reload) {
  const alert = errorBox();
  alert.dataset.testid = 'secret-error';
  const run = (call) => action(alert, reload, call);
  const set = destination.sharedSecretSet;
  const secret = secretInput('sharedSecret');
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Shared secret'),
    h('p', { 'data-testid': 'secret-state' }, secretText(destination.signatureMode, set)),
    overlapNote(destination, Date.now()),
    h(
      'form',
      {
        class: 'inline-form',
        onsubmit: run(() =>
          api('PUT', `${path}/shared-secret`, { sharedSecret: takeValue(secret) }),
        ),
      },
      field(
        set ? 'Replace the shared secret' : 'Shared secret',
        secret,
        set
          ? `${secretHint(destination.signatureMode)} Replaces it at once, with no overlap.`
          : secretHint(destination.signatureMode),
      ),
      h('button', { type: 'submit' }, 'Set secret'),
      set
        ? button(
            'Remove secret',
            run(() => api('DELETE', `${path}/shared-secret`)),
            { class: 'danger' },
          )
        : null,
    ),
    set ? rotationForm(destination, path, run) : null,
    alert,
  );
}

/** A rotation: the new secret signs at once, the previous one beside it for the overlap. */
function rotationForm(destination, path, run) {
  const secret = secretInput('newSharedSecret');
  const overlap = h('input', {
    type: 'text',
    inputmode: 'numeric',
    name: 'overlapSeconds',
    autocomplete: 'off',
  });
  const rotate = () =>
    api('POST', `${path}/shared-secret/rotate`, rotationBody(takeValue(secret), overlap.value));
  return h(
    'form',
    { class: 'card inset', onsubmit: run(rotate) },
    h('h3', {}, 'Rotate with an overlap'),
    h(
      'p',
      { class: 'muted small' },
      'The new secret signs from the next attempt on; the current one keeps signing beside it until the overlap ends, so receivers can move to the new one meanwhile.',
    ),
    h(
      'div',
      { class: 'inline-form' },
      field('New secret', secret, secretHint(destination.signatureMode)),
      field(
        'Overlap (seconds)',
        overlap,
        `0 to ${MAX_OVERLAP_SECONDS.toLocaleString('en')}; 0 drops the current secret at once; empty: the admin app's SECRET_ROTATION_OVERLAP_SECONDS (24 hours unless set).`,
      ),
    ),
    h('p', { class: 'actions' }, h('button', { type: 'submit' }, 'Rotate secret')),
  );
}

/** The last rotation's overlap: still signing with the previous secret, or ended. */
function overlapNote(destination, nowMs) {
  const state = overlapState(destination.previousSecretExpiresAt, nowMs);
  if (state.kind === 'none') return null;
  const headers =
    destination.signatureMode === 'standard-webhooks'
      ? ' (webhook-signature carries both signatures).'
      : " (X-Signature carries the previous secret's signature, X-Signature-Next the new one's).";
  return h(
    'p',
    { 'data-testid': 'secret-overlap' },
    state.kind === 'overlap'
      ? [
          'Rotation in progress: the previous secret keeps signing until ',
          when(state.until),
          headers,
        ]
      : ["The last rotation's overlap ended ", when(state.at), '.'],
  );
}

function secretInput(name) {
  return h('input', {
    type: 'password',
    name,
    autocomplete: 'new-password',
    required: true,
    maxlength: MAX_SECRET_CHARS,
  });
}

/** The field's value, the field emptied. */
function takeValue(input) {
  const value = input.value;
  input.value = '';
  return value;
}
