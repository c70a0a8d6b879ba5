// What the modules are given (src/module.ts's ModuleHost), and what they add, kept until
// src/app.ts builds the routers, the pipeline and the OpenAPI document from it.

import type { ModuleName } from '../config.ts';
import type { PostIdempotency } from '../http/key-context.ts';
import type { AnswerCompression } from '../http/respond.ts';
import type { ApiRoute, AdminRoute, PortalRoute, PublicRoute } from '../http/route.ts';
import type { StaticAsset } from '../http/static-pages.ts';
import type { ModuleHost } from '../module.ts';
import type { OpenApiPart } from '../openapi/schema.ts';
import type { Gate, Run } from '../pipeline/gate.ts';
import type { KeyCpuBudget } from '../pipeline/request-observer.ts';
import type { ChangeEvent } from '../store/store.ts';
import type { Core } from './core.ts';

/** A task a module runs every so often while the server runs. */
export interface ModuleTimer {
  everyMs: number;
  what: string;
  task: () => Promise<unknown>;
}

export class ModuleAdditions {
  /** Operator routes by the module that added them (app.ts places them in the document's order). */
  readonly adminRoutes = new Map<ModuleName, AdminRoute[]>();
  readonly apiRoutes: ApiRoute[] = [];
  readonly publicRoutes: PublicRoute[] = [];
  readonly portalRoutes: PortalRoute[] = [];
  readonly areas: { prefix: string; makeGate(run: Run): Gate }[] = [];
  readonly staticFiles: ((path: string) => StaticAsset | null)[] = [];
  readonly openApiParts: OpenApiPart[] = [];
  readonly timers: ModuleTimer[] = [];
  readonly closeTasks: (() => Promise<void> | void)[] = [];
  readonly stoppingTasks: (() => void)[] = [];
  /** The cpu-budget module's budget, or null. */
  cpuBudget: KeyCpuBudget | null = null;
  /** The compression module's answer compression, or null. */
  compression: AnswerCompression | null = null;
  /** The idempotency module's Idempotency-Key claims, or null. */
  idempotency: PostIdempotency | null = null;

  /** The host one module is installed with: what it adds is recorded under its name. */
  hostFor(name: ModuleName, core: Core, modules: ReadonlySet<ModuleName>, apiRoutes: readonly ApiRoute[]): ModuleHost {
    const { config, clock, store, backends, outbox, audit, usageReader, clientAddress, warn } = core;
    return {
      config,
      clock,
      store,
      backends,
      outbox,
      audit,
      usage: usageReader,
      keyLimiter: backends.keyLimiter,
      metering: core.metering,
      operatorToken: core.operatorToken.token,
      clientAddress,
      apiRoutes,
      modules,
      warn,
      addApiRoutes: (routes) => void this.apiRoutes.push(...routes),
      addAdminRoutes: (routes) => void this.adminRoutes.set(name, [...(this.adminRoutes.get(name) ?? []), ...routes]),
      addPublicRoutes: (routes) => void this.publicRoutes.push(...routes),
      addPortalRoutes: (routes) => void this.portalRoutes.push(...routes),
      addOpenApi: (part) => void this.openApiParts.push(part),
      measures: core.measures,
      measurePasswordWork: (work) => void (core.measures.passwordWork = work),
      measureOpenEventStreams: (count) => void (core.measures.openEventStreams = count),
      addArea: (prefix, makeGate) => void this.areas.push({ prefix, makeGate }),
      addStaticFiles: (serve) => void this.staticFiles.push(serve),
      onStoreChange: (react: (change: ChangeEvent) => void) => store.onChange(react),
      every: (everyMs, what, task) => void this.timers.push({ everyMs, what, task }),
      onStopping: (task) => void this.stoppingTasks.push(task),
      onClose: (task) => void this.closeTasks.push(task),
      useListingSearch: (make) => core.index.useSearch(make()),
      useCpuBudget: (budget) => void (this.cpuBudget = budget),
      useCompression: (compression) => void (this.compression = compression),
      useIdempotency: (idempotency) => void (this.idempotency = idempotency),
      switchOffFailingWebhooks: (switchOff) => core.dispatcher.switchOffFailing(switchOff),
    };
  }

  /** Every module's static files as one look-up: the first that knows the path answers. */
  staticAsset(): ((path: string) => StaticAsset | null) | null {
    const servers = this.staticFiles;
    if (servers.length === 0) return null;
    return (path) => {
      for (const serve of servers) {
        const asset = serve(path);
        if (asset !== null) return asset;
      }
      return null;
    };
  }
}
