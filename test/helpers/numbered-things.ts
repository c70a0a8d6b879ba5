// A collection of numbered records for tests of the store and its back-ends: `thing_<n>` ids
// holding one number, so what a store holds can be compared in one line.

import { collectionName, type StoredRecord } from '../../src/store/store.ts';

export interface Thing extends StoredRecord {
  n: number;
}

export const THINGS = collectionName<Thing>('things');

/** One write putting `id` with the number `n`. */
export function put(id: string, n: number) {
  const data: Thing = { id, n };
  return { op: 'put' as const, collection: THINGS, id, data };
}
