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
