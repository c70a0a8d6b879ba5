// Claims the docs make that the code can check: the webhook event kinds docs/webhooks.md lists,
// the listing statuses docs/api.md gives, and the settings table of docs/operations.md against
// what the configuration module reads. `npm run check:docs` reports each difference, and
// check-docs.test.ts runs the same check in `npm test`.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { SHARED_SCHEMAS } from '../../src/openapi/schemas.ts';
import { EVENT_TYPES } from '../../src/webhooks/events.ts';

/** Variables read elsewhere than loadConfig that the settings table documents on purpose. */
const READ_ELSEWHERE = new Set(['MARKETPLACE_URL']);
/** Variables loadConfig consults that are not settings of this server. */
const NOT_SETTINGS = new Set(['NODE_ENV']);

/** The first-column names of a markdown table's body rows, as written between backticks (heading rows left out). */
function tableNames(section: string): string[] {
  const lines = section.split('\n');
  return lines.flatMap((line, index) => {
    const name = /^\| `([^`]+)` \|/.exec(line)?.[1];
    const isHeading = lines[index + 1]?.startsWith('|---') ?? false;
    return name !== undefined && !isHeading ? [name] : [];
  });
}

/** The text of a markdown section: from its heading to the next heading of the same or higher level. */
function sectionOf(text: string, heading: string): string {
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) return '';
  const level = /^#+/.exec(heading)![0];
  const rest = text.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`^#{1,${level.length}} `, 'm'));
  return next < 0 ? rest : rest.slice(0, next);
}

/** The names loadConfig reads from the environment. */
export function settingsRead(): Set<string> {
  const read = new Set<string>();
  const recorder = new Proxy({} as Record<string, string | undefined>, {
    get(_target, name) {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
  });
  loadConfig(recorder);
  return read;
}

export function claimProblems(root: string): string[] {
  const problems: string[] = [];
  const read = (file: string) => readFileSync(join(root, file), 'utf8');

  const events = tableNames(sectionOf(read('docs/webhooks.md'), '## Events'));
  for (const kind of EVENT_TYPES) if (!events.includes(kind)) problems.push(`docs/webhooks.md: the Events table lacks ${kind}, which the server sends`);
  for (const kind of events) if (!(EVENT_TYPES as readonly string[]).includes(kind)) problems.push(`docs/webhooks.md: the Events table lists ${kind}, which the server never sends`);

  const listing = SHARED_SCHEMAS.Listing as { properties: { status: { enum: string[] } } };
  const statusRow = read('docs/api.md').split('\n').find((line) => line.startsWith('| `status` |')) ?? '';
  if (statusRow === '') problems.push('docs/api.md: no `status` row describes a listing');
  for (const status of listing.properties.status.enum) {
    if (statusRow !== '' && !statusRow.includes(`\`${status}\``)) problems.push(`docs/api.md: a listing's status can be ${status}, which its status row does not say`);
  }

  const documented = tableNames(sectionOf(read('docs/operations.md'), '## Configuration'));
  const settings = new Set([...settingsRead()].filter((name) => !NOT_SETTINGS.has(name)));
  for (const name of settings) if (!documented.includes(name)) problems.push(`docs/operations.md: the settings table lacks ${name}, which the server reads`);
  for (const name of documented) {
    if (!settings.has(name) && !READ_ELSEWHERE.has(name)) problems.push(`docs/operations.md: the settings table lists ${name}, which the server does not read`);
  }
  return problems;
}
