// The audit log: every change made through the admin API, newest first, with the name of the
// token that made it. Read-only: "Older changes" pages back with the API's cursor.

import { api, query } from './api.js';
import { button, errorBox, h, show, showError, table, when } from './dom.js';

const PAGE = 50;

const AUDIT_COLUMNS = [
  { label: 'When', cell: (entry) => when(entry.at) },
  { label: 'Token', cell: (entry) => entry.tokenName },
  { label: 'Method', cell: (entry) => h('code', {}, entry.method) },
  { label: 'Path', cell: (entry) => h('code', { title: entry.route }, entry.path) },
  { label: 'Id', cell: (entry) => (entry.resourceId ? h('code', {}, entry.resourceId) : '—') },
];

export async function auditPage(view) {
  const list = h('div', { 'data-testid': 'audit', 'aria-live': 'polite' }, h('p', {}, 'Loading…'));
  const more = h('div', {});
  const alert = errorBox();
  view.append(
    h('h1', { tabindex: -1 }, 'Audit log'),
    h(
      'p',
      { class: 'hint' },
      'Every change made through the admin API, newest first: which token (by its name), ' +
        'what, and when. Reads are not recorded, nor are refused requests.',
    ),
    alert,
    list,
    more,
  );
  const entries = [];
  async function load(cursor) {
    try {
      const page = await api('GET', `/audit${query({ limit: PAGE, cursor })}`);
      entries.push(...page.items);
      if (!entries.length) show(list, h('p', {}, 'No changes recorded yet.'));
      else
        show(
          list,
          table('Changes', AUDIT_COLUMNS, entries, (entry) => ({ 'data-audit-id': entry.id })),
        );
      if (page.nextCursor)
        show(
          more,
          button('Older changes', () => load(page.nextCursor)),
        );
      else show(more);
    } catch (error) {
      showError(alert, error);
    }
  }
  await load(undefined);
}
