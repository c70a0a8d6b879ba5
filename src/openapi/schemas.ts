// The shared schemas: the resources and the error and pagination shapes.

import { EMAIL_SHAPE, NOT_BLANK, type Schema } from './schema.ts';

const LISTING_TYPES = ['SKILL', 'AGENT', 'PROMPT', 'TEMPLATE', 'DATASET', 'TOOL'];
const timestamp = { type: 'string', format: 'date-time' };
const price = { type: 'number', minimum: 0, maximum: 1_000_000, multipleOf: 0.01 };
const tags = { type: 'array', maxItems: 10, items: { type: 'string', minLength: 1, maxLength: 32, pattern: NOT_BLANK, description: 'Trimmed; must not be empty or only white space.' } };

/** A URL field that also takes "" (which clears it). */
const clearableUrl = {
  anyOf: [{ type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: 2048 }, { const: '' }],
  description: 'An http(s) URL, or "" to clear it.',
};

const EMAIL_RULES =
  'Stricter than `format: email`: one "@", a domain of two or more labels none of them empty (no leading, trailing or doubled dot), no white space inside; at most 254 characters after trimming. ' +
  'Trimmed and stored in Unicode NFC, lower-cased; unique among users in that form (NFC and NFD spellings are one address). Refused: invisible characters, look-alikes NFKC would change (full-width letters), an empty domain label (trailing dot).';

/** Profile fields as a client sends them; lengths count after trimming. */
export const PROFILE_FIELDS: Record<string, Schema> = {
  name: { type: 'string', minLength: 1, maxLength: 100, pattern: NOT_BLANK, description: 'Trimmed (the length counts after trimming); must not be empty or only white space.' },
  bio: { type: 'string', maxLength: 500, description: 'Trimmed; "" clears it.' },
  website: clearableUrl,
  avatar_url: clearableUrl,
  email: {
    anyOf: [{ type: 'string', format: 'email', pattern: EMAIL_SHAPE, maxLength: 254 }, { const: '' }],
    description: `${EMAIL_RULES} "" clears it.`,
  },
};

/** What a user may send to change her own profile: the email can be changed, never cleared (it is what she signs in with). */
const OWN_PROFILE_FIELDS: Record<string, Schema> = {
  ...PROFILE_FIELDS,
  email: { type: 'string', format: 'email', pattern: EMAIL_SHAPE, maxLength: 254, description: `${EMAIL_RULES} It cannot be cleared ("" → 400).` },
};

/** At least one character that is neither white space nor a control or format character (the common invisible ones). */
const VISIBLE = '[^\\s\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\ufeff]';

/** The fields a client may send for a listing, on create and update alike; lengths count after trimming. */
const LISTING_INPUT = {
  title: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    pattern: VISIBLE,
    description: 'Trimmed (the length counts after trimming); must not be empty, nor only white space or invisible characters (control and format characters such as U+200B or U+0083).',
  },
  description: { type: 'string', maxLength: 5000, description: 'Trimmed (the length counts after trimming); may be "".' },
  type: { enum: LISTING_TYPES },
  price,
  tags,
};

export const SHARED_SCHEMAS: Record<string, Schema> = {
  Error: {
    type: 'object',
    required: ['error'],
    properties: {
      error: { type: 'string', description: 'What went wrong, in words a person can act on.' },
      quota: {
        type: 'object',
        required: ['requests', 'used', 'period', 'resets_at'],
        description: "Only on a 429 for a used-up plan quota (what tells it from the per-minute 429): the quota, its count and when it starts again.",
        properties: {
          requests: { type: 'integer', minimum: 1 },
          used: { type: 'integer', minimum: 0 },
          period: { enum: ['day', 'month'] },
          resets_at: { type: 'string', format: 'date-time' },
        },
      },
      details: { type: 'object', additionalProperties: { type: 'string' }, description: 'Per-field problems.' },
      hint: { type: 'string' },
      required: { type: 'array', items: { type: 'string' }, description: 'Permission entries that would allow the request.' },
      request_id: { type: 'string' },
    },
  },
  Pagination: {
    type: 'object',
    required: ['page', 'limit', 'total', 'total_pages'],
    properties: { page: { type: 'integer' }, limit: { type: 'integer' }, total: { type: 'integer' }, total_pages: { type: 'integer' } },
  },
  Listing: {
    type: 'object',
    required: ['id', 'title', 'description', 'type', 'price', 'tags', 'status', 'owner_id', 'created_at', 'updated_at'],
    properties: {
      id: { type: 'string', examples: ['lst_4fQ2kLm9XcVb7NpR1sTz'] },
      title: { type: 'string', minLength: 1, maxLength: 200 },
      description: { type: 'string', maxLength: 5000 },
      type: { enum: LISTING_TYPES },
      price,
      tags,
      status: { enum: ['active', 'archived', 'removed'], description: '`removed`: taken down by the operator; only its owner (and the operator) can see it.' },
      owner_id: { type: 'string' },
      created_at: timestamp,
      updated_at: timestamp,
      removal_reason: { type: 'string', description: 'Only while removed.' },
      removed_at: { ...timestamp, description: 'Only while removed.' },
    },
  },
  NewListing: {
    type: 'object',
    additionalProperties: false,
    required: ['title', 'type', 'price'],
    properties: LISTING_INPUT,
  },
  ListingChanges: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: LISTING_INPUT,
  },
  PublicUser: {
    type: 'object',
    required: ['id', 'name', 'bio', 'website', 'avatar_url', 'role', 'created_at'],
    properties: {
      id: { type: 'string' },
      name: { type: 'string' },
      bio: { type: 'string' },
      website: { type: 'string' },
      avatar_url: { type: 'string' },
      role: { enum: ['creator', 'member'] },
      created_at: timestamp,
    },
  },
  User: {
    allOf: [
      { $ref: '#/components/schemas/PublicUser' },
      { type: 'object', required: ['email', 'updated_at'], properties: { email: { type: 'string' }, updated_at: timestamp } },
    ],
  },
  AdminUser: {
    allOf: [
      { $ref: '#/components/schemas/User' },
      {
        type: 'object',
        required: ['status', 'suspended_at', 'suspension_reason', 'two_factor'],
        properties: {
          status: { enum: ['active', 'suspended', 'erased'] },
          two_factor: { type: 'boolean', description: 'Whether the user signs in to the portal with a second factor (reset with DELETE /admin/v1/users/:id/two-factor).' },
          suspended_at: { type: ['string', 'null'], format: 'date-time' },
          suspension_reason: { type: ['string', 'null'] },
        },
      },
    ],
  },
  AuditEntry: {
    type: 'object',
    required: ['id', 'at', 'actor', 'action', 'target_type', 'target_id', 'changes', 'request_id'],
    properties: {
      id: { type: 'string', examples: ['aud_9Xk2LmQ7pR4sT1vW3yZa'] },
      at: timestamp,
      actor: {
        description: 'Who acted: the operator (with the operator token), or a user in the developer portal.',
        oneOf: [
          { type: 'object', required: ['type'], additionalProperties: false, properties: { type: { const: 'operator' } } },
          { type: 'object', required: ['type', 'id'], additionalProperties: false, properties: { type: { const: 'user' }, id: { type: 'string' } } },
        ],
      },
      action: {
        type: 'string',
        examples: ['user.create', 'user.update', 'user.suspend', 'user.unsuspend', 'user.erase', 'key.create', 'key.update', 'key.revoke', 'key.narrow', 'listing.remove', 'listing.restore', 'store.compact', 'user.invite', 'portal.sign_in', 'portal.sign_out', 'portal.password_set', 'portal.password_change', 'portal.sign_up', 'portal.profile_update'],
      },
      target_type: { enum: ['user', 'key', 'listing', 'store', 'plan', 'webhook'] },
      target_id: { type: 'string' },
      changes: { type: 'object', additionalProperties: true, description: 'Field → {from, to} for edits; what was set or done for other actions. Never a secret; erased data reads "[erased]".' },
      request_id: { type: 'string', description: 'The X-Request-Id of the request that did it.' },
    },
  },
  ProfileChanges: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: OWN_PROFILE_FIELDS,
  },
  ApiKey: {
    type: 'object',
    required: ['id', 'user_id', 'name', 'prefix', 'last_four', 'permissions', 'rate_limit', 'created_at', 'updated_at', 'revoked_at', 'expires_at', 'plan', 'previous_secret_expires_at', 'last_used_at'],
    properties: {
      id: { type: 'string' },
      user_id: { type: 'string' },
      name: { type: 'string' },
      prefix: { type: 'string', examples: ['market_live_'] },
      last_four: { type: 'string' },
      permissions: { type: 'array', items: { type: 'string' }, examples: [['read:listings', 'GET /v1/listings/:id']] },
      rate_limit: { type: 'integer', minimum: 1, maximum: 1_000_000, description: 'Requests per minute (sliding window).' },
      created_at: timestamp,
      updated_at: timestamp,
      revoked_at: { type: ['string', 'null'], format: 'date-time' },
      expires_at: { type: ['string', 'null'], format: 'date-time', description: 'When the key stops working (refused with 401 saying it expired); null: never.' },
      plan: { type: ['string', 'null'], description: "The plan that sets rate_limit; null when the operator set a limit of the key's own." },
      previous_secret_expires_at: { type: ['string', 'null'], format: 'date-time', description: 'After a roll: until when the previous secret is also accepted; null if the key was never rolled with a grace.' },
      last_used_at: { type: ['string', 'null'], format: 'date-time', description: 'The last request made with the key; null if none yet.' },
    },
  },
  Plan: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'name', 'rate_limit', 'self_service', 'quota'],
    properties: {
      id: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,39}$', examples: ['pro'] },
      name: { type: 'string', minLength: 1, maxLength: 60, pattern: NOT_BLANK, examples: ['Pro'], description: 'Trimmed; must not be empty or only white space.' },
      rate_limit: { type: 'integer', minimum: 1, maximum: 1_000_000, description: 'Requests per minute a key on this plan may make.' },
      self_service: { type: 'boolean', description: 'true: users switch their keys to it themselves; false: they request it and the operator decides.' },
      quota: {
        oneOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['requests', 'period'],
            properties: {
              requests: { type: 'integer', minimum: 1, maximum: 1_000_000_000, description: 'Requests allowed per period.' },
              period: { enum: ['day', 'month'], description: 'A UTC calendar day or month.' },
            },
          },
          { type: 'null' },
        ],
        description:
          "Requests per UTC day or month, shared by all of one user's keys on the plan (as its per-minute window is); null: no quota. Optional when saving (absent means null). Past it every /v1 request of those keys is 429 with the quota in the body until the period ends.",
      },
    },
  },
  PlanRequest: {
    type: 'object',
    required: ['id', 'key_id', 'user_id', 'plan', 'status', 'created_at', 'decided_at', 'note'],
    properties: {
      id: { type: 'string', examples: ['prq_4cT9wB2mQx7LpZ0aR5sd'] },
      key_id: { type: 'string' },
      user_id: { type: 'string' },
      plan: { type: 'string' },
      status: { enum: ['pending', 'approved', 'declined', 'cancelled'], description: '`cancelled`: withdrawn by the user while pending.' },
      created_at: timestamp,
      decided_at: { type: ['string', 'null'], format: 'date-time', description: 'When it was approved, declined or cancelled.' },
      note: { type: ['string', 'null'], maxLength: 500, description: "The operator's note on the decision, or null." },
    },
  },
  RolledApiKey: {
    allOf: [
      { $ref: '#/components/schemas/ApiKey' },
      {
        type: 'object',
        required: ['key', 'previous_secret_expires_at'],
        properties: {
          key: { type: 'string', description: 'The new plain key, shown in this answer only.' },
          previous_secret_expires_at: { type: 'string', format: 'date-time', description: 'When the previous secret stops working (the roll itself when the grace is 0).' },
        },
      },
    ],
  },
  NewApiKey: {
    allOf: [
      { $ref: '#/components/schemas/ApiKey' },
      { type: 'object', required: ['key'], properties: { key: { type: 'string', description: 'The plain key, shown in this answer only.' } } },
    ],
  },
};

/** A plan as PUT /admin/v1/plans takes it: a Plan whose quota may be left out (meaning null). */
SHARED_SCHEMAS.PlanInput = { ...SHARED_SCHEMAS.Plan!, required: ['id', 'name', 'rate_limit', 'self_service'] };
