// Routes outside /v1 that need no key: the health check and the OpenAPI document.

import type { PublicRoute } from '../../http/route.ts';
import { VERSION } from '../../version.ts';

/** `openApiDocument`: the document's bytes (made on the first request, then kept). */
export function healthRoutes(openApiDocument: () => Buffer | Promise<Buffer>): PublicRoute[] {
  const healthy = Buffer.from(JSON.stringify({ status: 'ok', version: VERSION }));
  return [
    { method: 'GET', pattern: '/healthz', summary: 'Health check', handle: () => ({ status: 200, bytes: healthy }) },
    {
      method: 'GET',
      pattern: '/openapi.json',
      summary: 'This API described as OpenAPI 3.1',
      handle: () => {
        const bytes = openApiDocument();
        return bytes instanceof Promise ? bytes.then((ready) => ({ status: 200, bytes: ready })) : { status: 200, bytes };
      },
    },
  ];
}
