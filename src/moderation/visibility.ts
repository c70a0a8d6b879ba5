// Who sees what moved to src/domain/visibility.ts (a rule on records, consulted by lists,
// look-ups and events alike); this keeps the outbox's import working until it moves with it.
export * from '../domain/visibility.ts';
