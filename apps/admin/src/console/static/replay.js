// Replaying dead letters: one from its row or page, or a destination's in bulk as a job.

import { api } from './api.js';
import { button, describeError, errorBox, h, link, show, showError, table, when } from './dom.js';
import { hashOf, onLeave } from './router.js';

/** How often a running bulk replay's progress is read. */
const REPLAY_POLL_MS = 1_000;

/**
 * Replays one dead delivery; the answer (the new delivery) or the refusal goes to `status`. A
 * delivery replayed before is not sent again on the first press: that press says so, and
 * the button then reads "Replay again".
 */
function replayButton(delivery, status) {
  let warned = !(delivery.replays > 0);
  const replay = button(
    'Replay',
    async () => {
      if (!warned) {
        warned = true;
        replay.textContent = 'Replay again';
        show(
          status,
          h(
            'span',
            { class: 'warning', 'data-testid': 'already-replayed' },
            `Already replayed ${delivery.replays === 1 ? 'once' : `${delivery.replays} times`}; press again to send it once more.`,
          ),
        );
        return;
      }
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

/** The replay button of one dead letter row, with its outcome beside it. */
export function rowReplay(delivery) {
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
export function bulkReplay(section, readForm) {
  const alert = errorBox();
  const progress = h('div', { 'data-testid': 'replay-job' });
  const start = async () => {
    alert.hidden = true;
    const { sourceId, reason, from, to, notReplayed } = readForm();
    if (!sourceId)
      return showError(alert, 'Choose a source: a bulk replay covers one destination.');
    if (!from || !to) return showError(alert, 'Give the range: first attempt from and before.');
    try {
      const job = await api('POST', `/sources/${encodeURIComponent(sourceId)}/destination/replay`, {
        from,
        to,
        ...(reason ? { reason } : {}),
        ...(notReplayed ? { notReplayed: true } : {}),
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
      "Replays every dead letter of the chosen source's destination first attempted in the range above (with the reason, when one is given; only those never replayed, when ticked).",
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
  onLeave(() => clearTimeout(timer));
}

/** The latest bulk replays, newest first. */
export async function replayJobs(section) {
  show(section, h('h2', {}, 'Recent bulk replays'), h('p', {}, 'Loading…'));
  try {
    const jobs = await api('GET', '/replays?limit=10');
    show(
      section,
      h('h2', {}, 'Recent bulk replays'),
      jobs.length
        ? table('Recent bulk replays', JOB_COLUMNS, jobs, (j) => ({ 'data-job-id': j.id }))
        : h('p', {}, 'None yet.'),
    );
  } catch (error) {
    show(
      section,
      h('h2', {}, 'Recent bulk replays'),
      h('p', { class: 'error' }, describeError(error)),
    );
  }
}

const JOB_COLUMNS = [
  { label: 'Started', cell: (j) => when(j.createdAt) },
  { label: 'Destination', cell: (j) => h('code', {}, j.destinationId) },
  { label: 'Status', cell: (j) => j.status },
  { label: 'Replayed', cell: (j) => `${j.replayed} of ${j.total}` },
  { label: 'Failed', cell: (j) => String(j.failed) },
  { label: 'Finished', cell: (j) => when(j.finishedAt) },
];
