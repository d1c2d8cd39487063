/** A call's answer over a thread's port, matched to the call by `id`. */
export type CallReply =
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: unknown };

/** The answering side: posts the outcome of `work` as the reply to call `id`. */
export function reply(post: (message: CallReply) => void, id: number, work: Promise<unknown>): void {
  work.then(
    (value) => post({ type: 'reply', id, ok: true, value }),
    (error: unknown) => post({ type: 'reply', id, ok: false, error }),
  );
}

/** The calling side: each call's id, and the promise its reply settles. */
export interface Calls {
  /** Makes a call: `send` posts the request with this id. */
  call<T>(send: (id: number) => void): Promise<T>;
  /** Settles the call a reply answers (a reply to no call, e.g. after failAll, is dropped). */
  settle(message: CallReply): void;
  /** Rejects every call still waiting (the thread ended). */
  failAll(error: unknown): void;
  /** How many calls wait for a reply. */
  pending(): number;
}

export function createCalls(): Calls {
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: unknown): void }>();
  let nextId = 1;
  return {
    call<T>(send: (id: number) => void) {
      return new Promise<T>((resolve, reject) => {
        const id = nextId++;
        // Waits for a reply only once its request is sent: a message that cannot be posted
        // (one the structured clone refuses) rejects the call and leaves nothing behind.
        send(id);
        waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      });
    },
    settle(message) {
      const call = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.ok) call?.resolve(message.value);
      else call?.reject(message.error);
    },
    failAll(error) {
      for (const call of waiting.values()) call.reject(error);
      waiting.clear();
    },
    pending: () => waiting.size,
  };
}
