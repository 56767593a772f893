// Element helpers: every value reaches the page as text (text nodes, textContent, attribute
// values), never as HTML.

import { ApiError } from './api.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
export const DAY_MS = 86_400_000;
export const OUTCOMES = ['delivered', 'retrying', 'dead', 'discarded'];

/** An element; strings among the children become text nodes. */
export function h(tag, props = {}, ...children) {
  return fill(document.createElement(tag), props, children);
}

/** An SVG element, the same way. */
export function s(tag, props = {}, ...children) {
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
export function show(el, ...children) {
  el.replaceChildren();
  return fill(el, {}, children);
}

/** A labelled form control; `control` gets the id the label points at. */
export function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  const hintEl = hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}

export function button(text, onclick, props = {}) {
  return h('button', { type: 'button', onclick, ...props }, text);
}

/** A table whose cells carry their column's name, for the stacked layout on narrow screens. */
export function table(caption, columns, rows, rowProps = () => ({})) {
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

export function badge(outcome) {
  return h(
    'span',
    { class: `badge badge-${OUTCOMES.includes(outcome) ? outcome : 'other'}` },
    outcome ?? '—',
  );
}

/** A definition list of [term, value] pairs. */
export function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs.map(([term, value]) => [h('dt', {}, term), h('dd', {}, value ?? '—')]),
  );
}

function pad2(n) {
  return String(n).padStart(2, '0');
}

/** Local time as `YYYY-MM-DD HH:MM:SS`, without its zone (inputs and axis labels). */
function localClock(date) {
  return (
    `${date.getFullYear()}-${pad2(date.getMonth() + 1)}-${pad2(date.getDate())} ` +
    `${pad2(date.getHours())}:${pad2(date.getMinutes())}:${pad2(date.getSeconds())}`
  );
}

/** The local zone's offset from UTC at `date`, as `UTC+01:00` (`UTC` when none). */
export function zoneText(date) {
  const minutes = -date.getTimezoneOffset();
  if (minutes === 0) return 'UTC';
  const sign = minutes > 0 ? '+' : '-';
  const abs = Math.abs(minutes);
  return `UTC${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
}

/** Local time with its zone: `YYYY-MM-DD HH:MM:SS UTC+01:00`, the one format the console shows. */
export function localText(date) {
  return `${localClock(date)} ${zoneText(date)}`;
}

/** A time from the API, shown in local time with its zone, the exact value on hover. */
export function when(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return h('time', { datetime: iso, title: iso }, localText(date));
}

/** A `datetime-local` input's value for a time. */
export function localInputValue(date) {
  return `${localClock(date).slice(0, 10)}T${pad2(date.getHours())}:${pad2(date.getMinutes())}`;
}

/** ISO 8601 from a `datetime-local` value, or undefined when empty or invalid. */
export function isoFromInput(value) {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export function errorBox() {
  return h('p', { class: 'error', role: 'alert', hidden: true });
}

export function showError(box, error) {
  box.hidden = false;
  show(box, describeError(error));
}

export function describeError(error) {
  if (error instanceof ApiError) return `${error.message} (${error.code}, HTTP ${error.status})`;
  return String(error?.message ?? error);
}

export function link(text, hash) {
  return h('a', { href: hash }, text);
}

/** Runs an API call for a button or form, shows its error, then reloads the page's data. */
export function action(alert, reload, call) {
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
