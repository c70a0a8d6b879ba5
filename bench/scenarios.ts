// What each scenario sends, to which targets, and what it is held to. Each scenario's requests
// are written once to a file (METHOD<TAB>PATH[<TAB>body] per line) that wrk and loadgen share.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FILTER_TYPE, FILTER_WORD, LISTING_TYPES, seededRandom, WORDS } from './seed.ts';

/** `variant` is a second copy of the server with other settings (--variant), e.g. analytics off. */
/** `headers`: the ceiling again, also sending the five headers the contract asks of every answer. */
/** `same`: a bare node:http server replaying the server's own captured answers (same status, headers, body). */
/** `group`: a bare node:http durable writer appending the server's own log line per POST, group-committed. */
export type TargetName = 'server' | 'variant' | 'same' | 'group' | 'ceiling' | 'headers' | 'naive';

export interface Scenario {
  id: string;
  title: string;
  /** Which targets take part; the server always does. */
  targets: TargetName[];
  connections: number;
  requestsFile: string;
  /** The key the server requests carry: a fresh high-limit key, or an exhausted rate_limit-1 key. */
  key: 'main' | 'exhausted';
  /** Status every answer should have; others are counted and shown. */
  expectStatus: number;
  /** Targets, for the table's verdict column (from the issue; for information). */
  goals: Goal[];
  /** Headers the server's requests carry besides the key (e.g. Accept-Encoding). */
  extraHeaders?: string[];
  /** The scenario whose server rate this one is reported against, in the same run (e.g. AG against A). */
  comparedWith?: { id: string; atLeast: number };
}

export interface Goal {
  label: string;
  metric: 'ratio_same' | 'ratio_group' | 'ratio_ceiling' | 'ratio_naive' | 'rps' | 'p99_ms' | 'cpu_us_per_request' | 'fsyncs_per_write';
  atLeast?: number;
  atMost?: number;
}

export interface ScenarioInputs {
  dir: string;
  listingCount: number;
  sampleIds: string[];
  readConnections: number;
  writeConnections: number;
}

function writeRequests(dir: string, name: string, lines: string[]): string {
  const file = join(dir, `requests-${name}.txt`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Pages a scenario B request may ask for: 1..500, or fewer when the data set is smaller. */
export function pageCount(listingCount: number): number {
  return Math.max(1, Math.min(500, Math.ceil(listingCount / 20)));
}

export const FILTERED_PATH = `/v1/listings?type=${FILTER_TYPE}&q=${FILTER_WORD}&limit=20`;
export const LIST_PATH = '/v1/listings?limit=20';
/** A page no scenario asks for before the same-bytes baseline captures it: an uncached answer. */
export const UNCACHED_SAMPLE_PATH = '/v1/listings?page=9&limit=20';

/**
 * Page sizes for the cache-miss scenarios B3 and B4: with 20 sizes the distinct queries far
 * outnumber the 2,000 pages the server caches, so most requests are misses (with limit=20
 * alone, B1's 500 pages all sit in the cache after the first pass).
 */
const MISS_LIMITS = Array.from({ length: 20 }, (_, index) => 11 + index);
/** 24 of the seed's words, spread over its list, for B4's text searches. */
const MISS_WORDS = WORDS.filter((_, index) => index % 5 === 0).slice(0, 24);

/** B3: every page of the default sort, at 20 page sizes. */
function missPages(listingCount: number): string[] {
  const lines: string[] = [];
  for (const limit of MISS_LIMITS) {
    const pages = Math.max(1, Math.min(500, Math.ceil(listingCount / limit)));
    for (let page = 1; page <= pages; page++) lines.push(`GET\t/v1/listings?page=${page}&limit=${limit}`);
  }
  return lines;
}

/** B4: type + text filters (6 types × 24 words), first two pages, 20 page sizes. */
function missFilters(): string[] {
  const lines: string[] = [];
  for (const type of LISTING_TYPES) {
    for (const word of MISS_WORDS) {
      for (const limit of MISS_LIMITS) {
        for (const page of [1, 2]) lines.push(`GET\t/v1/listings?type=${type}&q=${word}&page=${page}&limit=${limit}`);
      }
    }
  }
  return lines;
}

/** One request of B3 and one of B4, for the like-for-like check against the naive baseline. */
export const MISS_SAMPLE_PATHS = ['/v1/listings?page=7&limit=13', `/v1/listings?type=TOOL&q=${MISS_WORDS[3]}&page=2&limit=17`];

/** The read scenarios A, B1-B4, C (also used by --scale). */
export function readScenarios(inputs: ScenarioInputs): Scenario[] {
  const { dir, readConnections } = inputs;
  const pages = Array.from({ length: pageCount(inputs.listingCount) }, (_, index) => `GET\t/v1/listings?page=${index + 1}&limit=20`);
  const listRequests = writeRequests(dir, 'A', [`GET\t${LIST_PATH}`]);
  return [
    {
      id: 'A',
      title: 'GET /v1/listings?limit=20, one query (cache hits)',
      targets: ['server', 'same', 'ceiling', 'headers', 'naive'],
      connections: readConnections,
      requestsFile: listRequests,
      key: 'main',
      expectStatus: 200,
      goals: [
        { label: '≥ 0.85 × same bytes', metric: 'ratio_same', atLeast: 0.85 },
        { label: 'p99 ≤ 10 ms', metric: 'p99_ms', atMost: 10 },
      ],
    },
    {
      // The cached page is kept gzipped beside its plain bytes, so this should cost about what A does.
      id: 'AG',
      title: 'GET /v1/listings?limit=20 with Accept-Encoding: gzip, one query (cache hits, compressed once)',
      targets: ['server'],
      connections: readConnections,
      requestsFile: listRequests,
      key: 'main',
      expectStatus: 200,
      goals: [],
      extraHeaders: ['Accept-Encoding: gzip'],
      comparedWith: { id: 'A', atLeast: 0.9 },
    },
    {
      id: 'B1',
      title: `GET /v1/listings?page=<1..${pages.length}>&limit=20`,
      targets: ['server', 'ceiling', 'naive'],
      connections: readConnections,
      requestsFile: writeRequests(dir, 'B1', pages),
      key: 'main',
      expectStatus: 200,
      goals: [{ label: '≥ 1.0 × naive', metric: 'ratio_naive', atLeast: 1 }, { label: 'p99 ≤ 20 ms', metric: 'p99_ms', atMost: 20 }],
    },
    {
      id: 'B2',
      title: `GET ${FILTERED_PATH} (filtered)`,
      targets: ['server', 'ceiling', 'naive'],
      connections: readConnections,
      requestsFile: writeRequests(dir, 'B2', [`GET\t${FILTERED_PATH}`]),
      key: 'main',
      expectStatus: 200,
      goals: [{ label: '≥ 1.0 × naive', metric: 'ratio_naive', atLeast: 1 }, { label: 'p99 ≤ 20 ms', metric: 'p99_ms', atMost: 20 }],
    },
    {
      id: 'B3',
      title: 'GET /v1/listings?page=<1..500>&limit=<11..30> (mostly cache misses)',
      targets: ['server', 'same', 'ceiling', 'naive'],
      connections: readConnections,
      requestsFile: writeRequests(dir, 'B3', missPages(inputs.listingCount)),
      key: 'main',
      expectStatus: 200,
      goals: [
        { label: '≥ 1.0 × naive', metric: 'ratio_naive', atLeast: 1 },
        { label: '≥ 0.7 × same bytes', metric: 'ratio_same', atLeast: 0.7 },
        { label: 'p99 ≤ 20 ms', metric: 'p99_ms', atMost: 20 },
        { label: '≤ 1,000 µs CPU/req', metric: 'cpu_us_per_request', atMost: 1000 },
      ],
    },
    {
      id: 'B4',
      title: `GET /v1/listings?type=<6 types>&q=<${MISS_WORDS.length} words>&page=<1,2>&limit=<11..30> (filtered, mostly misses)`,
      targets: ['server', 'ceiling', 'naive'],
      connections: readConnections,
      requestsFile: writeRequests(dir, 'B4', missFilters()),
      key: 'main',
      expectStatus: 200,
      goals: [{ label: '≥ 1.0 × naive', metric: 'ratio_naive', atLeast: 1 }, { label: 'p99 ≤ 20 ms', metric: 'p99_ms', atMost: 20 }, { label: '≤ 1,000 µs CPU/req', metric: 'cpu_us_per_request', atMost: 1000 }],
    },
    {
      id: 'C',
      title: `GET /v1/listings/:id over ${inputs.sampleIds.length.toLocaleString('en')} random ids`,
      targets: ['server', 'same', 'ceiling', 'naive'],
      connections: readConnections,
      requestsFile: writeRequests(dir, 'C', inputs.sampleIds.map((id) => `GET\t/v1/listings/${id}`)),
      key: 'main',
      expectStatus: 200,
      goals: [
        { label: '≥ 1.0 × naive', metric: 'ratio_naive', atLeast: 1 },
        { label: '≥ 0.7 × same bytes', metric: 'ratio_same', atLeast: 0.7 },
        { label: 'p99 ≤ 10 ms', metric: 'p99_ms', atMost: 10 },
      ],
    },
  ];
}

/** The path scenario D creates listings at. */
export const WRITE_PATH = '/v1/listings';

/** Scenario D's 1,000 request bodies (JSON text): listings of every type, prices and tags varying. */
export function durableWriteBodies(): string[] {
  const random = seededRandom(4242);
  const bodies: string[] = [];
  for (let index = 0; index < 1000; index++) {
    const body = {
      title: `Bench listing ${index}`,
      description: 'Created by the benchmark to measure durable writes.',
      type: LISTING_TYPES[index % LISTING_TYPES.length],
      price: Math.round(random() * 10_000) / 100,
      tags: ['bench', `t${index % 17}`],
    };
    bodies.push(JSON.stringify(body));
  }
  return bodies;
}

/** E (429s) and D (durable writes); D runs last since it grows the data set. */
export function otherScenarios(inputs: ScenarioInputs): Scenario[] {
  const bodies = durableWriteBodies().map((body) => `POST\t${WRITE_PATH}\t${body}`);
  return [
    {
      id: 'E',
      title: 'GET /v1/listings?limit=20 with a key past its limit (429)',
      targets: ['server'],
      connections: inputs.readConnections,
      requestsFile: writeRequests(inputs.dir, 'E', [`GET\t${LIST_PATH}`]),
      key: 'exhausted',
      expectStatus: 429,
      goals: [],
    },
    {
      id: 'D',
      title: `POST ${WRITE_PATH} (durable writes)`,
      targets: ['server', 'group'],
      connections: inputs.writeConnections,
      requestsFile: writeRequests(inputs.dir, 'D', bodies),
      key: 'main',
      expectStatus: 201,
      goals: [
        { label: '≥ 0.8 × group commit', metric: 'ratio_group', atLeast: 0.8 },
        { label: '≤ 0.05 fsyncs/write', metric: 'fsyncs_per_write', atMost: 0.05 },
        { label: 'p99 ≤ 20 ms', metric: 'p99_ms', atMost: 20 },
      ],
    },
  ];
}
