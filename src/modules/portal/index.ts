// The developer portal (contract section 20): a user's own account, keys, plans, webhooks,
// listings and activity under /portal/v1, signed in with a password and, if she turned it on,
// a second factor; the operator's invitations and two-factor resets; the portal's page at
// /portal. Installed by src/app.ts when MARKETPLACE_MODULES names `portal` (the default).

import type { MarketplaceModule, ModuleHost } from '../../module.ts';
import type { PortalRoute } from '../../http/route.ts';
import { Router } from '../../router.ts';
import { pageServer } from '../../http/static-pages.ts';
import { ActivityLog } from './activity.ts';
import { signInReservations } from './failure-places.ts';
import { createPortalGate } from './gate.ts';
import { portalActivityOperations } from './openapi/portal-activity.ts';
import { portalSelfServiceOperations } from './openapi/portal-keys.ts';
import { portalTwoFactorOperations } from './openapi/portal-two-factor.ts';
import { portalOperations, SESSION_COOKIE_SCHEME } from './openapi/portal.ts';
import { prepareDummyHash, scryptLoad } from './passwords.ts';
import { portalAccountRoutes } from './routes/account.ts';
import { portalActivityRoutes } from './routes/activity.ts';
import { invitationRoutes } from './routes/invitations.ts';
import { portalKeyRoutes } from './routes/keys.ts';
import { portalListingRoutes } from './routes/listings.ts';
import { portalPlanRoutes } from './routes/plans.ts';
import { portalSessionRoutes } from './routes/session.ts';
import { portalSessionListRoutes } from './routes/sessions.ts';
import { portalSessionOperations } from './openapi/portal-sessions.ts';
import { portalWebhookRoutes } from './routes/webhooks.ts';
import { portalSettingsRoutes } from './routes/settings.ts';
import { twoFactorResetRoutes } from './routes/two-factor-reset.ts';
import { portalTwoFactorRoutes } from './routes/two-factor.ts';
import { twoFactorSealer } from './sealed-secrets.ts';
import { TWO_FACTOR } from '../../domain/account-records.ts';
import { PortalSessions } from './sessions.ts';
import { SignInLimits } from './sign-in-limits.ts';
import { sweepExpiredTickets } from './sign-in-tickets.ts';
import { TwoFactorRules } from './two-factor.ts';
import { WrongCodes } from './wrong-codes.ts';
import { AUDIT } from '../../domain/records.ts';

/** Failed sign-ins per client address, the same count as the /v1 gate's failed keys. */
const FAILED_AUTH_LIMIT = 100;
/** Ended sessions and expired sign-in tickets are deleted this often. */
const SESSION_SWEEP_MS = 60 * 60 * 1000;

export const portalModule: MarketplaceModule = {
  name: 'portal',
  install(host: ModuleHost) {
    const { store, clock, config, audit, clientAddress, outbox, usage: usageReader, keyLimiter, metering, backends } = host;
    const sessions = new PortalSessions({ store, clock, origin: { publicOrigin: config.publicOrigin }, warn: host.warn, clientAddress });
    void prepareDummyHash(config.passwordCost);
    host.measurePasswordWork(scryptLoad);
    const activity = new ActivityLog(store);
    store.onChangeOf(AUDIT, (change) => activity.onAuditChange(change)); // audit entries by the ids they name, for each user's activity log
    const limits = new SignInLimits({ reservations: signInReservations(backends, () => clock.monotonic()), addressLimit: FAILED_AUTH_LIMIT });
    // Two-factor secrets are sealed under a key derived from the operator token (sealed-secrets.ts).
    const sealer = twoFactorSealer(host.operatorToken);
    const rules = new TwoFactorRules(sealer, clock);
    // One stored secret tried at start: a new operator token is said at once, not found out by users.
    const sample = store.values(TWO_FACTOR)[Symbol.iterator]().next().value;
    if (sample !== undefined && sealer.open(sample.sealed_secret, sample.id) === null) {
      host.warn(
        'the two-factor secrets were sealed under another operator token than this one: codes from authenticator apps cannot be checked (recovery codes still sign in). ' +
          'Start with the old token again, or run `marketplace reseal --old-token-file <file>` to seal them under this one.',
      );
    }
    const wrongCodes = new WrongCodes({ store, clock, audit, clientAddress });
    const { passwordCost, portalSignup: signup, brand, webhookAllowPrivate: allowPrivate } = config;
    const { apiRoutes } = host;
    const routes: PortalRoute[] = [
      ...portalSessionRoutes({ store, clock, sessions, audit, limits, clientAddress, passwordCost }),
      ...portalTwoFactorRoutes({ store, clock, sessions, audit, limits, rules, clientAddress, wrongCodes }),
      ...portalAccountRoutes({ store, clock, sessions, audit, limits, rules, wrongCodes, clientAddress, outbox, signup, passwordCost }),
      ...portalKeyRoutes({ store, clock, brand, apiRoutes, audit, usage: usageReader, keyLimiter, metering }),
      ...portalPlanRoutes({ store, clock, audit }),
      ...portalWebhookRoutes({ store, clock, outbox, audit, allowPrivate, redeliveryLimiter: backends.redeliveryLimiter, eventRetentionDays: config.eventRetentionDays }),
      ...portalListingRoutes({ store, clock, outbox, audit, usage: usageReader }),
      ...portalActivityRoutes({ activity, clock }),
      ...portalSessionListRoutes({ store, clock, sessions, audit, clientAddress }),
      ...portalSettingsRoutes({ signup, origin: sessions.origin }),
    ];
    host.addPortalRoutes(routes);
    host.addAdminRoutes([...invitationRoutes({ clock, audit, origin: sessions.origin }), ...twoFactorResetRoutes({ audit, sealer, sealerFor: twoFactorSealer })]);
    const portalRoutes = new Router<PortalRoute>();
    for (const route of routes) portalRoutes.add(route);
    host.addArea('/portal/v1', (run) => createPortalGate({ store, sessions, portalRoutes }, run));
    // The portal's page; its scripts are served beside the dashboard's, under /dashboard/.
    host.addStaticFiles(pageServer({ portalPage: true, dashboardIndex: false }));
    host.addOpenApi({
      operations: { ...portalOperations, ...portalSelfServiceOperations, ...portalActivityOperations, ...portalTwoFactorOperations, ...portalSessionOperations },
      tags: [{ name: 'portal', description: 'The developer portal: a signed-in user manages their own account (session cookie; writes only from the server\'s own origin).' }],
      securitySchemes: { sessionCookie: SESSION_COOKIE_SCHEME },
    });
    // Ended sessions (idle, past their absolute end, or of a user no longer active) and expired sign-in tickets are deleted.
    host.every(SESSION_SWEEP_MS, 'could not sweep portal sessions', () => sessions.sweepExpired());
    host.every(SESSION_SWEEP_MS, 'could not sweep sign-in tickets', () => sweepExpiredTickets(store, clock));
  },
};
