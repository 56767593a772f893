import { FinishedPrefix } from './finished-prefix';

interface Entry {
  readonly offset: bigint;
  done: boolean;
}

const record = (offset: number): Entry => ({ offset: BigInt(offset), done: false });

/** A committer whose requests answer when the test says. */
function committer() {
  const sent: string[] = [];
  const answers: (() => void)[] = [];
  const commit = (offset: string) => {
    sent.push(offset);
    return new Promise<void>((resolve) => answers.push(resolve));
  };
  const answer = async () => {
    answers.shift()?.();
    // The commit loop runs on after its awaited request answered.
    for (let i = 0; i < 5; i += 1) await Promise.resolve();
  };
  return { sent, commit, answer };
}

describe(FinishedPrefix.name, () => {
  it('commits the offset after the finished prefix, never past an unfinished record', async () => {
    const { sent, commit, answer } = committer();
    const prefix = new FinishedPrefix<Entry>(commit);
    const [a, b, c] = [record(10), record(11), record(12)];
    [a, b, c].forEach((r) => prefix.add(r));
    b.done = true;
    prefix.advance();
    expect(sent).toEqual([]);
    expect(prefix.firstUnfinished()).toBe(a);
    a.done = true;
    prefix.advance();
    expect(sent).toEqual(['12']);
    expect(prefix.finishedBefore()).toBe(12n);
    expect(prefix.firstUnfinished()).toBe(c);
    await answer();
  });

  it('sends one commit at a time, the latest offset gathered while one was on its way', async () => {
    const { sent, commit, answer } = committer();
    const prefix = new FinishedPrefix<Entry>(commit);
    const records = [record(0), record(1), record(2)];
    records.forEach((r) => prefix.add(r));
    for (const r of records) {
      r.done = true;
      prefix.advance();
    }
    expect(sent).toEqual(['1']);
    let committed = false;
    void prefix.committed().then(() => (committed = true));
    await answer();
    expect(sent).toEqual(['1', '3']);
    expect(committed).toBe(false);
    await answer();
    expect(committed).toBe(true);
  });

  it('goes on after a refused commit (the committer retries it) and never commits backwards', async () => {
    const sent: string[] = [];
    const prefix = new FinishedPrefix<Entry>((offset) => {
      sent.push(offset);
      return Promise.reject(new Error('refused'));
    });
    const a = record(5);
    prefix.add(a);
    a.done = true;
    prefix.advance();
    await prefix.committed();
    // Read again after a rewind: an offset before the committed one is not committed.
    const again = { offset: 3n, done: true };
    prefix.add(again);
    prefix.advance();
    await prefix.committed();
    expect(sent).toEqual(['6']);
  });

  it('forgets the records past the finished prefix after a rewind', () => {
    const { commit } = committer();
    const prefix = new FinishedPrefix<Entry>(commit);
    prefix.add(record(1));
    prefix.add(record(2));
    prefix.forget();
    expect(prefix.firstUnfinished()).toBeUndefined();
    expect(prefix.finishedBefore()).toBeUndefined();
  });
});
