// GET /v1/listings' raw query string → its checked query and page-cache key. Parsing depends on
// the text alone, so a repeated query (the usual case for a cache hit) skips it; invalid ones
// throw and are not kept. Bounded: past 1,000 distinct strings the memory starts afresh.

import { parseListingQuery, queryCacheKey, type ListingQuery } from './search.ts';

const MAX_PARSED_QUERIES = 1_000;

export interface ParsedListingQuery {
  query: ListingQuery;
  cacheKey: string;
}

export class ParsedListingQueries {
  private readonly parsed = new Map<string, ParsedListingQuery>();

  /** `request.search` is the raw query string; its parsed `query` is read only on a miss. */
  get(request: { readonly search: string; readonly query: URLSearchParams }): ParsedListingQuery {
    const { search } = request;
    let parsed = this.parsed.get(search);
    if (parsed === undefined) {
      const checked = parseListingQuery(request.query);
      parsed = { query: checked, cacheKey: queryCacheKey(checked) };
      if (this.parsed.size >= MAX_PARSED_QUERIES) this.parsed.clear();
      this.parsed.set(search, parsed);
    }
    return parsed;
  }
}
