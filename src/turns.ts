/**
 * Items queued by owner and taken in turns: one of each owner's in turn, each owner's in the order
 * they came. An owner with a thousand items waiting delays another's next by at most one of
 * its own, where one FIFO would make it wait for all thousand.
 */
export class Turns<T> {
  /** Each owner's items; the map's order is the order of turns. */
  readonly #byOwner = new Map<string, T[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  push(owner: string, item: T): void {
    const own = this.#byOwner.get(owner);
    if (own) own.push(item);
    else this.#byOwner.set(owner, [item]);
    this.#size += 1;
  }

  /** The next owner's oldest item; that owner goes to the back of the turns. */
  shift(): T | undefined {
    for (const [owner, own] of this.#byOwner) {
      const item = own.shift() as T;
      this.#byOwner.delete(owner);
      if (own.length > 0) this.#byOwner.set(owner, own);
      this.#size -= 1;
      return item;
    }
    return undefined;
  }

  /** Drops an owner's items and its turn. */
  delete(owner: string): void {
    this.#size -= this.#byOwner.get(owner)?.length ?? 0;
    this.#byOwner.delete(owner);
  }

  /** Every item, all owners', emptying the queue. */
  takeAll(): T[] {
    const all = [...this.#byOwner.values()].flat();
    this.#byOwner.clear();
    this.#size = 0;
    return all;
  }
}

/**
 * Members that take turns one at a time and stay in the ring: a tenant's callbacks sharing its
 * slots (callbacks/feeds.ts). `next` is O(1) and allocates nothing; Turns' shift and push for the
 * same round cost the callback sender's thread 0.6 s of a 19 s burst in Map churn and arrays
 * (a CPU profile, docs/decisions/0009).
 */
export class Ring<T> {
  readonly #members: Array<{ id: string; member: T }> = [];
  #next = 0;

  get size(): number {
    return this.#members.length;
  }

  /** Joins at the back of the turns (just before the member whose turn is next). */
  add(id: string, member: T): void {
    this.#members.splice(this.#next, 0, { id, member });
    this.#next = (this.#next + 1) % this.#members.length;
  }

  /** Leaves the ring; the others keep their order and the turn. */
  delete(id: string): void {
    const at = this.#members.findIndex((m) => m.id === id);
    if (at < 0) return;
    this.#members.splice(at, 1);
    if (at < this.#next) this.#next -= 1;
    if (this.#next >= this.#members.length) this.#next = 0;
  }

  /** The member whose turn it is; the turn moves on to the one after it. */
  next(): T | undefined {
    const entry = this.#members[this.#next];
    if (!entry) return undefined;
    this.#next = (this.#next + 1) % this.#members.length;
    return entry.member;
  }
}
