#!/usr/bin/env node
// The operator CLI: turns a command line into one AdminClient call against a running server
// (or, offline, one call into the store: `repair`, `migrate`) and prints the result as JSON.
// Three commands (`webhooks deliveries`, `webhooks redeliver`, `events tail`) act for a key holder
// instead, through MarketplaceClient with an API key: the operator API has no such routes.
// Exit codes: 0 done, 1 the call failed, 2 the command line is wrong (or `migrate` refused). `marketplace serve` starts
// the server itself (main.ts) and `marketplace --version` prints the version.

import { realpathSync } from 'node:fs';
import { lstat, mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { OPERATOR_TOKEN_FILE_NAME } from './auth/operator-token-source.ts';
import { describeLocation, migrateStore, MigrationRefusedError, parseLocation } from './backends/migrate.ts';
import { AdminClient } from './client/admin-client.ts';
import { MarketplaceApiError, MarketplaceNetworkError } from './client/errors.ts';
import { MarketplaceClient } from './client/marketplace-client.ts';
import type { AdminListingQuery, AdminUserPatch, KeyPatch, ListingStatus, NewKeyInput, NewUser, PlanInput, PlanRequest, Role, UsageQuery } from './client/types.ts';
import { crashSafeWriteFile } from './store/crash-safe-write.ts';
import { nodeFileSystem } from './store/files.ts';
import { repairLog } from './store/repair.ts';
import { VERSION } from './version.ts';

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
  /** Where relative paths start; default the process's working directory. */
  cwd?: string;
  /** Ends a command that runs until stopped (`events tail`); otherwise it runs until the process is interrupted. */
  signal?: AbortSignal;
}

const DEFAULT_URL = 'http://127.0.0.1:3000';
/** The longest grace a rolled key's old secret keeps (7 days), as the server allows. */
const MAX_GRACE_SECONDS = 604_800;

const OPTION_SPECS = {
  url: { type: 'string' },
  token: { type: 'string' },
  key: { type: 'string' },
  'data-dir': { type: 'string' },
  name: { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  bio: { type: 'string' },
  page: { type: 'string' },
  limit: { type: 'string' },
  'user-id': { type: 'string' },
  permissions: { type: 'string' },
  'rate-limit': { type: 'string' },
  plan: { type: 'string' },
  'expires-at': { type: 'string' },
  'grace-seconds': { type: 'string' },
  'old-token-file': { type: 'string' },
  used: { type: 'string' },
  add: { type: 'string' },
  file: { type: 'string' },
  prefix: { type: 'string' },
  granularity: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  reason: { type: 'string' },
  status: { type: 'string' },
  'owner-id': { type: 'string' },
  q: { type: 'string' },
  action: { type: 'string' },
  'target-id': { type: 'string' },
  after: { type: 'string' },
  yes: { type: 'boolean' },
  force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

type OptionName = keyof typeof OPTION_SPECS;
type ParsedOptions = { [name in OptionName]?: (typeof OPTION_SPECS)[name]['type'] extends 'boolean' ? boolean : string };

/** Options every operator command takes. */
const CONNECTION_OPTIONS: readonly OptionName[] = ['url', 'token', 'data-dir'];
/** Options every key holder's command takes instead. */
const KEY_CONNECTION_OPTIONS: readonly OptionName[] = ['url', 'key'];

interface CommandContext {
  options: ParsedOptions;
  /** Positionals after the command words, e.g. the key id of `keys revoke <id>`. */
  args: string[];
  io: CliIo;
  cwd: string;
  operator: () => Promise<AdminClient>;
  /** The public API client with the key holder's API key (`--key`, else MARKETPLACE_KEY). */
  keyHolder: () => MarketplaceClient;
}

interface Command {
  usage: string;
  summary: string;
  options: readonly OptionName[];
  args: number;
  /** Works on a store directly, with the server stopped: takes no connection options. */
  offline?: true;
  /** Calls /v1 with an API key (`--url`, `--key`) rather than the operator API with the token. */
  keyHolder?: true;
  run(context: CommandContext): Promise<unknown>;
}

/** A result printed as it is rather than as JSON (the metrics text). */
class RawText {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }
}

/** A result printed as JSON like any other, but the command failed: exit code 1 with `message` on stderr. */
class FailedResult {
  readonly result: unknown;
  readonly message: string;

  constructor(result: unknown, message: string) {
    this.result = result;
    this.message = message;
  }
}

/** A wrong command line: reported with the command's usage, exit code 2. */
class UsageError extends Error {
  readonly usage: string | undefined;

  constructor(message: string, usage?: string) {
    super(message);
    this.name = 'UsageError';
    this.usage = usage;
  }
}

/** A failure before any call (no token, say): one line, exit code 1. */
class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

const COMMANDS: Record<string, Command> = {
  'users create': {
    usage: 'users create --name <name> [--email <email>] [--role creator|member] [--bio <text>]',
    summary: 'create a user (default role: member)',
    options: ['name', 'email', 'role', 'bio'],
    args: 0,
    async run({ options, operator }) {
      const input: NewUser = { name: required(options, 'name', this.usage) };
      if (options.email !== undefined) input.email = options.email;
      if (options.role !== undefined) input.role = parseRole(options.role, this.usage);
      if (options.bio !== undefined) input.bio = options.bio;
      return (await operator()).users.create(input);
    },
  },
  'users list': {
    usage: 'users list [--q <part of name or email>] [--page <n>] [--limit <n>]',
    summary: 'list users, one page (each with two_factor); --q finds by part of the name or email',
    options: ['q', 'page', 'limit'],
    args: 0,
    async run({ options, operator }) {
      return (await operator()).users.list({ ...pageQuery(options, this.usage), ...(options.q === undefined ? {} : { q: options.q }) });
    },
  },
  'users update': {
    usage: 'users update <user-id> [--role creator|member] [--name <name>] [--email <email>] [--bio <text>]',
    summary: "change a user's role, name, email or bio",
    options: ['role', 'name', 'email', 'bio'],
    args: 1,
    async run({ options, args, operator }) {
      const patch: AdminUserPatch = {};
      if (options.role !== undefined) patch.role = parseRole(options.role, this.usage);
      if (options.name !== undefined) patch.name = options.name;
      if (options.email !== undefined) patch.email = options.email;
      if (options.bio !== undefined) patch.bio = options.bio;
      if (Object.keys(patch).length === 0) throw new UsageError('nothing to change: give --role, --name, --email or --bio', this.usage);
      return (await operator()).users.update(args[0] ?? '', patch);
    },
  },
  'users show': {
    usage: 'users show <user-id>',
    summary: 'one user (any status) with counts of their listings, keys and webhooks',
    options: [],
    args: 1,
    async run({ args, operator }) {
      return (await operator()).users.get(args[0] ?? '');
    },
  },
  'users invite': {
    usage: 'users invite <user-id>',
    summary: 'a single-use link (72 h) for the user to set a portal password; also resets a forgotten one',
    options: [],
    args: 1,
    async run({ args, operator }) {
      return (await operator()).users.invite(args[0] ?? '');
    },
  },
  'users suspend': {
    usage: 'users suspend <user-id> --reason <text>',
    summary: 'suspend a user: keys refused (403), listings hidden, webhooks silent',
    options: ['reason'],
    args: 1,
    async run({ options, args, operator }) {
      return (await operator()).users.suspend(args[0] ?? '', required(options, 'reason', this.usage));
    },
  },
  'users unsuspend': {
    usage: 'users unsuspend <user-id>',
    summary: 'end a suspension: keys work again, listings reappear',
    options: [],
    args: 1,
    async run({ args, operator }) {
      return (await operator()).users.unsuspend(args[0] ?? '');
    },
  },
  'users two-factor-reset': {
    usage: 'users two-factor-reset <user-id> --reason <text>',
    summary: "turn a user's two-factor sign-in off (lost app and recovery codes): every session of theirs ends",
    options: ['reason'],
    args: 1,
    async run({ options, args, operator }) {
      return (await operator()).users.resetTwoFactor(args[0] ?? '', required(options, 'reason', this.usage));
    },
  },
  reseal: {
    usage: 'reseal --old-token-file <file>',
    summary: 'after the operator token changed: seal every two-factor secret again under the current token (the old one read from the file)',
    options: ['old-token-file'],
    args: 0,
    async run({ options, operator, cwd }) {
      const path = resolve(cwd, required(options, 'old-token-file', this.usage));
      let oldToken: string;
      try {
        oldToken = (await readFile(path, 'utf8')).trim();
      } catch (error) {
        throw new CliError(`cannot read the old token from ${path}: ${(error as Error).message}`);
      }
      if (oldToken === '') throw new CliError(`${path} is empty: it must hold the previous operator token`);
      const result = await (await operator()).resealTwoFactorSecrets(oldToken);
      return result.unreadable > 0 ? new FailedResult(result, `${result.unreadable} two-factor secret(s) opened with neither token: is ${path} the token they were sealed with?`) : result;
    },
  },
  'users delete': {
    usage: 'users delete <user-id> --yes',
    summary: 'erase a user for good: keys revoked, webhooks and listings removed, personal data erased',
    options: ['yes'],
    args: 1,
    async run({ options, args, operator }) {
      if (options.yes !== true) {
        throw new UsageError('erasure cannot be undone (keys revoked, webhooks removed, listings removed, name/email/bio/website/avatar erased); add --yes to go ahead', this.usage);
      }
      return (await operator()).users.erase(args[0] ?? '');
    },
  },
  'listings list': {
    usage: 'listings list [--status active|archived|removed] [--owner-id <id>] [--q <text>] [--page <n>] [--limit <n>]',
    summary: 'every listing whatever its status, newest first',
    options: ['status', 'owner-id', 'q', 'page', 'limit'],
    args: 0,
    async run({ options, operator }) {
      const query: AdminListingQuery = pageQuery(options, this.usage);
      if (options.status !== undefined) {
        if (!['active', 'archived', 'removed'].includes(options.status)) throw new UsageError('--status must be active, archived or removed', this.usage);
        query.status = options.status as ListingStatus;
      }
      if (options['owner-id'] !== undefined) query.owner_id = options['owner-id'];
      if (options.q !== undefined) query.q = options.q;
      return (await operator()).listings.list(query);
    },
  },
  'listings remove': {
    usage: 'listings remove <listing-id> --reason <text>',
    summary: "take a listing down (its owner's webhooks get listing.removed)",
    options: ['reason'],
    args: 1,
    async run({ options, args, operator }) {
      return (await operator()).listings.remove(args[0] ?? '', required(options, 'reason', this.usage));
    },
  },
  'listings restore': {
    usage: 'listings restore <listing-id>',
    summary: 'make a removed listing active again',
    options: [],
    args: 1,
    async run({ args, operator }) {
      return (await operator()).listings.restore(args[0] ?? '');
    },
  },
  audit: {
    usage: 'audit [--action <action>] [--target-id <id>] [--page <n>] [--limit <n>]',
    summary: 'what operators did, newest first',
    options: ['action', 'target-id', 'page', 'limit'],
    args: 0,
    async run({ options, operator }) {
      return (await operator()).audit({ ...pageQuery(options, this.usage), action: options.action, target_id: options['target-id'] });
    },
  },
  metrics: {
    usage: 'metrics',
    summary: 'print the server\'s Prometheus metrics (text)',
    options: [],
    args: 0,
    async run({ operator }) {
      return new RawText(await (await operator()).metrics());
    },
  },
  'keys create': {
    usage: 'keys create --user-id <id> [--name <name>] [--permissions "read:listings,GET /v1/users/me"] [--rate-limit <n> | --plan <plan-id>] [--expires-at <ISO time>] [--prefix mk|live]',
    summary: 'create an API key (prints the secret once)',
    options: ['user-id', 'name', 'permissions', 'rate-limit', 'plan', 'expires-at', 'prefix'],
    args: 0,
    async run({ options, operator }) {
      const input: NewKeyInput = { user_id: required(options, 'user-id', this.usage) };
      if (options.name !== undefined) input.name = options.name;
      if (options.permissions !== undefined) input.permissions = parsePermissions(options.permissions);
      if (options['rate-limit'] !== undefined) input.rate_limit = parseInteger('rate-limit', options['rate-limit'], 1, this.usage);
      if (options.plan !== undefined) input.plan = options.plan;
      if (options['expires-at'] !== undefined) input.expires_at = parseExpiry(options['expires-at']);
      if (options.prefix !== undefined) {
        if (options.prefix !== 'mk' && options.prefix !== 'live') throw new UsageError('--prefix must be mk or live', this.usage);
        input.prefix = options.prefix;
      }
      return (await operator()).keys.create(input);
    },
  },
  'keys list': {
    usage: 'keys list [--user-id <id>] [--page <n>] [--limit <n>]',
    summary: 'list API keys (never their secrets)',
    options: ['user-id', 'page', 'limit'],
    args: 0,
    async run({ options, operator }) {
      return (await operator()).keys.list({ ...pageQuery(options, this.usage), user_id: options['user-id'] });
    },
  },
  'keys update': {
    usage: 'keys update <key-id> [--permissions "read:listings,..."] [--rate-limit <n> | --plan <plan-id>] [--expires-at <ISO time>|never] [--name <name>]',
    summary: "change a key's permissions, rate limit, plan, expiry or name",
    options: ['permissions', 'rate-limit', 'plan', 'expires-at', 'name'],
    args: 1,
    async run({ options, args, operator }) {
      const patch: KeyPatch = {};
      if (options.permissions !== undefined) patch.permissions = parsePermissions(options.permissions);
      if (options['rate-limit'] !== undefined) patch.rate_limit = parseInteger('rate-limit', options['rate-limit'], 1, this.usage);
      if (options.plan !== undefined) patch.plan = options.plan;
      if (options['expires-at'] !== undefined) patch.expires_at = parseExpiry(options['expires-at']);
      if (options.name !== undefined) patch.name = options.name;
      if (Object.keys(patch).length === 0) throw new UsageError('nothing to change: give --permissions, --rate-limit, --plan, --expires-at or --name', this.usage);
      return (await operator()).keys.update(args[0] ?? '', patch);
    },
  },
  'keys usage': {
    usage: 'keys usage <key-id> [--granularity hour|day] [--from <ISO time>] [--to <ISO time>]',
    summary: "a key's usage: totals, per endpoint, a time series, its window now",
    options: ['granularity', 'from', 'to'],
    args: 1,
    async run({ options, args, operator }) {
      const query: UsageQuery = {};
      if (options.granularity !== undefined) {
        if (options.granularity !== 'hour' && options.granularity !== 'day') throw new UsageError('--granularity must be hour or day', this.usage);
        query.granularity = options.granularity;
      }
      if (options.from !== undefined) query.from = options.from;
      if (options.to !== undefined) query.to = options.to;
      return (await operator()).keys.usage(args[0] ?? '', query);
    },
  },
  'keys revoke': {
    usage: 'keys revoke <key-id>',
    summary: 'revoke a key (refused from the next request on)',
    options: [],
    args: 1,
    async run({ args, operator }) {
      return (await operator()).keys.revoke(args[0] ?? '');
    },
  },
  'keys roll': {
    usage: 'keys roll <key-id> [--grace-seconds <0-604800>]',
    summary: 'a new secret for the key (printed once); the old one works for the grace period (default 0)',
    options: ['grace-seconds'],
    args: 1,
    async run({ options, args, operator }) {
      const grace = options['grace-seconds'] === undefined ? 0 : parseInteger('grace-seconds', options['grace-seconds'], 0, this.usage, MAX_GRACE_SECONDS);
      return (await operator()).keys.roll(args[0] ?? '', grace);
    },
  },
  'keys quota': {
    usage: 'keys quota <key-id> (--used <n> | --add <n>)',
    summary: "set (--used) or top up (--add) the count of the key's user and plan against the plan's quota this period",
    options: ['used', 'add'],
    args: 1,
    async run({ options, args, operator }) {
      if ((options.used === undefined) === (options.add === undefined)) throw new UsageError('give one of --used and --add', this.usage);
      const change = options.used !== undefined ? { used: parseInteger('used', options.used, 0, this.usage) } : { add: parseInteger('add', options.add!, 1, this.usage) };
      return (await operator()).keys.setQuota(args[0] ?? '', change);
    },
  },
  'plans list': {
    usage: 'plans list',
    summary: 'the plans: id, name, requests per minute, self-service or on request, quota per day or month',
    options: [],
    args: 0,
    async run({ operator }) {
      return (await operator()).plans.list();
    },
  },
  'plans set': {
    usage: 'plans set --file <plans.json>',
    summary: 'replace the plans with a JSON file ([{id, name, rate_limit, self_service, quota?}, ...] or {"plans": [...]}; quota: null or {requests, period: "day" | "month"})',
    options: ['file'],
    args: 0,
    async run({ options, operator, cwd }) {
      const path = resolve(cwd, required(options, 'file', this.usage));
      let parsed: unknown;
      try {
        parsed = JSON.parse(await readFile(path, 'utf8'));
      } catch (error) {
        throw new CliError(`cannot read plans from ${path}: ${(error as Error).message}`);
      }
      const plans = Array.isArray(parsed) ? parsed : (parsed as { plans?: unknown } | null)?.plans;
      if (!Array.isArray(plans)) throw new CliError(`${path} must hold an array of plans or {"plans": [...]}`);
      return (await operator()).plans.replace(plans as PlanInput[]);
    },
  },
  'plan-requests list': {
    usage: 'plan-requests list [--status pending|approved|declined|cancelled] [--page <n>] [--limit <n>]',
    summary: "users' requests for plans they cannot pick themselves, newest first",
    options: ['status', 'page', 'limit'],
    args: 0,
    async run({ options, operator }) {
      const status = options.status;
      if (status !== undefined && !['pending', 'approved', 'declined', 'cancelled'].includes(status)) throw new UsageError('--status must be pending, approved, declined or cancelled', this.usage);
      return (await operator()).planRequests.list({ ...pageQuery(options, this.usage), status: status as PlanRequest['status'] | undefined });
    },
  },
  'plan-requests approve': {
    usage: 'plan-requests approve <request-id>',
    summary: "approve: the key moves to the plan, and its rate limit with it, at once",
    options: [],
    args: 1,
    async run({ args, operator }) {
      return (await operator()).planRequests.approve(args[0] ?? '');
    },
  },
  'plan-requests decline': {
    usage: 'plan-requests decline <request-id>',
    summary: 'decline: the key stays on its plan',
    options: [],
    args: 1,
    async run({ args, operator }) {
      return (await operator()).planRequests.decline(args[0] ?? '');
    },
  },
  'webhooks list': {
    usage: 'webhooks list [--user-id <id>] [--page <n>] [--limit <n>]',
    summary: "list webhooks, every user's or one user's (never their secrets)",
    options: ['user-id', 'page', 'limit'],
    args: 0,
    async run({ options, operator }) {
      return (await operator()).webhooks.list({ ...pageQuery(options, this.usage), user_id: options['user-id'] });
    },
  },
  'webhooks deliveries': {
    usage: 'webhooks deliveries <webhook-id>',
    summary: "with an API key (read:webhooks): one of your webhooks' last 50 delivery outcomes, newest first",
    options: [],
    args: 1,
    keyHolder: true,
    async run({ args, keyHolder }) {
      return keyHolder().webhooks.deliveries(args[0] ?? '');
    },
  },
  'webhooks redeliver': {
    usage: 'webhooks redeliver <webhook-id> <event-id>',
    summary: 'with an API key (write:webhooks): send one of those events again now, freshly signed (60 per hour)',
    options: [],
    args: 2,
    keyHolder: true,
    async run({ args, keyHolder }) {
      return keyHolder().webhooks.redeliver(args[0] ?? '', args[1] ?? '');
    },
  },
  'events tail': {
    usage: 'events tail [--after <event-id>]',
    summary: 'with an API key (read:webhooks): your events as they happen, one JSON line each, from your oldest kept (or after one); resumes by itself; runs until interrupted',
    options: ['after'],
    args: 0,
    keyHolder: true,
    async run({ options, keyHolder, io }) {
      const events = keyHolder().events.stream({ ...(options.after === undefined ? {} : { lastEventId: options.after }), ...(io.signal === undefined ? {} : { signal: io.signal }) });
      for await (const event of events) io.stdout.write(`${JSON.stringify(event)}\n`);
      return new RawText('');
    },
  },
  stats: {
    usage: 'stats',
    summary: 'uptime, user and key counts, and the store\'s counters',
    options: [],
    args: 0,
    async run({ operator }) {
      return (await operator()).stats();
    },
  },
  compact: {
    usage: 'compact',
    summary: "compact the server's log now",
    options: [],
    args: 0,
    async run({ operator }) {
      return (await operator()).compact();
    },
  },
  backup: {
    usage: 'backup <file> [--force]',
    summary: "save a consistent copy of the server's log to <file> (--force: replace the file if it exists)",
    options: ['force'],
    args: 1,
    async run({ options, args, cwd, operator }) {
      const target = resolve(cwd, args[0] ?? '');
      // A backup is what lets an operator go back: never replace an older one without being told to.
      if (options.force !== true && (await pathExists(target))) throw new CliError(`${target} already exists; choose another file or add --force to replace it`);
      await makeBackupFolder(target);
      const stream = await (await operator()).backup();
      const bytes = await crashSafeWriteFile(nodeFileSystem, target, stream);
      return { file: target, bytes };
    },
  },
  repair: {
    usage: 'repair --data-dir <dir>',
    summary: 'offline: keep every good record of a damaged log and move bad lines aside (server stopped)',
    options: ['data-dir'],
    args: 0,
    offline: true,
    async run({ options, io, cwd }) {
      const dataDir = options['data-dir'] ?? io.env.DATA_DIR;
      if (dataDir === undefined || dataDir === '') throw new UsageError('repair needs --data-dir <dir> (or DATA_DIR)', this.usage);
      if (dataDir === ':memory:') throw new UsageError('an in-memory store has nothing on disk to repair', this.usage);
      return repairLog(resolve(cwd, dataDir));
    },
  },
  migrate: {
    usage: 'migrate --from <data dir | postgres:// URL> --to <postgres:// URL | data dir>',
    summary: 'offline: copy every record into an empty database or data dir, then compare both record by record (servers stopped)',
    options: ['from', 'to'],
    args: 0,
    offline: true,
    async run({ options, io, cwd }) {
      const from = parseLocation(required(options, 'from', this.usage), cwd);
      const to = parseLocation(required(options, 'to', this.usage), cwd);
      const summary = await migrateStore(from, to, (message) => io.stderr.write(`warning: ${message}\n`));
      if (summary.identical) return summary;
      return new FailedResult(summary, `${summary.mismatch_count} record(s) differ between ${describeLocation(from)} and ${describeLocation(to)} after the copy`);
    },
  },
};

/**
 * Runs one command line and returns the exit code; never calls process.exit, so tests can
 * call it in-process.
 * @example
 * const code = await runCli(['users', 'create', '--name', 'Ada'], { stdout, stderr, env: process.env });
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let command: Command | undefined;
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: argv, options: OPTION_SPECS, allowPositionals: true, strict: true });
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    const options = parsed.values as ParsedOptions;
    const positionals = parsed.positionals;
    if (options.version && positionals.length === 0) {
      io.stdout.write(`${VERSION}\n`);
      return 0;
    }
    if (positionals.length === 0 || positionals[0] === 'help') {
      if (positionals.length === 0 && !options.help) throw new UsageError('no command given');
      io.stdout.write(helpText());
      return 0;
    }
    const found = findCommand(positionals);
    command = found.command;
    if (options.help) {
      io.stdout.write(`usage: marketplace ${command.usage}\n`);
      return 0;
    }
    checkOptions(command, options);
    if (found.args.length !== command.args) {
      throw new UsageError(`expected ${command.args} argument(s) after the command, got ${found.args.length}`, command.usage);
    }
    const cwd = io.cwd ?? process.cwd();
    const operator = () => connect(options, io, cwd);
    const keyHolder = () => connectAsKeyHolder(options, io);
    const result = await command.run({ options, args: found.args, io, cwd, operator, keyHolder });
    if (result instanceof FailedResult) {
      io.stdout.write(`${JSON.stringify(result.result, null, 2)}\n`);
      io.stderr.write(`error: ${result.message}\n`);
      return 1;
    }
    io.stdout.write(result instanceof RawText ? result.text : `${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof MigrationRefusedError) {
      io.stderr.write(`error: ${error.message}; nothing was changed\n`);
      return 2;
    }
    if (error instanceof UsageError) {
      const usage = error.usage ?? command?.usage;
      io.stderr.write(`error: ${error.message}\n${usage ? `usage: marketplace ${usage}\n` : "run 'marketplace help' for the commands\n"}`);
      return 2;
    }
    io.stderr.write(`error: ${describeFailure(error)}\n`);
    return 1;
  }
}

function findCommand(positionals: string[]): { command: Command; args: string[] } {
  const [first = '', second = ''] = positionals;
  const twoWords = COMMANDS[`${first} ${second}`];
  if (twoWords) return { command: twoWords, args: positionals.slice(2) };
  const oneWord = COMMANDS[first];
  if (oneWord) return { command: oneWord, args: positionals.slice(1) };
  const group = Object.keys(COMMANDS).filter((name) => name.startsWith(`${first} `));
  if (group.length > 0) {
    throw new UsageError(`unknown ${first} command ${JSON.stringify(second)}; one of: ${group.map((name) => name.split(' ')[1]).join(', ')}`);
  }
  throw new UsageError(`unknown command ${JSON.stringify(first)}`);
}

function checkOptions(command: Command, options: ParsedOptions): void {
  const connection = command.offline ? [] : command.keyHolder ? KEY_CONNECTION_OPTIONS : CONNECTION_OPTIONS;
  const allowed = new Set<string>([...command.options, ...connection, 'help']);
  for (const name of Object.keys(options)) {
    if (!allowed.has(name)) throw new UsageError(`--${name} does not apply to this command`, command.usage);
  }
}

function required(options: ParsedOptions, name: OptionName, usage: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`, usage);
  return value;
}

function parseRole(text: string, usage: string): Role {
  if (text !== 'creator' && text !== 'member') throw new UsageError('--role must be creator or member', usage);
  return text;
}

function parseInteger(name: string, text: string, min: number, usage: string, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`--${name} must be an integer ${range}, got ${JSON.stringify(text)}`, usage);
  }
  return value;
}

function pageQuery(options: ParsedOptions, usage: string): { page?: number; limit?: number } {
  const query: { page?: number; limit?: number } = {};
  if (options.page !== undefined) query.page = parseInteger('page', options.page, 1, usage);
  if (options.limit !== undefined) query.limit = parseInteger('limit', options.limit, 1, usage);
  return query;
}

/** `never` → null (no expiry); anything else goes to the server, which checks it. */
function parseExpiry(text: string): string | null {
  return text.trim() === 'never' ? null : text.trim();
}

/** "read:listings, GET /v1/users/me" → ["read:listings", "GET /v1/users/me"]; the server checks each entry. */
function parsePermissions(text: string): string[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

async function connect(options: ParsedOptions, io: CliIo, cwd: string): Promise<AdminClient> {
  const baseUrl = options.url ?? io.env.MARKETPLACE_URL ?? DEFAULT_URL;
  const token = options.token ?? io.env.MARKETPLACE_ADMIN_TOKEN ?? (await readTokenFile(options, io, cwd));
  try {
    // Two quick retries: an operator at a prompt wants "server down" in seconds, not after 15.
    return new AdminClient({ baseUrl, token, retry: { maxRetries: 2 } });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** The key holder's client: the key from --key, else MARKETPLACE_KEY; the same two quick retries. */
function connectAsKeyHolder(options: ParsedOptions, io: CliIo): MarketplaceClient {
  const baseUrl = options.url ?? io.env.MARKETPLACE_URL ?? DEFAULT_URL;
  const apiKey = options.key ?? io.env.MARKETPLACE_KEY;
  if (apiKey === undefined || apiKey.trim() === '') {
    throw new CliError('no API key: set MARKETPLACE_KEY (or pass --key) to a key of the webhook\'s owner with read:webhooks (deliveries) or write:webhooks (redeliver)');
  }
  try {
    return new MarketplaceClient({ baseUrl, apiKey, retry: { maxRetries: 2 } });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

async function readTokenFile(options: ParsedOptions, io: CliIo, cwd: string): Promise<string> {
  const dataDir = options['data-dir'] ?? io.env.DATA_DIR ?? './data';
  const advice = 'pass --token, set MARKETPLACE_ADMIN_TOKEN, or point --data-dir at the server\'s data directory';
  if (dataDir === ':memory:') throw new CliError(`no admin token (DATA_DIR is :memory:, so there is no token file): ${advice}`);
  const file = join(resolve(cwd, dataDir), OPERATOR_TOKEN_FILE_NAME);
  let token: string;
  try {
    token = (await readFile(file, 'utf8')).trim();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(`no admin token: cannot read ${file} (${code ?? String(error)}); ${advice}`);
  }
  if (token === '') throw new CliError(`no admin token: ${file} is empty; ${advice}`);
  return token;
}

/** Whether anything (a file, a folder, a link) is at `target`. */
async function pathExists(target: string): Promise<boolean> {
  try {
    await lstat(target);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new CliError(`cannot write the backup to ${target}: ${(error as Error).message}`);
  }
}

/** Creates the backup's folder when missing (0700, like the data dir: a backup holds emails and key hashes), or says in one line why it cannot. */
async function makeBackupFolder(target: string): Promise<void> {
  try {
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'EEXIST' || (error as NodeJS.ErrnoException).code === 'ENOTDIR' ? `${dirname(target)} is not a folder` : (error as Error).message;
    throw new CliError(`cannot write the backup to ${target}: ${reason}`);
  }
}

function describeFailure(error: unknown): string {
  if (error instanceof MarketplaceApiError) {
    const parts = [`${error.error} (HTTP ${error.status})`];
    if (error.details) parts.push(Object.entries(error.details).map(([field, problem]) => `${field}: ${problem}`).join('; '));
    if (error.required) parts.push(`needs one of: ${error.required.join(', ')}`);
    if (error.hint) parts.push(error.hint);
    if (error.requestId) parts.push(`request id ${error.requestId}`);
    return parts.join(' — ');
  }
  if (error instanceof MarketplaceNetworkError) {
    return `${error.message}; is the server running? (set --url or MARKETPLACE_URL)`;
  }
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}

function helpText(): string {
  const width = Math.max(...Object.values(COMMANDS).map((command) => command.usage.split(' [')[0]?.split(' --')[0]?.length ?? 0));
  const lines = Object.values(COMMANDS).map((command) => {
    const head = command.usage.split(' [')[0]?.split(' --')[0] ?? command.usage;
    return `  ${head.padEnd(width)}  ${command.summary}`;
  });
  return [
    'usage: marketplace <command> [options]   (npm run cli -- <command> [options])',
    '',
    'commands:',
    `  ${'serve'.padEnd(width)}  start the server (configured by the environment: PORT, DATA_DIR, ...)`,
    ...lines,
    `  ${'help'.padEnd(width)}  this text; <command> --help shows its options`,
    `  ${'--version'.padEnd(width)}  the version`,
    '',
    'connection (every command but repair and migrate):',
    `  --url <url>        server address; else MARKETPLACE_URL, else ${DEFAULT_URL}`,
    `  --token <token>    admin token; else MARKETPLACE_ADMIN_TOKEN, else the file <data-dir>/${OPERATOR_TOKEN_FILE_NAME}`,
    `  --data-dir <dir>   where to find ${OPERATOR_TOKEN_FILE_NAME}; else DATA_DIR, else ./data`,
    '  --key <key>        webhooks deliveries and redeliver, events tail only, instead of the token: an API key;',
    '                     else MARKETPLACE_KEY (the variable keeps it out of the process list)',
    '',
    'Results are printed as JSON. Exit codes: 0 done, 1 failed, 2 wrong command line.',
    '',
  ].join('\n');
}

/** `marketplace serve --help`: what serve reads; it starts nothing. */
export const SERVE_HELP = [
  'usage: marketplace serve   (npm start in a checkout)',
  '',
  'Starts the server in this process, configured by the environment:',
  '  PORT, HOST            where to listen (default 127.0.0.1:3000)',
  '  DATA_DIR              where the records live (default ./data; :memory: keeps nothing)',
  '  MARKETPLACE_DEMO      1 seeds an empty store with demo users and prints their keys;',
  '                        default 1, or 0 when NODE_ENV=production',
  '  MARKETPLACE_ADMIN_TOKEN  the operator token (else one is made in DATA_DIR/admin-token)',
  '  DATABASE_URL, REDIS_URL  many instances on PostgreSQL and Redis (both or neither)',
  '',
  'Every setting, with its default: .env.example and docs/operations.md.',
  '',
].join('\n');

function isMainModule(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

/**
 * The `marketplace` command as a process: `serve` runs the server (main.ts, which owns the
 * process from then on); anything else is one operator command, its result the exit code.
 * No top-level await here, so the single executable's CommonJS bundle can hold this module.
 */
export async function runCommandLine(argv: string[]): Promise<void> {
  if (argv[0] === 'serve') {
    if (argv.slice(1).some((argument) => argument === '--help' || argument === '-h' || argument === 'help')) {
      process.stdout.write(SERVE_HELP);
      return;
    }
    if (argv.length > 1) {
      process.stderr.write(`error: serve takes no arguments (got ${JSON.stringify(argv[1])}); it is configured by the environment\n${SERVE_HELP}`);
      process.exitCode = 2;
      return;
    }
    await import('./main.ts');
    return;
  }
  process.exitCode = await runCli(argv, { stdout: process.stdout, stderr: process.stderr, env: process.env });
}

if (isMainModule()) void runCommandLine(process.argv.slice(2));
