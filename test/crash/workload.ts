// The crash harness's clients and their memory of what the server acknowledged. Each client is
// one creator with its own key, sending one write at a time (creates, updates, archives, webhook
// registrations and removals), so for every resource the latest acknowledgement is the truth.
// After a restart each client settles the write a kill cut off (applied whole, or not at all)
// and checks the server against every acknowledged state.

import { isDeepStrictEqual } from 'node:util';

export type Json = Record<string, unknown>;

/** A seeded random source, so a failing run can be replayed with --seed. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let value = this.state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  }

  integer(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

export interface HttpAnswer {
  status: number;
  body: Json;
}

/** A request that got no complete answer: the server died under it (or the network failed). */
export class NoAnswerError extends Error {}

export async function request(baseUrl: string, token: string, method: string, path: string, body?: unknown): Promise<HttpAnswer> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(baseUrl + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    text = await response.text();
  } catch (error) {
    throw new NoAnswerError(`${method} ${path}: ${(error as Error).message}`);
  }
  let parsed: Json = {};
  if (text !== '') {
    try {
      parsed = JSON.parse(text) as Json;
    } catch {
      parsed = { raw: text };
    }
  }
  return { status: response.status, body: parsed };
}

const LISTING_TYPES = ['SKILL', 'AGENT', 'PROMPT', 'TEMPLATE', 'DATASET', 'TOOL'] as const;
const WEBHOOK_FIELDS = ['id', 'url', 'events', 'description', 'created_at'] as const;
/** Webhooks a client keeps at most (the contract allows 20 per user). */
const MAX_WEBHOOKS = 12;

type Pending =
  | { kind: 'create-listing'; sent: { title: string; type: string; price: number } }
  | { kind: 'update-listing'; id: string; before: Json; patch: Json }
  | { kind: 'archive-listing'; id: string; before: Json }
  | { kind: 'create-webhook'; sent: { url: string; events: string[]; description: string } }
  | { kind: 'delete-webhook'; id: string; before: Json };

export interface Tally {
  acknowledged: { createListing: number; updateListing: number; archiveListing: number; createWebhook: number; deleteWebhook: number };
  /** Writes with no answer because of the kill. */
  inFlight: number;
  inFlightApplied: number;
  inFlightNotApplied: number;
  /** Listings read back and compared with their latest acknowledged state after a restart. */
  listingsChecked: number;
  /** Webhooks checked present as acknowledged, or absent after an acknowledged removal. */
  webhooksChecked: number;
  failures: string[];
}

export function newTally(): Tally {
  return {
    acknowledged: { createListing: 0, updateListing: 0, archiveListing: 0, createWebhook: 0, deleteWebhook: 0 },
    inFlight: 0,
    inFlightApplied: 0,
    inFlightNotApplied: 0,
    listingsChecked: 0,
    webhooksChecked: 0,
    failures: [],
  };
}

export class CrashClient {
  readonly name: string;
  readonly userId: string;
  readonly key: string;
  /** Latest acknowledged body of each listing this client made. */
  readonly listings = new Map<string, Json>();
  readonly webhooks = new Map<string, Json>();
  readonly deletedWebhooks = new Set<string>();
  /** Listings written since the last check. */
  private touched = new Set<string>();
  private pending: Pending | null = null;
  private serial = 0;
  private readonly random: Random;
  private readonly tally: Tally;
  private readonly listingCap: number;

  constructor(init: { name: string; userId: string; key: string; random: Random; tally: Tally; listingCap: number }) {
    this.name = init.name;
    this.userId = init.userId;
    this.key = init.key;
    this.random = init.random;
    this.tally = init.tally;
    this.listingCap = init.listingCap;
  }

  /** Sends writes one after another until `shouldStop` says so or the server dies. */
  async run(baseUrl: string, shouldStop: () => boolean): Promise<void> {
    while (!shouldStop()) {
      try {
        await this.writeOnce(baseUrl);
      } catch (error) {
        if (error instanceof NoAnswerError) return; // the kill; `pending` stays for the next check
        throw error;
      }
    }
  }

  private async writeOnce(baseUrl: string): Promise<void> {
    const active = [...this.listings.values()].filter((listing) => listing.status === 'active');
    // Past the cap a client only updates (no archives), so the log fills with superseded
    // records, which is what makes the server compact by itself in a long run.
    const canCreate = this.listings.size < this.listingCap;
    const roll = this.random.next();
    if (roll < 0.1) return this.webhooks.size < MAX_WEBHOOKS ? this.createWebhook(baseUrl) : this.deleteWebhook(baseUrl);
    if (roll < 0.15 && this.webhooks.size > 0) return this.deleteWebhook(baseUrl);
    if (canCreate && (roll < 0.45 || active.length === 0)) return this.createListing(baseUrl);
    if (active.length === 0) return this.webhooks.size < MAX_WEBHOOKS ? this.createWebhook(baseUrl) : this.deleteWebhook(baseUrl);
    if (canCreate && roll < 0.55) return this.archiveListing(baseUrl, this.random.pick(active));
    return this.updateListing(baseUrl, this.random.pick(active));
  }

  private async createListing(baseUrl: string): Promise<void> {
    this.serial += 1;
    const sent = {
      title: `${this.name} listing ${this.serial} ${this.random.integer(0, 1e9)}`,
      type: this.random.pick(LISTING_TYPES),
      price: this.random.integer(0, 100_000) / 100,
    };
    this.pending = { kind: 'create-listing', sent };
    const answer = await request(baseUrl, this.key, 'POST', '/v1/listings', sent);
    this.pending = null;
    const data = this.expectStatus(answer, 201, 'POST /v1/listings');
    if (data === null) return;
    this.listings.set(String(data.id), data);
    this.touched.add(String(data.id));
    this.tally.acknowledged.createListing += 1;
  }

  private async updateListing(baseUrl: string, before: Json): Promise<void> {
    const patch: Json = {};
    if (this.random.next() < 0.6) patch.title = `${this.name} renamed ${this.random.integer(0, 1e9)}`;
    if (this.random.next() < 0.5) patch.price = this.random.integer(0, 100_000) / 100;
    // Multi-byte text makes records of varied byte lengths; no outer spaces (the server trims).
    if (this.random.next() < 0.4) patch.description = Array.from({ length: this.random.integer(0, 300) }, () => 'é✓').join(' ');
    if (this.random.next() < 0.3) patch.tags = Array.from({ length: this.random.integer(0, 5) }, (_, index) => `tag${index}`);
    if (Object.keys(patch).length === 0) patch.type = this.random.pick(LISTING_TYPES);
    const id = String(before.id);
    this.pending = { kind: 'update-listing', id, before, patch };
    const answer = await request(baseUrl, this.key, 'PUT', `/v1/listings/${id}`, patch);
    this.pending = null;
    const data = this.expectStatus(answer, 200, `PUT /v1/listings/${id}`);
    if (data === null) return;
    this.listings.set(id, data);
    this.touched.add(id);
    this.tally.acknowledged.updateListing += 1;
  }

  private async archiveListing(baseUrl: string, before: Json): Promise<void> {
    const id = String(before.id);
    this.pending = { kind: 'archive-listing', id, before };
    const answer = await request(baseUrl, this.key, 'DELETE', `/v1/listings/${id}`);
    this.pending = null;
    const data = this.expectStatus(answer, 200, `DELETE /v1/listings/${id}`);
    if (data === null) return;
    this.listings.set(id, data);
    this.touched.add(id);
    this.tally.acknowledged.archiveListing += 1;
  }

  private async createWebhook(baseUrl: string): Promise<void> {
    this.serial += 1;
    // Only user.updated: no listing write here queues a delivery, so the workload stays the listings'.
    const sent = { url: `http://127.0.0.1:9/hook/${this.serial}`, events: ['user.updated'], description: `${this.name} webhook ${this.serial}` };
    this.pending = { kind: 'create-webhook', sent };
    const answer = await request(baseUrl, this.key, 'POST', '/v1/webhooks', sent);
    this.pending = null;
    const data = this.expectStatus(answer, 201, 'POST /v1/webhooks');
    if (data === null) return;
    this.webhooks.set(String(data.id), data);
    this.tally.acknowledged.createWebhook += 1;
  }

  private async deleteWebhook(baseUrl: string): Promise<void> {
    const before = this.random.pick([...this.webhooks.values()]);
    const id = String(before.id);
    this.pending = { kind: 'delete-webhook', id, before };
    const answer = await request(baseUrl, this.key, 'DELETE', `/v1/webhooks/${id}`);
    this.pending = null;
    if (this.expectStatus(answer, 200, `DELETE /v1/webhooks/${id}`) === null) return;
    this.webhooks.delete(id);
    this.deletedWebhooks.add(id);
    this.tally.acknowledged.deleteWebhook += 1;
  }

  /** The answer's `data` on the expected status; anything else is a failure of the run. */
  private expectStatus(answer: HttpAnswer, status: number, what: string): Json | null {
    if (answer.status === status && typeof answer.body.data === 'object' && answer.body.data !== null) return answer.body.data as Json;
    this.fail(`${what} answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
    return null;
  }

  private fail(message: string): void {
    this.tally.failures.push(`${this.name}: ${message.length > 1500 ? `${message.slice(0, 1500)}…` : message}`);
  }

  /**
   * After a restart: settles the write the kill cut off, then compares the server with every
   * acknowledged state (listings written since the last check, plus `sample` others; all of
   * them when `sample` is Infinity).
   */
  async check(baseUrl: string, random: Random, sample: number): Promise<void> {
    if (this.pending !== null) await this.settlePending(baseUrl, this.pending);
    this.pending = null;
    const others = [...this.listings.keys()].filter((id) => !this.touched.has(id));
    const sampled = sample >= others.length ? others : Array.from({ length: sample }, () => random.pick(others));
    for (const id of new Set([...this.touched, ...sampled])) {
      const answer = await request(baseUrl, this.key, 'GET', `/v1/listings/${id}`);
      this.tally.listingsChecked += 1;
      if (!isDeepStrictEqual(answer.body.data, this.listings.get(id))) {
        this.fail(`listing ${id} is ${answer.status} ${JSON.stringify(answer.body)}, but the last acknowledged state was ${JSON.stringify(this.listings.get(id))}`);
      }
    }
    this.touched = new Set();
    await this.checkWebhooks(baseUrl);
  }

  private async checkWebhooks(baseUrl: string): Promise<void> {
    const listed = await this.listWebhooks(baseUrl);
    for (const [id, acknowledged] of this.webhooks) {
      this.tally.webhooksChecked += 1;
      const found = listed.get(id);
      if (found === undefined) this.fail(`acknowledged webhook ${id} is missing`);
      else if (!sameWebhook(found, acknowledged)) this.fail(`webhook ${id} is ${JSON.stringify(found)}, acknowledged as ${JSON.stringify(acknowledged)}`);
    }
    for (const id of this.deletedWebhooks) {
      this.tally.webhooksChecked += 1;
      if (listed.has(id)) this.fail(`webhook ${id} was removed (acknowledged) but is back`);
    }
    for (const id of listed.keys()) {
      if (!this.webhooks.has(id)) this.fail(`webhook ${id} was never acknowledged nor in flight`);
    }
  }

  private async listWebhooks(baseUrl: string): Promise<Map<string, Json>> {
    const answer = await request(baseUrl, this.key, 'GET', '/v1/webhooks?limit=100');
    if (answer.status !== 200 || !Array.isArray(answer.body.data)) {
      this.fail(`GET /v1/webhooks answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
      return new Map();
    }
    return new Map((answer.body.data as Json[]).map((webhook) => [String(webhook.id), webhook]));
  }

  /** A write with no answer: after the restart it must be there whole, or not at all. */
  private async settlePending(baseUrl: string, pending: Pending): Promise<void> {
    this.tally.inFlight += 1;
    const applied = (yes: boolean) => {
      if (yes) this.tally.inFlightApplied += 1;
      else this.tally.inFlightNotApplied += 1;
    };
    switch (pending.kind) {
      case 'create-listing': {
        const query = new URLSearchParams({ owner_id: this.userId, q: pending.sent.title, limit: '100' });
        const answer = await request(baseUrl, this.key, 'GET', `/v1/listings?${query}`);
        const matches = ((answer.body.data as Json[] | undefined) ?? []).filter((listing) => listing.title === pending.sent.title);
        if (matches.length === 0) return applied(false);
        if (matches.length > 1) return this.fail(`in-flight create "${pending.sent.title}" is present ${matches.length} times`);
        const shown = await request(baseUrl, this.key, 'GET', `/v1/listings/${String(matches[0]!.id)}`);
        const listing = shown.body.data as Json;
        const whole =
          listing.type === pending.sent.type &&
          listing.price === pending.sent.price &&
          listing.status === 'active' &&
          listing.owner_id === this.userId &&
          listing.created_at === listing.updated_at;
        if (!whole) return this.fail(`in-flight create is half-present: sent ${JSON.stringify(pending.sent)}, found ${JSON.stringify(listing)}`);
        this.listings.set(String(listing.id), listing);
        this.touched.add(String(listing.id));
        return applied(true);
      }
      case 'update-listing':
      case 'archive-listing': {
        const answer = await request(baseUrl, this.key, 'GET', `/v1/listings/${pending.id}`);
        const listing = answer.body.data as Json;
        if (isDeepStrictEqual(listing, pending.before)) return applied(false);
        const expected: Json = pending.kind === 'update-listing' ? { ...pending.before, ...pending.patch } : { ...pending.before, status: 'archived' };
        const whole =
          typeof listing === 'object' &&
          listing !== null &&
          isDeepStrictEqual({ ...listing, updated_at: null }, { ...expected, updated_at: null }) &&
          String(listing.updated_at) >= String(pending.before.updated_at);
        if (!whole) {
          return this.fail(`in-flight ${pending.kind} of ${pending.id} is half-applied: before ${JSON.stringify(pending.before)}, sent ${JSON.stringify(expected)}, found ${answer.status} ${JSON.stringify(answer.body)}`);
        }
        this.listings.set(pending.id, listing);
        this.touched.add(pending.id);
        return applied(true);
      }
      case 'create-webhook': {
        const listed = await this.listWebhooks(baseUrl);
        const found = [...listed.values()].filter((webhook) => webhook.description === pending.sent.description);
        if (found.length === 0) return applied(false);
        const webhook = found[0]!;
        if (found.length > 1 || webhook.url !== pending.sent.url || !isDeepStrictEqual(webhook.events, pending.sent.events)) {
          return this.fail(`in-flight webhook registration is half-present: sent ${JSON.stringify(pending.sent)}, found ${JSON.stringify(found)}`);
        }
        this.webhooks.set(String(webhook.id), webhook);
        return applied(true);
      }
      case 'delete-webhook': {
        const listed = await this.listWebhooks(baseUrl);
        const found = listed.get(pending.id);
        if (found === undefined) {
          this.webhooks.delete(pending.id);
          this.deletedWebhooks.add(pending.id);
          return applied(true);
        }
        if (!sameWebhook(found, pending.before)) return this.fail(`webhook ${pending.id} changed under an in-flight removal: ${JSON.stringify(found)}`);
        return applied(false);
      }
    }
  }
}

/** Webhooks compare on what the owner set; `active` and `last_delivery` move with deliveries. */
function sameWebhook(left: Json, right: Json): boolean {
  return WEBHOOK_FIELDS.every((field) => isDeepStrictEqual(left[field], right[field]));
}
