// The order the API promises for its lists, written out for tests: by created_at, and records
// made in the same millisecond by id. On a fast machine two records made one after the other
// often share a millisecond, so a test that expects "the order I made them in" must sort this way.

interface Made {
  id: string;
  created_at: string;
}

/** Oldest first; ties by id, lowest first. */
export function oldestFirst(left: Made, right: Made): number {
  if (left.created_at !== right.created_at) return left.created_at < right.created_at ? -1 : 1;
  return left.id < right.id ? -1 : left.id > right.id ? 1 : 0;
}

/** Newest first: exactly the reverse of oldest first (ties by id, highest first). */
export function newestFirst(left: Made, right: Made): number {
  return oldestFirst(right, left);
}

/** The ids of `records` in the order `compare` puts them. */
export function idsInOrder(compare: (left: Made, right: Made) => number, ...records: Made[]): string[] {
  return [...records].sort(compare).map((record) => record.id);
}
