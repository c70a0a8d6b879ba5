// The store's own failures, which the HTTP layer turns into answers (503 for the first two).
// Apart from store.ts so that the part loaded only with many servers (following.ts) throws the
// same classes without importing the store.

/** A write that could not be made durable; nothing of it was applied. */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`storage write failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'StoreUnavailableError';
  }
}

/** This server could not catch up with every write acknowledged elsewhere (answered 503, never from the past). */
export class InstanceBehindError extends Error {
  constructor(why: string) {
    super(why);
    this.name = 'InstanceBehindError';
  }
}

export class StoreClosedError extends Error {
  constructor(message = 'the store is closed') {
    super(message);
    this.name = 'StoreClosedError';
  }
}
