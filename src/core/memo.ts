/**
 * One promise per key, made on first use and shared by every later caller; a promise that
 * rejects is forgotten, so the next caller tries again (a failed preparation, a lost connection)
 * instead of inheriting the old failure for the life of the process.
 */
export class PromiseMemo<Key, Value> {
  private readonly promises = new Map<Key, Promise<Value>>();

  /** The promise for `key`, made by `make` when there is none (or the last one failed). */
  get(key: Key, make: () => Promise<Value>): Promise<Value> {
    let promise = this.promises.get(key);
    if (promise === undefined) {
      promise = make();
      this.promises.set(key, promise);
      const made = promise;
      // Only this promise is forgotten: a newer one made after it failed stays.
      made.catch(() => {
        if (this.promises.get(key) === made) this.promises.delete(key);
      });
    }
    return promise;
  }

  /** Every promise made so far (settled or not), in the order their keys were first asked for. */
  values(): Promise<Value>[] {
    return [...this.promises.values()];
  }
}
