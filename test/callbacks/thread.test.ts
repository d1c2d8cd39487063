// The callback sender's thread (docs/callbacks.md, "How sending works"), in a real `herald start`
// process: it runs at the process's priority while it keeps up, and lowers itself below the
// threads that accept and deliver (nice 10, read from /proc for each of the process's threads)
// once it falls behind (here: 3,000 changes against a receiver that answers after 200 ms); and
// when it ends on its own (ended from outside through the inspector, as a crash would end it)
// the process goes on and a new thread sends the next callbacks. Run without a dispatch thread,
// so the sender's thread is the main thread's child and the inspector reaches it. Threads are
// told apart by the names they give themselves (os-thread.ts `nameOwnThread`): the batch
// threads run at nice 10 too.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { tempDir } from '../helpers/config.ts';
import { endThread } from '../helpers/end-thread.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  type HeraldProcess,
  oneProcessEnv,
  passwordLogin,
  startHeraldProcess,
} from '../helpers/herald-process.ts';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/peers/callback-receiver.ts';

const ADMIN = { email: 'admin@example.com', password: 'sender-thread-password-1' };

/** The nice value of each thread of a process (field 19 of /proc/PID/task/TID/stat). */
function niceOfThreads(pid: number): Map<number, number> {
  const nice = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      nice.set(Number(tid), Number(fields[16]));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return nice;
}

describe('the callback sender thread', () => {
  let proc: HeraldProcess | undefined;
  let receiver: CallbackReceiver | undefined;
  after(async () => {
    await proc?.stop(2000);
    await receiver?.close();
  });

  it('lowers itself to nice 10 once behind, and is started again when it ends', async () => {
    receiver = await startCallbackReceiver();
    const env = oneProcessEnv(tempDir('herald-sender-thread-'), ADMIN, {
      HERALD_CALLBACK_ALLOWED_HOSTS: receiver.host,
      HERALD_DISPATCH_THREAD: 'false',
      NODE_OPTIONS: '--inspect=127.0.0.1:0',
    });
    proc = await startHeraldProcess('sender-thread', env);
    const api = proc.apiUrl as string;
    const token = await passwordLogin(api, ADMIN);
    const call = async (path: string, body: object, status = 201) => {
      const response = await fetch(`${api}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, status, `${path}: ${response.status}`);
      return (await response.json()) as { notificationId: string };
    };
    const item = {
      channel: 'email',
      recipient: { email: 'ada@example.com' },
      content: { subject: 'Hi', text: 'Hello' },
    };
    const send = () => call('/notifications', item);
    const hub = receiver;
    const received = (id: string) => hub.at('/thread').some((r) => r.body.includes(id));
    await call('/callbacks', { url: `${receiver.origin}/thread`, events: ['DELIVERED'] });

    const first = await send();
    await eventually(() => received(first.notificationId), 15_000, 'the first callback');
    // Threads by the name each gives itself (os-thread.ts), so the batch threads, which run at
    // nice 10 from their start, are not taken for the sender.
    const named = (tid: number) => readFileSync(`/proc/${proc?.pid}/task/${tid}/comm`, 'utf8').trim();
    const atTen = () =>
      [...niceOfThreads(proc?.pid as number)].filter(([, n]) => n === 10).map(([tid]) => named(tid));
    assert.deepEqual(atTen(), [], 'every thread at the default priority while the sender keeps up');

    // A slow receiver: at most 32 in flight, 200 ms each, against 3,000 changes at once.
    receiver.hold('/thread', 200);
    for (let i = 0; i < 3; i++) {
      await call('/notifications/batch', { notifications: Array.from({ length: 1000 }, () => item) }, 207);
    }
    await eventually(() => atTen().includes('herald-sender'), 20_000, 'the sender thread at nice 10');
    const nice = niceOfThreads(proc.pid);
    assert.equal(nice.get(proc.pid), 0, 'the main thread keeps the default priority');
    assert.deepEqual(
      atTen().filter((name) => name !== 'herald-batch'),
      ['herald-sender'],
      'only the sender (and the batch threads) at nice 10',
    );
    receiver.hold('/thread', 0);

    const inspector = /Debugger listening on (ws:\/\/\S+)/.exec(proc.output())?.[1];
    assert.ok(inspector, `no inspector URL in: ${proc.output()}`);
    await endThread(inspector, '/callbacks/sender-thread.js');
    await eventually(
      () => /callback sender thread ended; starting it again/.test(proc?.output() ?? ''),
      10_000,
      'the thread reported ended',
    );
    const second = await send();
    // The new thread waits out the ended one's head lease (10 s), starts, and sends again what
    // that one read and did not record (up to 3,000 changes) before this one: a generous margin.
    await eventually(() => received(second.notificationId), 60_000, 'a callback from the new thread');
    assert.equal(proc.child.exitCode, null, 'the process is still running');
  });
});
