/**
 * How Herald talks to each of its threads (the dispatch thread, the callback sender's thread,
 * the render pool's threads): a typed, two-way line over a port (a Worker seen from its parent,
 * `parentPort` inside the thread, or a MessagePort). Each side serves its own methods
 * and calls or tells the other's by name; a call's promise settles with the other side's answer,
 * matched by id. Used by dispatch/thread.ts and thread-entry.ts, callbacks/threaded-sender.ts
 * and sender-thread.ts, templates/render-pool.ts and render-jobs.ts.
 *
 * Two rules are the reason this is Herald's own module rather than a library: a method may be
 * served `joined` (it takes, in one go, the calls of it queued right behind the first on the
 * port, read with receiveMessageOnPort; see dispatch/joined-inserts.ts), and the side that owns
 * the thread fails every call still waiting when the thread ends (`end`).
 */

import { type ErrorCode, HeraldError, type HeraldErrorOptions } from './errors.ts';

/**
 * What a structured clone of an error drops, sent beside it: a HeraldError's code and what the
 * HTTP layer answers with (a render kept off the CPU is a 503), and any other error's `code` (a
 * driver's `SQLITE_BUSY`, a PostgreSQL SQLSTATE: store-busy.ts tells a busy database by it).
 */
type Lost = { herald?: { code: ErrorCode; detail?: string; options: HeraldErrorOptions }; code?: string };

function lostInClone(error: unknown): Lost {
  if (error instanceof HeraldError) {
    const { code, detail, errors, retryAfterS, challenge, rateLimit } = error;
    return { herald: { code, detail, options: { errors, retryAfterS, challenge, rateLimit } } };
  }
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? { code } : {};
}

function revived(error: unknown, lost: Lost): unknown {
  if (lost.herald) return new HeraldError(lost.herald.code, lost.herald.detail, lost.herald.options);
  if (lost.code !== undefined && error instanceof Error) Object.assign(error, { code: lost.code });
  return error;
}

/** Anything that carries structured-clone messages both ways. */
export interface Port {
  postMessage(message: unknown): void;
  // biome-ignore lint/suspicious/noExplicitAny: a port's messages are whatever was posted
  on(event: 'message', listener: (message: any) => void): unknown;
}

/** What crosses the port. */
type Message =
  | { line: 'call'; id: number; method: string; args: unknown[] }
  | { line: 'tell'; method: string; args: unknown[] }
  | { line: 'reply'; id: number; ok: true; value: unknown }
  | { line: 'reply'; id: number; ok: false; error: unknown; lost: Lost };

// biome-ignore lint/suspicious/noExplicitAny: the methods of a served interface take any arguments
type Method = (...args: any[]) => unknown;
type Methods<T> = { [K in keyof T as K extends string ? (T[K] extends Method ? K : never) : never]: T[K] };
type Args<F> = F extends (...args: infer A) => unknown ? A : never;
type Answer<F> = F extends (...args: never[]) => infer R ? Awaited<R> : never;

/** A method served joined: `serve` takes the arguments of each queued call and answers each. */
export interface Joined<A extends unknown[], R> {
  joined(calls: A[]): Array<Promise<R>>;
}

/** Marks `serve` as the joined form of a method (see the module's comment). */
export function joined<A extends unknown[], R>(serve: (calls: A[]) => Array<Promise<R>>): Joined<A, R> {
  return { joined: serve };
}

/** How one side serves interface T: each method as itself, or joined. */
export type Served<T> = {
  [K in keyof Methods<T>]: Methods<T>[K] | Joined<Args<Methods<T>[K]>, Answer<Methods<T>[K]>>;
};

/** One side's end of the line: calls and tells to the other side's interface T. */
export interface Line<T> {
  /** Calls `method` on the other side; settles with its answer (an error crosses as its clone). */
  call<K extends keyof Methods<T>>(method: K, ...args: Args<Methods<T>[K]>): Promise<Answer<Methods<T>[K]>>;
  /** Tells the other side, unanswered (a notification: a wake, a hint). */
  tell<K extends keyof Methods<T>>(method: K, ...args: Args<Methods<T>[K]>): void;
  /** The other side has ended: every waiting call rejects with `error`, and so does every later one. */
  end(error: Error): void;
  /** Calls waiting for an answer (a pool reads it to pick an idle thread; tests read it). */
  pending(): number;
}

export interface LineOptions {
  /**
   * Takes the next message already queued on the port, without waiting (receiveMessageOnPort):
   * what lets a joined method take the calls queued behind the first. Without it, each joined
   * call is served alone.
   */
  drain?: () => { message: unknown } | undefined;
  /**
   * Methods whose calls go ahead of a joined batch they were queued behind: a joined method's
   * drain serves them as it meets them, before the batch (the dispatch thread's `insertUrgent`,
   * a CRITICAL's commit, before the LOW hand-overs queued ahead of it). Only a plain method goes
   * ahead (a joined one is served in its turn), and only within the run of the joined method's
   * calls the drain reads: a message of another kind ends that run.
   */
  ahead?: readonly string[];
}

/**
 * Opens this side's end of a line on `port`, serving `serve` (only its own methods: a name it
 * does not have, inherited ones included, is answered with an error). Messages are served in the
 * order they arrive; a joined method's batch is served before the message that ended it, and
 * after the `ahead` calls queued within it.
 */
export function openLine<Theirs, Ours = Record<never, never>>(
  port: Port,
  serve: Served<Ours>,
  options: LineOptions = {},
): Line<Theirs> {
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: unknown): void }>();
  let nextId = 1;
  let ended: Error | undefined;
  const handlers = serve as Record<string, Method | Joined<unknown[], unknown>>;
  const handler = (method: string) => (Object.hasOwn(handlers, method) ? handlers[method] : undefined);
  const ahead = (method: string) =>
    options.ahead?.includes(method) === true && typeof handler(method) === 'function';

  function answer(id: number, work: Promise<unknown>): void {
    work.then(
      (value) => reply({ line: 'reply', id, ok: true, value }),
      (error: unknown) => reply({ line: 'reply', id, ok: false, error, lost: lostInClone(error) }),
    );
  }
  function reply(message: Message & { line: 'reply' }): void {
    try {
      port.postMessage(message);
    } catch (error) {
      // An answer that cannot be cloned (a function, a class's private state): the caller is
      // told why rather than left waiting.
      const why = error instanceof Error ? error.message : String(error);
      port.postMessage({
        line: 'reply',
        id: message.id,
        ok: false,
        error: new Error(why),
        lost: {},
      } satisfies Message);
    }
  }
  const invoke = (serve: Method, args: unknown[]) => {
    try {
      return Promise.resolve(serve(...args));
    } catch (error) {
      return Promise.reject(error);
    }
  };

  function receive(message: Message): void {
    if (message.line === 'reply') {
      const call = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.ok) call?.resolve(message.value);
      else call?.reject(revived(message.error, message.lost));
      return;
    }
    const serve = handler(message.method);
    if (message.line === 'tell') {
      if (typeof serve === 'function') serve(...message.args);
      return;
    }
    if (!serve) answer(message.id, Promise.reject(new Error(`no method '${message.method}' is served`)));
    else if (typeof serve === 'function') answer(message.id, invoke(serve, message.args));
    else serveJoined(message, serve);
  }

  function serveJoined(first: Message & { line: 'call' }, serve: Joined<unknown[], unknown>): void {
    const calls = [first];
    let next: Message | undefined;
    for (let queued = options.drain?.(); queued; queued = options.drain?.()) {
      const message = queued.message as Message;
      // Served alone (a plain method): a joined one would drain the calls behind it first.
      if (message.line === 'call' && ahead(message.method)) {
        receive(message);
        continue;
      }
      if (message.line !== 'call' || message.method !== first.method) {
        next = message;
        break;
      }
      calls.push(message);
    }
    let outcomes: Array<Promise<unknown>>;
    try {
      outcomes = serve.joined(calls.map((call) => call.args));
    } catch (error) {
      outcomes = calls.map(() => Promise.reject(error));
    }
    calls.forEach((call, i) => {
      answer(call.id, outcomes[i] ?? Promise.reject(new Error('no answer')));
    });
    // The message that ended the batch, after it: nothing changes order.
    if (next) receive(next);
  }

  port.on('message', receive);

  return {
    call(method, ...args) {
      if (ended) return Promise.reject(ended);
      return new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
        try {
          port.postMessage({ line: 'call', id, method: method as string, args } satisfies Message);
        } catch (error) {
          // Never posted (arguments that cannot be cloned): nothing will answer it.
          waiting.delete(id);
          reject(error);
        }
      });
    },
    tell(method, ...args) {
      if (!ended) port.postMessage({ line: 'tell', method: method as string, args } satisfies Message);
    },
    end(error) {
      ended = error;
      for (const call of waiting.values()) call.reject(error);
      waiting.clear();
    },
    pending: () => waiting.size,
  };
}
