// Demo data for a first start on an empty data dir (MARKETPLACE_DEMO=1, the default): two
// creators with a dozen listings and one member, and a key each, printed once so a newcomer
// can make a first request at once. Written through the store, like any other change, and
// decided when it commits, so instances sharing one database seed it once. main.ts loads it
// only when MARKETPLACE_DEMO is on; the banner's view of the keys is demo-keys.ts.

import { generateApiKey } from './auth/keys.ts';
import type { Clock } from './clock.ts';
import { isoTime } from './clock.ts';
import { newId } from './domain/ids.ts';
import { KEYS, LISTINGS, USERS, type KeyRecord, type ListingRecord, type ListingType, type UserRecord } from './domain/records.ts';
import type { WriteOp } from './store/format.ts';
import type { Store } from './store/store.ts';
import { DEMO_KEY_NAME, type DemoKey } from './demo-keys.ts';

const LISTINGS_BY_CREATOR: Array<Array<[string, ListingType, number, string[], string]>> = [
  [
    ['Vector search skill', 'SKILL', 9.99, ['search', 'embeddings'], 'Adds semantic search over your documents to any agent.'],
    ['Support triage agent', 'AGENT', 49, ['support', 'email'], 'Reads the support inbox, labels each message and drafts replies.'],
    ['Release notes prompt', 'PROMPT', 0, ['writing', 'git'], 'Turns a list of merged pull requests into readable release notes.'],
    ['Invoice extraction template', 'TEMPLATE', 15, ['finance', 'pdf'], 'Extracts totals, dates and line items from PDF invoices.'],
    ['City weather dataset', 'DATASET', 120, ['weather', 'csv'], 'Hourly weather for 200 cities since 2015, as CSV.'],
    ['SQL explainer tool', 'TOOL', 5, ['sql', 'databases'], 'Explains a query plan in plain words and suggests indexes.'],
  ],
  [
    ['Code review agent', 'AGENT', 79, ['code', 'review'], 'Reviews pull requests for bugs, style and missing tests.'],
    ['Meeting summary prompt', 'PROMPT', 2.5, ['meetings', 'writing'], 'Summarises a transcript into decisions and action items.'],
    ['Web scraping skill', 'SKILL', 19, ['scraping', 'html'], 'Fetches pages politely and extracts structured fields.'],
    ['Landing page template', 'TEMPLATE', 0, ['web', 'marketing'], 'A fast, accessible landing page to start from.'],
    ['Product reviews dataset', 'DATASET', 250, ['reviews', 'nlp'], '1.2 million labelled product reviews in 12 languages.'],
    ['Regex builder tool', 'TOOL', 3, ['regex', 'text'], 'Builds and tests regular expressions from examples.'],
  ],
];

/**
 * Seeds the demo when the store has no users yet, also when other instances sharing its
 * database try at the same moment (one of them seeds); returns the plain keys to print (or []
 * when this call did not seed).
 */
export async function seedDemo(store: Store, clock: Clock, brand: string): Promise<DemoKey[]> {
  if (store.size(USERS) > 0) return [];
  const ops: WriteOp[] = [];
  const keys: DemoKey[] = [];
  let tick = clock.now() - 60_000;
  const nextTime = () => isoTime((tick += 1000));
  const people: Array<[string, string, 'creator' | 'member', string[]]> = [
    ['Ada Creator', 'ada@example.com', 'creator', ['read:listings', 'write:listings', 'read:users', 'write:users', 'read:analytics', 'read:webhooks', 'write:webhooks']],
    ['Grace Creator', 'grace@example.com', 'creator', ['read:listings', 'write:listings', 'read:users', 'read:analytics']],
    ['Max Member', 'max@example.com', 'member', ['read:listings', 'read:users']],
  ];
  for (const [index, [name, email, role, permissions]] of people.entries()) {
    const createdAt = nextTime();
    const user: UserRecord = { id: newId('usr'), name, email, bio: '', website: '', avatar_url: '', role, created_at: createdAt, updated_at: createdAt };
    ops.push({ op: 'put', collection: USERS, id: user.id, data: user });
    const generated = generateApiKey('live', brand);
    const key: KeyRecord = {
      id: newId('key'),
      user_id: user.id,
      name: DEMO_KEY_NAME,
      prefix: generated.prefix,
      last_four: generated.lastFour,
      hash: generated.hash,
      permissions,
      rate_limit: 100,
      created_at: createdAt,
      updated_at: createdAt,
      revoked_at: null,
    };
    ops.push({ op: 'put', collection: KEYS, id: key.id, data: key });
    keys.push({ user: name, user_id: user.id, role, key: generated.key, plain: true, permissions });
    for (const [title, type, price, tags, description] of LISTINGS_BY_CREATOR[index] ?? []) {
      const at = nextTime();
      const listing: ListingRecord = { id: newId('lst'), title, description, type, price, tags, status: 'active', owner_id: user.id, created_at: at, updated_at: at };
      ops.push({ op: 'put', collection: LISTINGS, id: listing.id, data: listing });
    }
  }
  // Decided when it commits, not on the size read above: instances sharing one database and
  // starting together all found it empty, and only the first to commit may seed it.
  return store.commit((tx) => (tx.size(USERS) > 0 ? { ops: [], result: [] } : { ops, result: keys }));
}
