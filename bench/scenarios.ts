// What each scenario sends, to which targets, and what it is held to. Each scenario's requests
// are written once to a file (METHOD<TAB>PATH[<TAB>body] per line) that wrk and loadgen share.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FILTER_TYPE, FILTER_WORD, LISTING_TYPES, seededRandom } from './seed.ts';

/** `variant` is a second copy of the server with other settings (--variant), e.g. analytics off. */
export type TargetName = 'server' | 'variant' | 'ceiling' | 'naive';

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
}

export interface Goal {
  label: string;
  metric: 'ratio_ceiling' | 'ratio_naive' | 'rps' | 'p99_ms' | 'fsyncs_per_write';
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

/** The read scenarios A, B1, B2, C (also used by --scale). */
export function readScenarios(inputs: ScenarioInputs): Scenario[] {
  const { dir, readConnections } = inputs;
  const pages = Array.from({ length: pageCount(inputs.listingCount) }, (_, index) => `GET\t/v1/listings?page=${index + 1}&limit=20`);
  return [
    {
      id: 'A',
      title: 'GET /v1/listings?limit=20, one query (cache hits)',
      targets: ['server', 'ceiling', 'naive'],
      connections: readConnections,
      requestsFile: writeRequests(dir, 'A', [`GET\t${LIST_PATH}`]),
      key: 'main',
      expectStatus: 200,
      goals: [
        { label: '≥ 0.8 × ceiling', metric: 'ratio_ceiling', atLeast: 0.8 },
        { label: 'p99 ≤ 10 ms', metric: 'p99_ms', atMost: 10 },
      ],
    },
    {
      id: 'B1',
      title: `GET /v1/listings?page=<1..${pages.length}>&limit=20`,
      targets: ['server', 'ceiling', 'naive'],
      connections: readConnections,
      requestsFile: writeRequests(dir, 'B1', pages),
      key: 'main',
      expectStatus: 200,
      goals: [{ label: '≥ 1.0 × naive', metric: 'ratio_naive', atLeast: 1 }],
    },
    {
      id: 'B2',
      title: `GET ${FILTERED_PATH} (filtered)`,
      targets: ['server', 'ceiling', 'naive'],
      connections: readConnections,
      requestsFile: writeRequests(dir, 'B2', [`GET\t${FILTERED_PATH}`]),
      key: 'main',
      expectStatus: 200,
      goals: [{ label: '≥ 1.0 × naive', metric: 'ratio_naive', atLeast: 1 }],
    },
    {
      id: 'C',
      title: `GET /v1/listings/:id over ${inputs.sampleIds.length.toLocaleString('en')} random ids`,
      targets: ['server', 'ceiling', 'naive'],
      connections: readConnections,
      requestsFile: writeRequests(dir, 'C', inputs.sampleIds.map((id) => `GET\t/v1/listings/${id}`)),
      key: 'main',
      expectStatus: 200,
      goals: [
        { label: '≥ 1.0 × naive', metric: 'ratio_naive', atLeast: 1 },
        { label: 'p99 ≤ 10 ms', metric: 'p99_ms', atMost: 10 },
      ],
    },
  ];
}

/** E (429s) and D (durable writes); D runs last since it grows the data set. */
export function otherScenarios(inputs: ScenarioInputs): Scenario[] {
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
    bodies.push(`POST\t/v1/listings\t${JSON.stringify(body)}`);
  }
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
      title: `POST /v1/listings (durable writes)`,
      targets: ['server'],
      connections: inputs.writeConnections,
      requestsFile: writeRequests(inputs.dir, 'D', bodies),
      key: 'main',
      expectStatus: 201,
      goals: [
        { label: '≥ 5,000 writes/s', metric: 'rps', atLeast: 5000 },
        { label: '≤ 0.2 fsyncs/write', metric: 'fsyncs_per_write', atMost: 0.2 },
      ],
    },
  ];
}
