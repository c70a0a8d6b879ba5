// The one ordering every list shares: by creation time, ties broken by id, so pages never
// shuffle between requests. Timestamps are ISO strings, which sort as text.

/** -1, 0 or 1 by plain string order (not locale order: stable and cheap). */
export function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Oldest first, ties by id. */
export function byCreation(left: { created_at: string; id: string }, right: { created_at: string; id: string }): number {
  return compareText(left.created_at, right.created_at) || compareText(left.id, right.id);
}

/** Newest first: exactly the reverse of oldest first, so ties go by id, highest first. */
export function newestFirst(left: { created_at: string; id: string }, right: { created_at: string; id: string }): number {
  return byCreation(right, left);
}
