// Talking to the operator API (/admin/v1). The operator token lives in sessionStorage (gone
// when the tab closes) and travels only in the Authorization header, never in a URL.

const TOKEN_KEY = 'marketplace.operatorToken';
const BASE = '/admin/v1';

/** An error answer from the API, carrying what the server said. */
export class ApiError extends Error {
  constructor(status, body) {
    const message = body && typeof body.error === 'string' ? body.error : `The server answered ${status}.`;
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.details = body && typeof body.details === 'object' ? body.details : null;
    this.requestId = body && typeof body.request_id === 'string' ? body.request_id : null;
    this.handled = false;
  }
}

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function clearToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

const unauthorizedListeners = new Set();
/** Called when the API refuses the token (401), so the page can ask to sign in again. */
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
}

async function request(method, path, { query, body, token } = {}) {
  const url = new URL(BASE + path, window.location.origin);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  const headers = { Accept: 'application/json', Authorization: `Bearer ${token ?? getToken() ?? ''}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
    });
  } catch {
    throw new ApiError(0, { error: 'Cannot reach the server. Is it running?' });
  }
  const text = await response.text();
  let parsed = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  if (!response.ok) {
    const error = new ApiError(response.status, parsed);
    if (response.status === 401 && token === undefined) {
      // The page goes back to sign-in and says why; callers need not report this one again.
      error.handled = true;
      for (const listener of unauthorizedListeners) listener(error);
    }
    throw error;
  }
  return parsed;
}

/** Checks a token before keeping it: resolves if the API accepts it, throws ApiError if not. */
export async function checkToken(token) {
  await request('GET', '/users', { query: { limit: 1 }, token });
}

export const api = {
  listUsers: (page, limit) => request('GET', '/users', { query: { page, limit } }),
  createUser: (user) => request('POST', '/users', { body: user }),
  updateUser: (id, changes) => request('PATCH', `/users/${encodeURIComponent(id)}`, { body: changes }),
  listKeys: (userId, page, limit) => request('GET', '/keys', { query: { user_id: userId, page, limit } }),
  createKey: (key) => request('POST', '/keys', { body: key }),
  updateKey: (id, changes) => request('PATCH', `/keys/${encodeURIComponent(id)}`, { body: changes }),
  revokeKey: (id) => request('DELETE', `/keys/${encodeURIComponent(id)}`),
  keyUsage: (id, query) => request('GET', `/keys/${encodeURIComponent(id)}/usage`, { query }),
  listWebhooks: (userId, page, limit) => request('GET', '/webhooks', { query: { user_id: userId, page, limit } }),
  getUser: (id) => request('GET', `/users/${encodeURIComponent(id)}`),
  suspendUser: (id, reason) => request('POST', `/users/${encodeURIComponent(id)}/suspend`, { body: { reason } }),
  unsuspendUser: (id) => request('POST', `/users/${encodeURIComponent(id)}/unsuspend`),
  eraseUser: (id) => request('DELETE', `/users/${encodeURIComponent(id)}`),
  inviteUser: (id) => request('POST', `/users/${encodeURIComponent(id)}/invitations`),
  listListings: (query) => request('GET', '/listings', { query }),
  removeListing: (id, reason) => request('POST', `/listings/${encodeURIComponent(id)}/remove`, { body: { reason } }),
  restoreListing: (id) => request('POST', `/listings/${encodeURIComponent(id)}/restore`),
  listAudit: (query) => request('GET', '/audit', { query }),
  listPlans: () => request('GET', '/plans'),
  replacePlans: (plans) => request('PUT', '/plans', { body: { plans } }),
  setKeyQuota: (id, change) => request('POST', `/keys/${encodeURIComponent(id)}/quota`, { body: change }),
  listPlanRequests: (query) => request('GET', '/plan-requests', { query }),
  approvePlanRequest: (id) => request('POST', `/plan-requests/${encodeURIComponent(id)}/approve`),
  declinePlanRequest: (id) => request('POST', `/plan-requests/${encodeURIComponent(id)}/decline`),
};

/** Every item of a paginated list, fetching pages of 100 until done (capped, to stay bounded). */
export async function fetchAll(listPage, maxPages = 20) {
  const items = [];
  for (let page = 1; page <= maxPages; page += 1) {
    const answer = await listPage(page, 100);
    items.push(...(answer?.data ?? []));
    const totalPages = answer?.pagination?.total_pages ?? 1;
    if (page >= totalPages) break;
  }
  return items;
}
