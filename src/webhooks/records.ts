// The webhook records moved to src/domain/webhook-records.ts (records are the domain's, below
// every feature); this keeps the outbox's import working until it moves with it.
export * from '../domain/webhook-records.ts';
