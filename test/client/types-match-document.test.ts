// The client's hand-written types (src/client/types.ts) against the document the server serves:
// openapi-typescript turns /openapi.json into TypeScript, and the TypeScript compiler checks,
// for each client type and the document's type for the same thing, that both have the same
// field names, the same required fields, and are assignable to each other. A field added,
// dropped or made optional on either side fails this test, so the two cannot drift apart.
// Not in test:unit (slow: runs the TypeScript compiler over the generated document types);
// npm test runs it.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { startServer } from '../helpers/server.ts';

const CLIENT_TYPES = fileURLToPath(new URL('../../src/client/types.ts', import.meta.url));

/** A 2xx answer's JSON body, an operation's JSON request body, its query parameters. */
const answerOf = (operation: string, status: number): string => `Json<operations['${operation}']['responses'][${status}]>`;
const bodyOf = (operation: string): string => `Json<NonNullable<operations['${operation}']['requestBody']>>`;
const queryOf = (operation: string): string => `NonNullable<operations['${operation}']['parameters']['query']>`;

/** Each client type (left) and the document's type for the same thing (right). */
const PAIRS: Array<[client: string, document: string]> = [
  // Resources
  ['Client.Listing', "S['Listing']"],
  ['Client.Pagination', "S['Pagination']"],
  ['Client.ListResponse<Client.Listing>', answerOf('listListings', 200)],
  ['Client.PublicUser', "S['PublicUser']"],
  ['Client.User', "S['User']"],
  ['Client.AdminUser', "S['AdminUser']"],
  ['Client.AdminUserDetail', `${answerOf('adminGetUser', 200)}['data']`],
  ['Client.AuditEntry', "S['AuditEntry']"],
  ['Client.ApiKeyInfo', "S['ApiKey']"],
  ['Client.NewApiKey', "S['NewApiKey']"],
  ['Client.RolledApiKey', "S['RolledApiKey']"],
  ['Client.Plan', "S['Plan']"],
  ['Client.PlanRequest', "S['PlanRequest']"],
  ['Client.Webhook', "S['Webhook']"],
  ['Client.MarketplaceEvent', "S['Event']"],
  ['Client.EventPage', answerOf('listEvents', 200)],
  // The document's LastDelivery is nullable itself (a webhook with no delivery yet); the client's is `LastDelivery | null` where used.
  ['Client.LastDelivery', "NonNullable<S['LastDelivery']>"],
  ['Client.WebhookWithSecret', "S['NewWebhookWithSecret']"],
  ['Client.DeliveryOutcome', "S['DeliveryOutcome']"],
  ['Client.DeliveryOutcome[]', `${answerOf('listWebhookDeliveries', 200)}['data']`],
  ['Client.QueuedRedelivery', "S['QueuedRedelivery']"],
  ['Client.QueuedRedelivery', `${answerOf('redeliverWebhookEvent', 202)}['data']`],
  ['Client.AdminWebhook', `${answerOf('adminListWebhooks', 200)}['data'][number]`],
  ['Client.RotatedSecret', "S['RotatedSecret']"],
  ['Client.Recovery', answerOf('recoverWebhook', 202)],
  ['Client.Invitation', `${answerOf('adminInviteUser', 201)}['data']`],
  // Usage and listing statistics
  ['Client.Usage', "S['Usage']"],
  ['Client.UsageCounts', "S['Usage']['totals']"],
  ['Client.EndpointUsage', "S['Usage']['endpoints'][number]"],
  ['Client.UsagePoint', "S['Usage']['series']['points'][number]"],
  ['Client.ListingStatsResponse', answerOf('getListingStats', 200)],
  ['Client.ListingStats', `${answerOf('getListingStats', 200)}['data'][number]`],
  // Operator answers. The stats `store` is compared apart: while the document gives it no fields
  // (generated as Record<string, never>) only the rest is checked; once it names them, they are too.
  ["Omit<Client.ServerStats, 'store'>", `Omit<${answerOf('adminStats', 200)}['data'], 'store'>`],
  ['Client.StoreStats', `OnceDescribed<${answerOf('adminStats', 200)}['data']['store'], Client.StoreStats>`],
  ['Client.CompactResult', `${answerOf('adminCompact', 200)}['data']`],
  // Request bodies
  ['Client.NewListing', "S['NewListing']"],
  ['Client.ListingPatch', "S['ListingChanges']"],
  ['Client.UserPatch', "S['ProfileChanges']"],
  ['Client.NewWebhook', "S['NewWebhook']"],
  ['Client.WebhookPatch', "S['WebhookChange']"],
  ['Client.NewUser', bodyOf('adminCreateUser')],
  ['Client.AdminUserPatch', bodyOf('adminUpdateUser')],
  ['Client.NewKeyInput', bodyOf('adminCreateKey')],
  ['Client.KeyPatch', bodyOf('adminUpdateKey')],
  // Query parameters
  ['Client.ListingQuery', queryOf('listListings')],
  ['Client.UsageQuery', queryOf('getUsage')],
  ['Client.ListingStatsQuery', queryOf('getListingStats')],
  ['Client.AuditQuery', queryOf('adminListAudit')],
  ['Client.KeyQuery', queryOf('adminListKeys')],
  ['Client.PlanRequestQuery', queryOf('adminListPlanRequests')],
  ['Client.AdminListingQuery', queryOf('adminListListings')],
  ['Client.AdminWebhookQuery', queryOf('adminListWebhooks')],
];

const COMPARISON = `
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type S = components['schemas'];
type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];
/** G, or C itself (nothing to compare) while the document describes G as an object with no fields. */
type OnceDescribed<G, C> = G extends Record<string, never> ? C : G;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** true, or what differs (the compiler prints it in its error). */
type Agrees<C, G> =
  Same<keyof C, keyof G> extends false ? { only_in_client: Exclude<keyof C, keyof G>; only_in_document: Exclude<keyof G, keyof C> }
  : Same<RequiredKeys<C>, RequiredKeys<G>> extends false ? { required_only_in_client: Exclude<RequiredKeys<C>, RequiredKeys<G>>; required_only_in_document: Exclude<RequiredKeys<G>, RequiredKeys<C>> }
  : [C] extends [G] ? ([G] extends [C] ? true : { document_value_not_a_client_value: G })
  : { client_value_not_a_document_value: C };
`;

/** Types the document, then checks every pair; returns the failing pairs with the compiler's words. */
async function disagreements(document: Record<string, unknown>, directory: string, name: string): Promise<Map<string, string>> {
  // defaultNonNullable off: a request field with a default is still one the client may leave out.
  const generated = astToString(await openapiTS(document as never, { silent: true, defaultNonNullable: false }));
  writeFileSync(path.join(directory, `${name}.schema.ts`), generated);
  const lines = [
    `import type * as Client from ${JSON.stringify(CLIENT_TYPES)};`,
    `import type { components, operations } from './${name}.schema.ts';`,
    COMPARISON,
  ];
  const firstPairLine = lines.join('\n').split('\n').length;
  PAIRS.forEach(([client, documented], index) => lines.push(`export const pair${index}: Agrees<${client}, ${documented}> = true;`));
  const checkFile = path.join(directory, `${name}.check.ts`);
  writeFileSync(checkFile, lines.join('\n') + '\n');
  const program = ts.createProgram([checkFile], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    types: [],
  });
  const failures = new Map<string, string>();
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (diagnostic.file?.fileName !== checkFile.split(path.sep).join('/') && diagnostic.file?.fileName !== checkFile) {
      failures.set(`(${diagnostic.file?.fileName ?? 'compiler'})`, message);
      continue;
    }
    const line = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line;
    const pair = PAIRS[line - firstPairLine];
    failures.set(pair ? `${pair[0]} vs ${pair[1]}` : `line ${line + 1}`, message);
  }
  return failures;
}

/** The document with one change to one schema's properties, to see the check catch it. */
function withListing(document: Record<string, unknown>, change: (listing: { properties: Record<string, unknown>; required: string[] }) => void): Record<string, unknown> {
  const copy = structuredClone(document) as { components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> } };
  change(copy.components.schemas.Listing!);
  return copy as unknown as Record<string, unknown>;
}

test('the client types and the served document describe the same fields, required alike, both ways', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { body: document } = await server.request('GET', '/openapi.json');
  const directory = mkdtempSync(path.join(tmpdir(), 'client-types-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));

  const failures = await disagreements(document, directory, 'served');
  assert.deepEqual([...failures].map(([pair, message]) => `${pair}:\n  ${message}`), [], 'every client type agrees with the document');

  // The check itself must bite, in both directions: a field the document lacks, one the client lacks, one required on one side only.
  const dropped = await disagreements(withListing(document, (listing) => {
    delete listing.properties.owner_id;
    listing.required = listing.required.filter((field) => field !== 'owner_id');
  }), directory, 'dropped');
  assert.match(dropped.get(`Client.Listing vs S['Listing']`) ?? '', /only_in_client.*owner_id|owner_id/s, 'a field missing from the document is reported');
  const added = await disagreements(withListing(document, (listing) => {
    listing.properties.rating = { type: 'number' };
  }), directory, 'added');
  assert.match(added.get(`Client.Listing vs S['Listing']`) ?? '', /rating/, 'a field missing from the client is reported');
  const optional = await disagreements(withListing(document, (listing) => {
    listing.required = listing.required.filter((field) => field !== 'price');
  }), directory, 'optional');
  assert.match(optional.get(`Client.Listing vs S['Listing']`) ?? '', /price/, 'a field required on one side only is reported');
});
