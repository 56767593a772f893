// Hash routing (#/page/id?query) and sign-in: with no token, every route shows the sign-in form.

import { ApiError, forgetToken, hasToken, keepToken, request } from './api.js';
import { describeError, errorBox, field, h, link, show, showError } from './dom.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');

/** The pages, as app.js lists them: `match` parts (`*` for an id), nav entry, render. */
let pages = [];
/** Stops the timers of the page on show; called when another page replaces it. */
let cleanups = [];

/** Routes now and on every hash change. */
export function startRouter(list) {
  pages = list;
  window.addEventListener('hashchange', route);
  route();
}

/** Runs `stop` when the page on show is replaced (its timers). */
export function onLeave(stop) {
  cleanups.push(stop);
}

/** `#/path?query`, with each path part encoded. */
export function hashOf(parts, params) {
  const path = `#/${parts.map(encodeURIComponent).join('/')}`;
  const query = params ? new URLSearchParams(params).toString() : '';
  return query ? `${path}?${query}` : path;
}

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
  if (!hasToken()) return loginPage();
  nav.hidden = false;
  const { parts, params } = parseHash();
  const page = pages.find(
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
      "One of the admin app's ADMIN_TOKENS or ADMIN_NAMED_TOKENS. It is sent only to this admin app and kept in " +
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
  keepToken(candidate);
  route();
}

export function signOut(message) {
  forgetToken();
  loginPage(message);
}
