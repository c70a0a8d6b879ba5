// The list machinery every list endpoint shares: query names checked against what the endpoint
// allows, `page` (≥ 1, default 1) and `limit` (1-100, default 20), and the pagination object.

import { badRequest } from '../domain/errors.ts';

export interface PageRequest {
  page: number;
  limit: number;
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  total_pages: number;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
export const MAX_PAGE = 1_000_000_000;

/** 400 naming the allowed parameters when the query has any other, or one twice. */
export function checkQueryNames(query: URLSearchParams, allowed: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (!allowed.includes(name)) {
      throw badRequest(`Unknown query parameter "${name}". Allowed: ${allowed.join(', ')}.`, {
        [name]: 'unknown parameter',
      });
    }
    if (seen.has(name)) throw badRequest(`Query parameter "${name}" is given more than once.`, { [name]: 'repeated' });
    seen.add(name);
  }
}

export function readPageRequest(query: URLSearchParams): PageRequest {
  return {
    page: integerParam(query, 'page', 1, 1, MAX_PAGE),
    limit: integerParam(query, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT),
  };
}

export function integerParam(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  if (!/^\d{1,10}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw badRequest(`Query parameter "${name}" must be a whole number from ${min} to ${max}.`, {
      [name]: `must be an integer from ${min} to ${max}`,
    });
  }
  return Number(raw);
}

export function pagination({ page, limit }: PageRequest, total: number): Pagination {
  return { page, limit, total, total_pages: Math.ceil(total / limit) };
}

/** One page of an already ordered array. */
export function pageOf<T>(items: readonly T[], request: PageRequest): { data: T[]; pagination: Pagination } {
  const start = (request.page - 1) * request.limit;
  return { data: items.slice(start, start + request.limit), pagination: pagination(request, items.length) };
}
