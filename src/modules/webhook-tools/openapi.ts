// OpenAPI for the webhook-tools module's routes: PATCH /v1/webhooks/:id, rotate-secret and
// recover. Their bodies, answers and schemas are src/openapi/webhooks.ts's, shared with the
// portal's page of the same routes.

import { curl, errorAnswer, GATE_ERRORS, pathId } from '../../openapi/schema.ts';
import type { Operations } from '../../openapi/schema.ts';
import { RECOVER_ANSWERS, RECOVER_BODY, ROTATE_SECRET_ANSWERS, ROTATE_SECRET_BODY, WEBHOOK_PATCH_ANSWERS, WEBHOOK_PATCH_BODY } from '../../openapi/webhooks.ts';

const KEY = '-H "Authorization: Bearer $KEY"';

export const webhookToolOperations: Operations = {
  'PATCH /v1/webhooks/:id': {
    operationId: 'updateWebhook',
    description:
      'Changes one of your webhooks: any of `url`, `events`, `description`, `enabled`. The URL rules of registration apply again. `enabled: false` pauses it (nothing is sent; each event meanwhile is a `skipped` outcome); ' +
      '`enabled: true` resumes it, also one switched off by a 410 or for failing, keeping its id and secret. Needs `write:webhooks`. Audited.',
    parameters: [pathId('Webhook id')],
    requestBody: WEBHOOK_PATCH_BODY,
    responses: { ...WEBHOOK_PATCH_ANSWERS, ...GATE_ERRORS },
    ...curl(`curl -s -X PATCH ${KEY} -H 'Content-Type: application/json' -d '{"enabled":false}' http://127.0.0.1:3000/v1/webhooks/wh_3kT9pQ2mXz7LbV1nR5sW`),
  },
  'POST /v1/webhooks/:id/rotate-secret': {
    operationId: 'rotateWebhookSecret',
    description:
      'Gives the webhook a new secret, shown once. For `grace_seconds` (default a day) every delivery carries two `v1,` signatures, the new secret\'s first, each valid for its own secret; after it, one. ' +
      'Rotating again ends the older secret at once. Needs `write:webhooks`. Audited.',
    parameters: [pathId('Webhook id')],
    requestBody: ROTATE_SECRET_BODY,
    responses: { ...ROTATE_SECRET_ANSWERS, ...GATE_ERRORS },
    ...curl(`curl -s ${KEY} -H 'Content-Type: application/json' -d '{"grace_seconds":3600}' http://127.0.0.1:3000/v1/webhooks/wh_3kT9pQ2mXz7LbV1nR5sW/rotate-secret`),
  },
  'POST /v1/webhooks/:id/recover': {
    operationId: 'recoverWebhook',
    description:
      "Sends again now every event among the webhook's kept outcomes created since `since` whose latest outcome is not `delivered` (failed, retrying, skipped), oldest first, each with its own `webhook-id`; " +
      'one still retrying is sent now instead of at its retry. Counts as one redelivery against the 60 an hour. Needs `write:webhooks`.',
    parameters: [pathId('Webhook id')],
    requestBody: RECOVER_BODY,
    responses: {
      ...RECOVER_ANSWERS,
      ...GATE_ERRORS,
      '429': errorAnswer("The key's rate limit or CPU budget, or 60 redeliveries by this user in the last hour; wait for Retry-After seconds."),
    },
    ...curl(`curl -s ${KEY} -H 'Content-Type: application/json' -d '{"since":"2026-01-31T12:00:00Z"}' http://127.0.0.1:3000/v1/webhooks/wh_3kT9pQ2mXz7LbV1nR5sW/recover`),
  },
};
