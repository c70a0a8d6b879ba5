// Writes a data dir's log directly in the store's format (header, one creator, N listings),
// streamed in chunks so a million listings never sit in memory as one string. Deterministic:
// the same count always gives the same bytes apart from the header's timestamp.

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export const LOG_FILE_NAME = 'marketplace.log';
export const BENCH_USER_ID = 'usr_bench';
export const LISTING_TYPES = ['SKILL', 'AGENT', 'PROMPT', 'TEMPLATE', 'DATASET', 'TOOL'] as const;

/** The word the filtered query searches for; it appears in about one listing in seven. */
export const FILTER_WORD = 'vector';
export const FILTER_TYPE = 'AGENT';

// 120 words, 18 drawn per listing: any one word lands in about 14% of listings, so the
// filtered query (`type` + `q`) matches about 2.4% of them.
export const WORDS = (
  'agent prompt template dataset tool skill vector search index cache stream batch queue ' +
  'parser router model embed chat voice image audio video text table graph chart report ' +
  'invoice ledger budget forecast sales lead email calendar meeting summary translate ' +
  'classify extract scrape crawl monitor alert deploy build test lint format review refactor ' +
  'debug profile trace metric log backup restore sync import export convert compress encrypt ' +
  'sign verify token session login signup billing payment refund order cart product catalog ' +
  'inventory shipping tracking support ticket feedback survey poll quiz lesson course tutor ' +
  'recipe travel weather finance crypto stock market legal contract policy privacy health ' +
  'fitness sleep music podcast story poem essay resume letter slide notebook sheet form ' +
  'workflow pipeline scheduler webhook bridge adapter plugin widget'
).split(' ');

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const CHUNK_BYTES = 1 << 20;
/** 2024-01-01T00:00:00Z: listing i is created i seconds later, so created_at is distinct and increasing. */
const EPOCH_MS = Date.UTC(2024, 0, 1);

export interface SeedOptions {
  dataDir: string;
  listingCount: number;
  /** How many listing ids to keep for the random-id scenario (chosen uniformly). */
  sampleIdCount?: number;
  seed?: number;
  /** Words in each description (default 12, ~250-byte listings; 130 makes them ~1 KB). */
  descriptionWords?: number;
  /** This share of the listings (0-1) is written a second time with a new price, as one update each would. */
  updatedShare?: number;
}

export interface SeedResult {
  logPath: string;
  listingCount: number;
  logBytes: number;
  seconds: number;
  sampleIds: string[];
}

/** A small seeded generator (mulberry32): the same seed gives the same data set every time. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

function base62(value: number, width: number): string {
  let text = '';
  let rest = value;
  for (let position = 0; position < width; position++) {
    text = BASE62[rest % 62] + text;
    rest = Math.floor(rest / 62);
  }
  return text;
}

function randomBase62(random: () => number, length: number): string {
  let text = '';
  for (let position = 0; position < length; position++) text += BASE62[Math.floor(random() * 62)];
  return text;
}

function pickWords(random: () => number, count: number): string[] {
  const words: string[] = [];
  for (let index = 0; index < count; index++) words.push(WORDS[Math.floor(random() * WORDS.length)]!);
  return words;
}

function capitalise(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** Listing number `index` of a data set: random-looking id (unique by its index suffix), plausible text. */
function listingRecord(random: () => number, index: number, descriptionWords: number): Record<string, unknown> {
  const createdAt = new Date(EPOCH_MS + index * 1000).toISOString();
  const title = pickWords(random, 3).map(capitalise).join(' ');
  const description = `${capitalise(pickWords(random, descriptionWords).join(' '))}.`;
  const tags = [...new Set(pickWords(random, 3))];
  const free = random() < 0.1;
  const price = free ? 0 : Math.round(random() * 50_000) / 100;
  return {
    id: `lst_${randomBase62(random, 10)}${base62(index, 6)}`,
    title,
    description,
    type: LISTING_TYPES[Math.floor(random() * LISTING_TYPES.length)],
    price,
    tags,
    status: 'active',
    owner_id: BENCH_USER_ID,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

function putLine(collection: string, record: Record<string, unknown>): string {
  return `${JSON.stringify({ op: 'put', c: collection, id: record.id, d: record })}\n`;
}

/** Indices (ascending) of `wanted` listings out of `total`, chosen uniformly without repeats. */
function sampleIndices(random: () => number, total: number, wanted: number): Set<number> {
  const chosen = new Set<number>();
  const target = Math.min(wanted, total);
  while (chosen.size < target) chosen.add(Math.floor(random() * total));
  return chosen;
}

/** Writes `<dataDir>/marketplace.log` (mode 0600), replacing any file there. */
export async function writeSeedLog(options: SeedOptions): Promise<SeedResult> {
  const started = performance.now();
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const logPath = join(options.dataDir, LOG_FILE_NAME);
  const random = seededRandom(options.seed ?? 20240101);
  const sampled = sampleIndices(seededRandom((options.seed ?? 20240101) ^ 0x5eed), options.listingCount, options.sampleIdCount ?? 10_000);
  const sampleIds: string[] = [];

  const out = createWriteStream(logPath, { mode: 0o600, flags: 'w' });
  const failed = once(out, 'error').then(([error]) => Promise.reject(error as Error));
  failed.catch(() => undefined);
  let chunk = '';
  const flush = async (): Promise<void> => {
    if (!out.write(chunk)) await Promise.race([once(out, 'drain'), failed]);
    chunk = '';
  };

  const createdAt = new Date(EPOCH_MS).toISOString();
  chunk += `${JSON.stringify({ format: 'marketplace-api-log', version: 1, created_at: new Date().toISOString() })}\n`;
  chunk += putLine('users', {
    id: BENCH_USER_ID,
    name: 'Bench',
    email: 'bench@example.com',
    bio: '',
    website: '',
    avatar_url: '',
    role: 'creator',
    created_at: createdAt,
    updated_at: createdAt,
  });
  const updatedShare = options.updatedShare ?? 0;
  for (let index = 0; index < options.listingCount; index++) {
    const record = listingRecord(random, index, options.descriptionWords ?? 12);
    if (sampled.has(index)) sampleIds.push(record.id as string);
    chunk += putLine('listings', record);
    // Drawn only when asked for, so the default data set stays byte for byte what it was.
    if (updatedShare > 0 && random() < updatedShare) chunk += putLine('listings', { ...record, price: (record.price as number) + 1, updated_at: new Date(EPOCH_MS + index * 1000 + 500).toISOString() });
    if (chunk.length >= CHUNK_BYTES) await flush();
  }
  if (chunk.length > 0) await flush();
  const closed = once(out, 'close');
  out.end();
  await Promise.race([closed, failed]);

  const { size } = await stat(logPath);
  return {
    logPath,
    listingCount: options.listingCount,
    logBytes: size,
    seconds: (performance.now() - started) / 1000,
    sampleIds: shuffle(sampleIds, seededRandom(7)),
  };
}

function shuffle<Item>(items: Item[], random: () => number): Item[] {
  for (let index = items.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [items[index], items[other]] = [items[other]!, items[index]!];
  }
  return items;
}
