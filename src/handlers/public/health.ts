// Routes outside /v1 that need no key: the health check and the OpenAPI document.

import type { PublicRoute } from '../../http/route.ts';
import { VERSION } from '../../version.ts';

export function healthRoutes(openApiDocument: () => Buffer): PublicRoute[] {
  const healthy = Buffer.from(JSON.stringify({ status: 'ok', version: VERSION }));
  return [
    { method: 'GET', pattern: '/healthz', summary: 'Health check', handle: () => ({ status: 200, bytes: healthy }) },
    {
      method: 'GET',
      pattern: '/openapi.json',
      summary: 'This API described as OpenAPI 3.1',
      handle: () => ({ status: 200, bytes: openApiDocument() }),
    },
  ];
}
