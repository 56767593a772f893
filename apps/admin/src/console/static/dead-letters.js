// Dead letters: deliveries no webhook took, filtered by source, reason and time, with replay.

import { listDeliveries, replayedMark, sourceCell, sourceSelect, userCell } from './deliveries.js';
import { DAY_MS, field, h, isoFromInput, link, localInputValue, when, zoneText } from './dom.js';
import { bulkReplay, replayJobs, rowReplay } from './replay.js';
import { hashOf } from './router.js';

const DEAD_COLUMNS = [
  { label: 'First attempt', cell: (d) => when(d.firstAttemptAt) },
  { label: 'Message id', cell: (d) => link(d.messageId, hashOf(['deliveries', d.id])) },
  { label: 'Source', cell: (d) => sourceCell(d.sourceId) },
  { label: 'User', cell: userCell },
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
  { label: 'Replays', cell: (d) => replayedMark(d) ?? '0' },
  { label: 'Replay', cell: () => null },
];

export function deadLettersPage(view, params) {
  const now = new Date();
  const { select: source, ready } = sourceSelect(params.get('sourceId'));
  const notReplayed = h('input', {
    type: 'checkbox',
    name: 'notReplayed',
    checked: params.get('notReplayed') === '1',
  });
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
  // The list shows what a bulk replay would take: never replayed ones only, when ticked.
  const shown = (d) => !notReplayed.checked || !(d.replays > 0);
  const list = (event) => {
    event?.preventDefault();
    const hashParams = {
      sourceId: source.value,
      reason: reason.value.trim(),
      from: from.value,
      to: to.value,
      notReplayed: notReplayed.checked ? '1' : '',
    };
    history.replaceState(
      null,
      '',
      hashOf(['dead'], Object.fromEntries(Object.entries(hashParams).filter(([, v]) => v))),
    );
    void listDeliveries(results, filters(), (d) => rowReplay(d), DEAD_COLUMNS, shown);
  };
  const bulk = h('section', { class: 'card' });
  const jobs = h('section', { class: 'card' });
  view.append(
    h('h1', { tabindex: -1 }, 'Dead letters'),
    h(
      'p',
      {},
      'Deliveries that no webhook took: permanent refusals, or the retry window closed. Replaying one sends its original bytes again with a fresh retry window; the receiver gets the same messageId, signed again with the destination’s current secret.',
    ),
    h(
      'form',
      { class: 'filters card', onsubmit: list },
      field('Source', source),
      field('Reason', reason),
      field(`First attempt from (${zoneText(new Date())})`, from),
      field(`First attempt before (${zoneText(new Date())})`, to),
      h('div', { class: 'field check' }, h('label', {}, notReplayed, ' Not yet replayed only')),
      h('button', { type: 'submit' }, 'Show dead letters'),
    ),
    bulk,
    results,
    jobs,
  );
  bulkReplay(bulk, () => ({
    sourceId: source.value,
    reason: reason.value.trim(),
    from: isoFromInput(from.value),
    to: isoFromInput(to.value),
    notReplayed: notReplayed.checked,
  }));
  void replayJobs(jobs);
  // Source names first, so rows show them; the filter already holds the chosen source.
  void ready.then(() => list());
}
