// GET /: where a newcomer (or a program) who opens the server's address finds the rest. JSON
// for API clients; a small HTML page of links when a browser asks for text/html.

import type { PublicRoute } from '../../http/route.ts';
import { VERSION } from '../../version.ts';

/** The links, relative to the server's address so they stay right behind a reverse proxy. */
export const HOME_LINKS = {
  name: 'Marketplace API',
  version: VERSION,
  api: '/v1',
  dashboard: '/dashboard',
  portal: '/portal',
  openapi: '/openapi.json',
  health: '/healthz',
  docs: 'README.md and docs/ in the server\'s source (docs/api.md is the API reference)',
  hint: 'Send an API key as "Authorization: Bearer <key>" to /v1/...; users get their keys at /portal; the operator signs in to /dashboard with the operator token.',
} as const;

const JSON_BYTES = Buffer.from(JSON.stringify(HOME_LINKS));

// No script and no style, so the strictest policy fits.
const HTML_BYTES = Buffer.from(
  [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><title>Marketplace API</title></head><body>',
    `<h1>Marketplace API <small>${VERSION}</small></h1>`,
    '<ul>',
    '<li><a href="portal">Developer portal</a>: users sign in for their API keys, usage and webhooks</li>',
    '<li><a href="dashboard">Operator dashboard</a>: sign in with the operator token</li>',
    '<li><a href="openapi.json">API description</a> (OpenAPI 3.1)</li>',
    '<li><a href="healthz">Health check</a></li>',
    '</ul>',
    '<p>The API lives under <code>/v1</code>; send an API key as <code>Authorization: Bearer &lt;key&gt;</code>.',
    'The documentation is in the server\'s source: <code>README.md</code> and <code>docs/</code> (<code>docs/api.md</code> is the API reference).</p>',
    '</body></html>',
    '',
  ].join('\n'),
);

const HTML_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  Vary: 'Accept',
};

/** True when the client prefers HTML: a browser's Accept names text/html, an API client's does not. */
function wantsHtml(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/html\s*(;|,|$)/i.test(accept);
}

export function homeRoute(): PublicRoute {
  return {
    method: 'GET',
    pattern: '/',
    summary: 'Where the dashboard, the API description and the docs are',
    handle: (context) =>
      wantsHtml(context.req.headers.accept)
        ? { status: 200, bytes: HTML_BYTES, headers: HTML_HEADERS }
        : { status: 200, bytes: JSON_BYTES, headers: { Vary: 'Accept' } },
  };
}
