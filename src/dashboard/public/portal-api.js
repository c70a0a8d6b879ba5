// Talking to the portal API (/portal/v1) as the signed-in user. The session is a cookie the
// browser keeps (HttpOnly, so this script never sees it); every write sends a JSON body, and the
// browser adds the Origin header the server checks against cross-site requests.

import { ApiError } from './api.js';

const BASE = '/portal/v1';

const signedOutListeners = new Set();
/** Called when the server answers 401 to a signed-in request: the session ended. */
export function onSignedOut(listener) {
  signedOutListeners.add(listener);
}

async function request(method, path, { query, body, quiet = false } = {}) {
  const url = new URL(BASE + path, window.location.origin);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  const write = method !== 'GET';
  const headers = { Accept: 'application/json' };
  if (write) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: write ? JSON.stringify(body ?? {}) : undefined,
      cache: 'no-store',
      credentials: 'same-origin',
      redirect: 'error',
    });
  } catch {
    throw new ApiError(0, { error: 'Cannot reach the server. Is it running?' });
  }
  if (response.status === 204) return null;
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const error = new ApiError(response.status, normalise(parsed));
    const retryAfter = response.headers.get('Retry-After');
    if (retryAfter) error.retryAfter = Number(retryAfter);
    if (response.status === 401 && !quiet) {
      error.handled = true;
      for (const listener of signedOutListeners) listener(error);
    }
    throw error;
  }
  return parsed;
}

/** Error bodies are `{error: "…"}` or `{error: {message, …}}`; ApiError reads the first shape. */
function normalise(body) {
  if (body && body.error && typeof body.error === 'object') {
    return { ...body, ...body.error, error: String(body.error.message ?? 'The request was refused.') };
  }
  return body;
}

const id = (value) => encodeURIComponent(value);

export const portal = {
  // Getting in: these answer 401 for wrong credentials without ending anything.
  me: () => request('GET', '/me', { quiet: true }),
  signIn: (email, password) => request('POST', '/session', { body: { email, password }, quiet: true }),
  signOut: () => request('DELETE', '/session', { quiet: true }),
  acceptInvitation: (invitation, password) => request('POST', '/password', { body: { invitation, password }, quiet: true }),
  signUp: (name, email, password) => request('POST', '/signup', { body: { name, email, password }, quiet: true }),
  changePassword: (currentPassword, password) => request('POST', '/password', { body: { current_password: currentPassword, password } }),
  updateProfile: (changes) => request('PUT', '/me', { body: changes }),
  // Two-factor sign-in: a wrong code at the second step is a 401 that ends nothing.
  secondFactor: (ticket, factor) => request('POST', '/session/second-factor', { body: { ticket, ...factor }, quiet: true }),
  twoFactorStatus: () => request('GET', '/two-factor'),
  enrolTwoFactor: (currentPassword) => request('POST', '/two-factor', { body: { current_password: currentPassword } }),
  confirmTwoFactor: (code) => request('POST', '/two-factor/confirm', { body: { code } }),
  disableTwoFactor: (currentPassword, code) => request('DELETE', '/two-factor', { body: { current_password: currentPassword, code } }),
  newRecoveryCodes: (currentPassword, code) => request('POST', '/two-factor/recovery-codes', { body: { current_password: currentPassword, code } }),
  // Where the user is signed in: each session's device, and signing devices out.
  listSessions: () => request('GET', '/sessions'),
  endSession: (sessionId) => request('DELETE', `/sessions/${id(sessionId)}`),
  endOtherSessions: () => request('DELETE', '/sessions'),

  listKeys: () => request('GET', '/keys'),
  createKey: (key) => request('POST', '/keys', { body: key }),
  updateKey: (keyId, changes) => request('PATCH', `/keys/${id(keyId)}`, { body: changes }),
  revokeKey: (keyId) => request('DELETE', `/keys/${id(keyId)}`),
  rollKey: (keyId, graceSeconds) => request('POST', `/keys/${id(keyId)}/roll`, { body: { grace_seconds: graceSeconds } }),
  keyUsage: (keyId, query) => request('GET', `/keys/${id(keyId)}/usage`, { query }),

  listPlans: () => request('GET', '/plans'),
  requestPlan: (keyId, plan) => request('POST', '/plan-requests', { body: { key_id: keyId, plan } }),
  listPlanRequests: () => request('GET', '/plan-requests', { query: { limit: 100 } }),
  cancelPlanRequest: (requestId) => request('DELETE', `/plan-requests/${id(requestId)}`),
  settings: () => request('GET', '/settings', { quiet: true }),
  activity: (query) => request('GET', '/activity', { query }),

  listWebhooks: () => request('GET', '/webhooks'),
  createWebhook: (webhook) => request('POST', '/webhooks', { body: webhook }),
  removeWebhook: (webhookId) => request('DELETE', `/webhooks/${id(webhookId)}`),
  testWebhook: (webhookId) => request('POST', `/webhooks/${id(webhookId)}/test`),
  webhookDeliveries: (webhookId) => request('GET', `/webhooks/${id(webhookId)}/deliveries`),
  redeliver: (webhookId, eventId) => request('POST', `/webhooks/${id(webhookId)}/deliveries/${id(eventId)}/redeliver`),
  updateWebhook: (webhookId, changes) => request('PATCH', `/webhooks/${id(webhookId)}`, { body: changes }),
  rotateWebhookSecret: (webhookId, graceSeconds) => request('POST', `/webhooks/${id(webhookId)}/rotate-secret`, { body: { grace_seconds: graceSeconds } }),
  recoverWebhook: (webhookId, since) => request('POST', `/webhooks/${id(webhookId)}/recover`, { body: { since } }),

  listListings: (query) => request('GET', '/listings', { query }),
  createListing: (listing) => request('POST', '/listings', { body: listing }),
  updateListing: (listingId, listing) => request('PUT', `/listings/${id(listingId)}`, { body: listing }),
  archiveListing: (listingId) => request('DELETE', `/listings/${id(listingId)}`),
};

/** The `data` of an answer that may be a list or `{data: [...]}`. */
export function listOf(answer) {
  if (Array.isArray(answer)) return answer;
  if (answer && Array.isArray(answer.data)) return answer.data;
  return [];
}
