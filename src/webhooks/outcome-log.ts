// The last delivery outcomes of each webhook, for its owner in the portal and /v1 (contract
// sections 20 and 22: time, event, status, attempts, duration — never a body), at most the 50
// newest. Written small: each attempt's outcome is one record of its own (~240 bytes, in
// `delivery_outcome_entries`, id `<webhook id>.<n>`), and the same write deletes the one 50
// before it, instead of rewriting the whole list (~10 KB once it holds 50). The webhook record,
// rewritten by every attempt for its `last_delivery` anyway, carries `outcomes_written`: the
// next n, and so which 50 entries are the newest.
//
// Data directories from before hold the list form (one `delivery_outcomes` record per
// webhook). It is read after the entries, and deleted by the write that adds the 50th entry,
// when the entries alone hold the 50 newest.

import { DELIVERY_OUTCOME_ENTRIES, DELIVERY_OUTCOMES, WEBHOOKS } from '../domain/records.ts';
import type { RecordReader } from '../store/collections.ts';
import type { WriteOp } from '../store/format.ts';
import type { DeliveryOutcome, DeliveryOutcomeEntryRecord, DeliveryOutcomeLogRecord, WebhookRecord } from '../domain/webhook-records.ts';

export const MAX_OUTCOMES_PER_WEBHOOK = 50;

export type { DeliveryOutcome, DeliveryOutcomeEntryRecord, DeliveryOutcomeLogRecord } from '../domain/webhook-records.ts';

/** The id of the record holding the webhook's outcome number `n` (from 0). */
export function outcomeEntryId(webhookId: string, n: number): string {
  return `${webhookId}.${n}`;
}

/** An outcome as its entry stores it: its fields as a list, in the order of DeliveryOutcomeEntryRecord['o']. */
function entryOf(id: string, outcome: DeliveryOutcome): DeliveryOutcomeEntryRecord {
  const { at, event_id, event, status, attempts, response_status, duration_ms } = outcome;
  return { id, o: [at, event_id, event, status, attempts, response_status, duration_ms, outcome.next_attempt_at ?? null] };
}

function outcomeOf(entry: DeliveryOutcomeEntryRecord): DeliveryOutcome {
  const [at, event_id, event, status, attempts, response_status, duration_ms, next_attempt_at] = entry.o;
  return { at, event_id, event, status, attempts, response_status, duration_ms, next_attempt_at };
}

/**
 * Logging `outcome` for `webhook`: the webhook as it must be written (its `outcomes_written`
 * counted on; the caller adds its own changes), and the ops: the new entry, the deletion of the
 * one 50 before it, and — when this is the 50th entry — of the list-form record `legacy`.
 */
export function outcomeLogged(webhook: WebhookRecord, outcome: DeliveryOutcome, legacy: DeliveryOutcomeLogRecord | undefined): { webhook: WebhookRecord; ops: WriteOp[] } {
  const n = webhook.outcomes_written ?? 0;
  const entry = entryOf(outcomeEntryId(webhook.id, n), outcome);
  const ops: WriteOp[] = [{ op: 'put', collection: DELIVERY_OUTCOME_ENTRIES, id: entry.id, data: entry }];
  if (n >= MAX_OUTCOMES_PER_WEBHOOK) ops.push({ op: 'del', collection: DELIVERY_OUTCOME_ENTRIES, id: outcomeEntryId(webhook.id, n - MAX_OUTCOMES_PER_WEBHOOK) });
  if (legacy !== undefined && n + 1 >= MAX_OUTCOMES_PER_WEBHOOK) ops.push({ op: 'del', collection: DELIVERY_OUTCOMES, id: legacy.id });
  return { webhook: { ...webhook, outcomes_written: n + 1 }, ops };
}

/** The ids of the entries the webhook keeps, newest first. */
function keptEntryIds(reader: RecordReader, webhookId: string): string[] {
  const written = reader.get(WEBHOOKS, webhookId)?.outcomes_written ?? 0;
  const ids: string[] = [];
  for (let n = written - 1; n >= 0 && n >= written - MAX_OUTCOMES_PER_WEBHOOK; n -= 1) ids.push(outcomeEntryId(webhookId, n));
  return ids;
}

/** The webhook's last outcomes as stored, newest first, at most 50 (none for an unknown webhook). */
export function loggedOutcomes(reader: RecordReader, webhookId: string): DeliveryOutcome[] {
  const outcomes: DeliveryOutcome[] = [];
  for (const id of keptEntryIds(reader, webhookId)) {
    const entry = reader.get(DELIVERY_OUTCOME_ENTRIES, id);
    if (entry !== undefined) outcomes.push(outcomeOf(entry));
  }
  const legacy = reader.get(DELIVERY_OUTCOMES, webhookId)?.outcomes ?? [];
  return legacy.length === 0 ? outcomes : [...outcomes, ...legacy].slice(0, MAX_OUTCOMES_PER_WEBHOOK);
}

/** The event an outcome record names, or every one a list-form record names. */
export function eventsNamedBy(collection: string, record: unknown): string[] {
  if (record === undefined) return [];
  if (collection === DELIVERY_OUTCOME_ENTRIES) return [(record as DeliveryOutcomeEntryRecord).o[1]];
  return (record as DeliveryOutcomeLogRecord).outcomes.map((outcome) => outcome.event_id);
}

/** The deletions removing every outcome record of the webhook (with the webhook, or its owner). */
export function outcomeRemovalOps(reader: RecordReader, webhookId: string): WriteOp[] {
  const ops: WriteOp[] = [];
  if (reader.get(DELIVERY_OUTCOMES, webhookId) !== undefined) ops.push({ op: 'del', collection: DELIVERY_OUTCOMES, id: webhookId });
  for (const id of keptEntryIds(reader, webhookId)) {
    if (reader.get(DELIVERY_OUTCOME_ENTRIES, id) !== undefined) ops.push({ op: 'del', collection: DELIVERY_OUTCOME_ENTRIES, id });
  }
  return ops;
}
