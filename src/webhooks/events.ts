// The event kinds moved to src/domain/events.ts; this keeps the outbox's import working until it moves with it.
export * from '../domain/events.ts';
