// The developer portal (contract section 20): a user's own account, keys, plans, webhooks,
// listings and activity under /portal/v1, signed in with a password and, if she turned it on,
// a second factor; the operator's invitations and two-factor resets; the portal's page at
// /portal. Installed by src/app.ts when MARKETPLACE_MODULES names `portal` (the default).

import type { MarketplaceModule, ModuleHost } from '../../module.ts';
import type { PortalRoute } from '../../http/route.ts';
import { Router } from '../../router.ts';
import { pageServer } from '../../http/static-pages.ts';
import { ActivityLog } from './activity.ts';
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
import { portalWebhookRoutes } from './routes/webhooks.ts';
import { portalSettingsRoutes } from './routes/settings.ts';
import { twoFactorResetRoutes } from './routes/two-factor-reset.ts';
import { portalTwoFactorRoutes } from './routes/two-factor.ts';
import { SecretSealer } from './sealed-secrets.ts';
import { PortalSessions } from './sessions.ts';
import { SignInLimits } from './sign-in-limits.ts';
import { sweepExpiredTickets } from './sign-in-tickets.ts';
import { TwoFactorRules } from './two-factor.ts';
import { AUDIT } from '../../domain/records.ts';

/** Failed sign-ins per client address, the same count as the /v1 gate's failed keys. */
const FAILED_AUTH_LIMIT = 100;
/** Ended sessions and expired sign-in tickets are deleted this often. */
const SESSION_SWEEP_MS = 60 * 60 * 1000;

export const portalModule: MarketplaceModule = {
  name: 'portal',
  install(host: ModuleHost) {
    const { store, clock, config, audit, clientAddress, outbox, usage: usageReader, keyLimiter, backends } = host;
    const sessions = new PortalSessions({ store, clock, origin: { publicOrigin: config.publicOrigin }, warn: host.warn });
    void prepareDummyHash(config.passwordCost);
    host.measurePasswordWork(scryptLoad);
    const activity = new ActivityLog(store);
    store.onChangeOf(AUDIT, (change) => activity.onAuditChange(change)); // audit entries by the ids they name, for each user's activity log
    const limits = new SignInLimits({ reservations: backends.failureReservations, addressLimit: FAILED_AUTH_LIMIT });
    // Two-factor secrets are sealed under a key derived from the operator token (sealed-secrets.ts).
    const rules = new TwoFactorRules(new SecretSealer(host.operatorToken, 'two-factor secrets'), clock);
    const { passwordCost, portalSignup: signup, brand, webhookAllowPrivate: allowPrivate } = config;
    const { apiRoutes } = host;
    const routes: PortalRoute[] = [
      ...portalSessionRoutes({ store, clock, sessions, audit, limits, clientAddress, passwordCost }),
      ...portalTwoFactorRoutes({ store, clock, sessions, audit, limits, rules, clientAddress }),
      ...portalAccountRoutes({ store, clock, sessions, audit, limits, rules, clientAddress, outbox, signup, passwordCost }),
      ...portalKeyRoutes({ store, clock, brand, apiRoutes, audit, usage: usageReader, keyLimiter }),
      ...portalPlanRoutes({ store, clock, audit }),
      ...portalWebhookRoutes({ store, clock, outbox, audit, allowPrivate, redeliveryLimiter: backends.redeliveryLimiter }),
      ...portalListingRoutes({ store, clock, outbox, audit, usage: usageReader }),
      ...portalActivityRoutes({ activity, clock }),
      ...portalSettingsRoutes({ signup, origin: sessions.origin }),
    ];
    host.addPortalRoutes(routes);
    host.addOperatorRoutes([...invitationRoutes({ clock, audit, origin: sessions.origin }), ...twoFactorResetRoutes({ audit })]);
    const portalRoutes = new Router<PortalRoute>();
    for (const route of routes) portalRoutes.add(route);
    host.addArea('/portal/v1', (run) => createPortalGate({ store, sessions, portalRoutes }, run));
    // The portal's page; its scripts are served beside the dashboard's, under /dashboard/.
    host.addStaticFiles(pageServer({ portalPage: true, dashboardIndex: false }));
    host.addOpenApi({
      operations: { ...portalOperations, ...portalSelfServiceOperations, ...portalActivityOperations, ...portalTwoFactorOperations },
      tags: [{ name: 'portal', description: 'The developer portal: a signed-in user manages their own account (session cookie; writes only from the server\'s own origin).' }],
      securitySchemes: { sessionCookie: SESSION_COOKIE_SCHEME },
    });
    // Ended sessions (idle, past their absolute end, or of a user no longer active) and expired sign-in tickets are deleted.
    host.every(SESSION_SWEEP_MS, 'could not sweep portal sessions', () => sessions.sweepExpired());
    host.every(SESSION_SWEEP_MS, 'could not sweep sign-in tickets', () => sweepExpiredTickets(store, clock));
  },
};
