// The docs checker judged on markdown written to fail: it must catch a wrong documented answer,
// an unexpected status, a tool a plain Debian lacks, a link leaving the repository or naming a
// missing heading, and accept what the conventions allow (ids, times, "…").

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runFileExamples } from './check-docs.ts';
import { claimProblems } from './claims.ts';
import { compareAnswer, compareText, jsonValuesIn, runnableExamples } from './examples.ts';
import { checkLinks, headingAnchors } from './links.ts';
import { temporaryDir } from '../helpers/server.ts';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

test('runnable blocks: sh runs, "sh norun" and other languages do not; a json block right after is the documented answer', () => {
  const markdown = [
    '```sh', 'echo one', '```', '', '```json', '{"a":1}', '```',
    '```sh norun', 'npm start', '```',
    '```text', 'echo never', '```',
    '```sh', 'echo two', '```', 'Some prose between.', '```json', '{"b":2}', '```',
    '```sh', 'echo three', '```', '```json norun', '{"c":3}', '```',
  ].join('\n');
  const examples = runnableExamples(markdown);
  assert.deepEqual(examples.map((example) => example.script), ['echo one', 'echo two', 'echo three']);
  assert.deepEqual(examples.map((example) => example.expected?.value ?? null), [{ a: 1 }, null, null]);
  assert.throws(() => runnableExamples('```sh\necho\n```\n```json\n{"a": …}\n```'), /not valid JSON/);
});

test('documented answers: ids, times, volatile fields and "…" match any value of their kind; everything else must be equal', () => {
  const actual = { data: { id: 'lst_abcdefgh12', title: 'PDF', price: 9.99, created_at: '2026-11-23T10:00:00.000Z', tags: ['a', 'b'], key: 'market_live_x' }, request_id: 'r-1' };
  assert.deepEqual(compareAnswer({ data: { id: 'lst_zzzzzzzz99', title: 'PDF', price: 9.99, created_at: '2026-01-01T00:00:00.000Z', tags: ['a', '…'], key: 'market_live_…' }, request_id: '…' }, actual), []);
  assert.deepEqual(compareAnswer({ data: { '…': '…', title: 'PDF' }, request_id: 'x' }, actual), []);
  assert.deepEqual(compareAnswer({ data: { id: 'usr_zzzzzzzz99', title: 'PDF', price: 9.99, created_at: '…', tags: ['a', 'b'], key: '…' }, request_id: '…' }, actual), []);
  assert.deepEqual(compareAnswer({ data: { '…': '…', price: 10 } }, actual).length, 2, 'a wrong price, and request_id undocumented');
  assert.match(compareAnswer({ data: { '…': '…', tags: ['a'] }, request_id: '…' }, actual)[0]!, /expected 1 elements, got 2/);
  assert.match(compareAnswer({ data: { '…': '…', missing: 1 }, request_id: '…' }, actual)[0]!, /missing: documented but missing/);
  assert.match(compareAnswer({ error: 'The key is missing…' }, { error: 'The API key is missing or invalid.' })[0]!, /does not fit/);
  assert.deepEqual(compareAnswer({ error: 'The API key is missing…' }, { error: 'The API key is missing or invalid.' }), []);
});

test('a text block right after a run block is its printed output, line by line; "text norun" is shown, not checked', () => {
  const markdown = ['```sh', 'echo one', '```', '', '```text', 'one', '```', '```sh', 'echo two', '```', '', '```text norun', 'changes', '```'].join('\n');
  const examples = runnableExamples(markdown);
  assert.deepEqual(examples.map((example) => example.expectedText?.lines ?? null), [['one'], null]);
  assert.deepEqual(compareText(['{"data":{"id":"usr_…",…}}ada@example.com'], '{"data":{"id":"usr_x1","email":"a"}}ada@example.com\n'), []);
  assert.match(compareText(['{"data":…}', 'ada@example.com'], '{"data":{}}ada@example.com')[0]!, /expected 2 lines, printed 1/);
  assert.match(compareText(['200 200'], '200 403\n')[0]!, /printed "200 403", documented "200 200"/);
});

test('the printed JSON values are found one after another, whatever surrounds them', () => {
  assert.deepEqual(jsonValuesIn('lst_1\n{"a":"}{"}{"b":[1,{"c":2}]}\nok\n[3]'), [{ a: '}{' }, { b: [1, { c: 2 }] }, [3]]);
});

test('links: a missing file, a path outside the repository, an unknown heading and an uncommitted file are each reported', (t) => {
  const dir = temporaryDir(t);
  mkdirSync(join(dir, 'docs'));
  writeFileSync(join(dir, 'docs', 'b.md'), '# Title\n\n## Rate limits\n\n## Rate limits\n');
  writeFileSync(join(dir, 'docs', 'ignored.json'), '{}');
  writeFileSync(
    join(dir, 'README.md'),
    [
      '[ok](docs/b.md#rate-limits) [second](docs/b.md#rate-limits-1) [web](https://example.com/x)',
      '[gone](docs/missing.md) [outside](../elsewhere/CONTRACT.md) [anchor](docs/b.md#no-such-heading)',
      '[uncommitted](docs/ignored.json) `[in code](nowhere.md)`',
      '```sh', '[in a block](nowhere.md)', '```',
    ].join('\n'),
  );
  const problems = checkLinks(join(dir, 'README.md'), dir, new Set(['README.md', 'docs/b.md']));
  assert.deepEqual(
    problems.map((problem) => `${problem.line} ${problem.target}: ${problem.problem}`),
    [
      '2 docs/missing.md: no such file in the repository',
      '2 ../elsewhere/CONTRACT.md: points outside the repository',
      '2 docs/b.md#no-such-heading: no heading with the anchor #no-such-heading',
      '3 docs/ignored.json: not committed (git-ignored or untracked)',
    ],
  );
  assert.ok(headingAnchors('## Operator API (`/admin/v1`)').has('operator-api-adminv1'));
});

test('examples run in one shell against a fresh server: variables carry over, statuses and answers are checked, jq and uuidgen are refused', { timeout: 180_000 }, async (t) => {
  const dir = temporaryDir(t);
  const file = join(dir, 'sample.md');
  writeFileSync(
    file,
    [
      '```sh',
      'export KEY=market_live_…',
      "LISTING=$(curl -s -H \"Authorization: Bearer $KEY\" 'http://127.0.0.1:3000/v1/listings?limit=1' | node -p 'JSON.parse(fs.readFileSync(0)).data[0].id')",
      '```',
      '',
      '```sh',
      'curl -s -H "Authorization: Bearer $KEY" "http://127.0.0.1:3000/v1/listings/$LISTING"',
      '```',
      '',
      '```json',
      '{"data":{"id":"lst_…","title":"…","description":"…","type":"…","price":"…","tags":"…","status":"active","owner_id":"usr_…","created_at":"…","updated_at":"…"}}',
      '```',
      '```sh',
      'curl -s http://127.0.0.1:3000/v1/listings   # → 401',
      'curl -s -H "Authorization: Bearer $KEY" http://127.0.0.1:3000/v1/nothing-here',
      '```',
      '```sh',
      'curl -s -H "Authorization: Bearer $KEY" http://127.0.0.1:3000/v1/users/me',
      '```',
      '```json',
      '{"data":{"name":"Grace Creator","…":"…"}}',
      '```',
      '```sh',
      'curl -s http://127.0.0.1:3000/healthz | jq .status',
      'X=$(uuidgen)',
      '```',
    ].join('\n'),
  );
  const outcomes = await runFileExamples(file, ROOT);
  assert.deepEqual(outcomes[0]!.problems, []);
  assert.deepEqual(outcomes[1]!.problems, [], 'the id captured in the first block is used in the second');
  assert.deepEqual(outcomes[2]!.problems, ['curl answered 404, expected 2xx'], 'the noted 401 passes, the unnoted 404 fails');
  assert.deepEqual(outcomes[3]!.problems, ['answer differs from line 20: $.data.name: expected "Grace Creator", got "Ada Creator"']);
  assert.equal(outcomes[4]!.problems.filter((problem) => problem.startsWith('command failed')).length >= 2, true, outcomes[4]!.problems.join('\n'));
  assert.match(outcomes[4]!.stderr, /jq is not installed on a plain Debian/);
  assert.match(outcomes[4]!.stderr, /uuidgen is not installed on a plain Debian/);
});

test('what the docs claim of webhook events, listing statuses and settings is what the code does', () => {
  assert.deepEqual(claimProblems(fileURLToPath(new URL('../..', import.meta.url))), []);
});

test('the claims check notices a setting the table lacks and an event the docs invent', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'claims-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const real = fileURLToPath(new URL('../..', import.meta.url));
  mkdirSync(join(root, 'docs'));
  for (const file of ['docs/api.md', 'docs/operations.md', 'docs/webhooks.md']) {
    let text = readFileSync(join(real, file), 'utf8');
    if (file === 'docs/operations.md') text = text.replace(/^\| `MAX_CONNECTIONS` \|.*\n/m, '');
    if (file === 'docs/webhooks.md') text = text.replace('| `ping` |', '| `listing.sold` | never | nothing |\n| `ping` |');
    writeFileSync(join(root, file), text);
  }
  const problems = claimProblems(root);
  assert.ok(problems.some((problem) => /settings table lacks MAX_CONNECTIONS/.test(problem)), problems.join('\n'));
  assert.ok(problems.some((problem) => /lists listing\.sold, which the server never sends/.test(problem)), problems.join('\n'));
});
