/**
 * The express application: REST v2, the admin API and health endpoints. Handlers
 * only translate HTTP to service calls; status codes come from the error catalogue.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { rejectRepeatedParams } from '../../domain/list-query.js';
import type { Right } from '../../auth/principal.js';
import { checkInstructionWrite } from '../../auth/instruction-rights.js';
import { allowedOn, idFilter, idForbidden, keepAllowed, readFilter, type IdFilter } from '../../auth/rights.js';
import type { InstructionRecord } from '../../domain/instruction.js';
import type { Realm } from '../../domain/types.js';
import { errorCatalogue } from '../../errors.js';
import type { Access } from '../../service/access.js';
import type { AreaService } from '../../service/areas.js';
import type { InstructionService } from '../../service/instructions.js';
import type { ObjectService } from '../../service/objects.js';
import type { RealmService } from '../../service/realms.js';
import type { TenantService } from '../../service/tenants.js';
import { keyedById } from '../../service/views.js';
import { parseRestSearchParams, RealmSearch } from '../../service/realm-search.js';
import { parseRestHistoryParams } from '../../domain/history-query.js';
import { restHistoryEntry, restSearchRecord } from './hivekit-views.js';
import type { Store } from '../../store/port.js';
import { accessLog, type AnsweredRequestObserver } from './access-log.js';
import { authenticate, stripBodyToken } from './authenticate.js';
import { bodyReader, bodyStep, jsonBody } from './body.js';
import { cors } from './cors.js';
import { wsPaths } from '../ws/ws-transport.js';
import { errorHandler, methodNotAllowed, notFoundHandler, upgradeRequired } from './errors.js';
import { adminRoutes } from './admin-routes.js';
import { realmRoutes } from './realm-routes.js';
import { mountedAt, param, principalOf } from './request-context.js';

export interface RestDeps {
  access: Access;
  realms: RealmService;
  tenants: TenantService;
  objects: ObjectService;
  areas: AreaService;
  instructions: InstructionService;
  store: Store;
  logger: Logger;
  maxBodyBytes: number;
  /** The most entries of a history page (LOCUS_MAX_PAGE; default 10,000). */
  maxPage?: number;
  build: { version: string; buildDate: string };
  /** False while shutting down: /readyz answers 503. */
  isAccepting: () => boolean;
  /** The event bus's reach (NATS outage): /readyz stays ready but names it in `detail`. */
  busHealth?: () => { ok: boolean; detail: string };
  /** Origins allowed to call from a browser (LOCUS_CORS_ORIGINS); empty: no CORS headers. */
  corsOrigins: readonly string[];
  /** LOCUS_AUTH_COOKIE_NAME: a cookie that carries the token on REST v2; null: none. */
  authCookieName: string | null;
  /** Open v1 WebSocket and TCP connections, for /health-check. */
  openConnections: () => number;
  /** More routes, mounted before the 404 handler (`POST /v1/http`). */
  routers?: Router[];
  /** A span per request (observability/tracing); absent while tracing is off. */
  traceRequests?: RequestHandler;
  /** LOCUS_METRICS: the metrics' observer of answered requests and `GET /metrics`; null or absent: neither (a 404). */
  metrics?: RestMetricsHooks | null;
}

export interface RestMetricsHooks {
  /** Called by the access log's finish hook (one hook per request for both). */
  answered: AnsweredRequestObserver;
  route: RequestHandler;
}

const success = { result: 'success' } as const;

function realmOf(res: Response): Realm {
  return res.locals.realm as Realm;
}

/** The query parameters an endpoint reads: `token` is authentication's (authenticate.ts), not the endpoint's. */
function query(req: Request): Record<string, unknown> {
  const params: Record<string, unknown> = { ...req.query };
  delete params.token;
  rejectRepeatedParams(params);
  return params;
}

/**
 * The `per` letter a REST request needs (opaque tokens: R needs scope read, the others write):
 * reads R, deletes D, an area or instruction create (POST, 409 on an existing id) C, every other write U
 * (object writes are create-or-update: they need U, which C alone does not give).
 */
function rightFor(req: Request): Right {
  switch (req.method) {
    case 'GET':
    case 'HEAD':
      return 'R';
    case 'DELETE':
      return 'D';
    case 'POST':
      return req.path.startsWith('/area') || req.path.startsWith('/instruction') ? 'C' : 'U';
    default:
      return 'U';
  }
}

function realmGate(access: Access): RequestHandler {
  return async (req, res, next) => {
    res.locals.realm = await access.enterRealm(principalOf(res), param(req, 'realm'), rightFor(req));
    next();
  };
}

function adminGate(access: Access): RequestHandler {
  return (_req, res, next) => {
    access.enterAdmin(principalOf(res));
    next();
  };
}

/**
 * The id-level check of a JWT's `per` claim (auth/rights.ts allowedOn) on routes naming one
 * object or area: 403 unless a pattern matching the id grants the method's letter. Opaque
 * tokens and JWTs without `per` pass (the realm gate decided).
 */
const idGate = (req: Request, res: Response, next: NextFunction, id: string): void => {
  const realm = realmOf(res);
  if (!allowedOn(principalOf(res), realm.name, rightFor(req), id)) {
    next(idForbidden(rightFor(req), id));
    return;
  }
  next();
};

/** The caller's read filter in the request's realm (lists and search show only what it may read; null: everything). */
function readableOf(res: Response): IdFilter | null {
  return readFilter(principalOf(res), realmOf(res).name);
}

/** The caller's write filter (U) in the request's realm, for bulk writes (null: every id). */
function writableOf(res: Response): IdFilter | null {
  return idFilter(principalOf(res), realmOf(res).name, 'U');
}

function objectRoutes(deps: RestDeps, body: RequestHandler[]): Router {
  const { objects } = deps;
  const router = express.Router({ mergeParams: true });
  router.param('id', idGate);
  router
    .route('/object')
    .get(async (req, res) => {
      const page = await objects.list(realmOf(res), query(req), readableOf(res));
      if (page.next !== null) res.set('X-Next-Cursor', page.next);
      res.json(keyedById(page.entries));
    })
    .post(...body, async (req, res) => {
      const { count } = await objects.bulk(realmOf(res), req.body, writableOf(res));
      res.json({ ...success, count });
    })
    .put(...body, async (req, res) => {
      const { count } = await objects.bulk(realmOf(res), req.body, writableOf(res));
      res.json({ ...success, count });
    })
    .all(methodNotAllowed(['GET', 'POST', 'PUT']));

  // PUT and POST both create or update (see docs/api.md): a tracker reports positions
  // without knowing whether its object exists yet.
  const upsert: RequestHandler = async (req, res) => {
    const change = await objects.upsert(realmOf(res), param(req, 'id'), req.body);
    res.json({ id: change.id, ...success });
  };
  router
    .route('/object/:id')
    .get(async (req, res) => {
      res.json(await objects.get(realmOf(res), param(req, 'id')));
    })
    .put(...body, upsert)
    .post(...body, upsert)
    .delete(async (req, res) => {
      const change = await objects.delete(realmOf(res), param(req, 'id'));
      res.json({ id: change.id, ...success });
    })
    .all(methodNotAllowed(['GET', 'PUT', 'POST', 'DELETE']));
  router
    .route('/object/:id/history')
    .get(async (req, res) => {
      const page = await objects.history(realmOf(res), param(req, 'id'), query(req));
      if (page.next !== null) res.set('X-Next-Cursor', page.next);
      res.json({ id: page.id, locations: page.locations });
    })
    .all(methodNotAllowed(['GET']));
  // Hivekit's history (hivekit-rest.md D5): a bare array, oldest first by default; the
  // cursor of the next page in X-Next-Cursor.
  router
    .route('/history/:id')
    .get(async (req, res) => {
      const params = parseRestHistoryParams(query(req), { maxPage: deps.maxPage ?? 10_000 });
      const page = await objects.historyEntries(realmOf(res), param(req, 'id'), params, 'not_found');
      if (page.next !== null) res.set('X-Next-Cursor', page.next);
      res.json(page.items.map(restHistoryEntry));
    })
    .all(methodNotAllowed(['GET']));
  // `searchString` (Hivekit, canonical: match records over objects and areas) or the
  // older `q` (objects keyed by id, with their score).
  const search = new RealmSearch(deps.store);
  router
    .route('/search')
    .get(async (req, res) => {
      const params = query(req);
      if (params.searchString !== undefined || params.q === undefined) {
        const records = await search.search(realmOf(res), parseRestSearchParams(params), readableOf(res));
        res.json(records.map(restSearchRecord));
        return;
      }
      const found = await objects.search(realmOf(res), params, readableOf(res));
      res.json(keyedById(found.entries));
    })
    .all(methodNotAllowed(['GET']));
  return router;
}

function areaRoutes(deps: RestDeps, body: RequestHandler[]): Router {
  const { areas } = deps;
  const router = express.Router({ mergeParams: true });
  router.param('id', idGate);
  router
    .route('/area')
    .get(async (req, res) => {
      const page = await areas.list(realmOf(res), query(req), readableOf(res));
      if (page.next !== null) res.set('X-Next-Cursor', page.next);
      res.json(keyedById(page.entries));
    })
    .all(methodNotAllowed(['GET']));
  router
    .route('/area/:id')
    .get(async (req, res) => {
      res.json(await areas.get(realmOf(res), param(req, 'id')));
    })
    .post(...body, async (req, res) => {
      const change = await areas.create(realmOf(res), param(req, 'id'), req.body);
      res.json({ id: change.id, ...success });
    })
    .patch(...body, async (req, res) => {
      const change = await areas.update(realmOf(res), param(req, 'id'), req.body);
      res.json({ id: change.id, ...success });
    })
    .delete(async (req, res) => {
      const change = await areas.delete(realmOf(res), param(req, 'id'));
      res.json({ id: change.id, ...success });
    })
    .all(methodNotAllowed(['GET', 'POST', 'PATCH', 'DELETE']));
  return router;
}

/** An instruction as REST shows it (hivekit-rest.md 6), with `suspended` (locus): the reason the engine stopped it, or null. */
function instructionView(record: InstructionRecord): Record<string, unknown> {
  return { id: record.id, label: record.label, instruction: record.source, data: record.data, suspended: record.suspended };
}

/** A list entry: no source (hivekit-rest.md 6), with `suspended`. */
function instructionListView(record: InstructionRecord): Record<string, unknown> {
  return { id: record.id, label: record.label, data: record.data, suspended: record.suspended };
}

/**
 * Hivekit's instruction endpoints (hivekit-rest.md 6). Reading needs R on the instruction's
 * id; creating, updating and deleting need the letter on every id of the realm
 * (auth/instruction-rights.ts: an instruction acts on the whole realm).
 */
function instructionRoutes(deps: RestDeps, body: RequestHandler[]): Router {
  const { instructions } = deps;
  const router = express.Router({ mergeParams: true });
  router.param('id', (req, res, next, id: string) => {
    const right = rightFor(req);
    if (right === 'R') {
      idGate(req, res, next, id);
      return;
    }
    checkInstructionWrite(principalOf(res), realmOf(res).name, right);
    next();
  });
  router
    .route('/instruction')
    .get(async (_req, res) => {
      const readable = keepAllowed(await instructions.list(realmOf(res)), readableOf(res));
      res.json(Object.fromEntries(readable.map((record) => [record.id, instructionListView(record)])));
    })
    .all(methodNotAllowed(['GET']));
  router
    .route('/instruction/:id')
    .get(async (req, res) => {
      res.json(instructionView(await instructions.get(realmOf(res), param(req, 'id'))));
    })
    .post(...body, async (req, res) => {
      const record = await instructions.create(realmOf(res), param(req, 'id'), req.body);
      res.json({ id: record.id, ...success });
    })
    .patch(...body, async (req, res) => {
      const record = await instructions.update(realmOf(res), param(req, 'id'), req.body);
      res.json({ id: record.id, ...success });
    })
    .delete(async (req, res) => {
      const id = param(req, 'id');
      await instructions.delete(realmOf(res), id);
      res.json({ id, ...success });
    })
    .all(methodNotAllowed(['GET', 'POST', 'PATCH', 'DELETE']));
  return router;
}

export function createRestApp(deps: RestDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('case sensitive routing', true);
  app.set('strict routing', false);
  if (deps.traceRequests !== undefined) app.use(deps.traceRequests);
  app.use(accessLog(deps.logger, deps.metrics?.answered ?? null));
  const startedAt = performance.now();
  if (deps.corsOrigins.length > 0) app.use(cors(deps.corsOrigins, { credentials: deps.authCookieName !== null }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Hivekit's self-hosted health endpoint: a few figures, never ids, tokens or data.
  app.get('/health-check', (_req, res) => {
    res.json({ status: 'ok', uptimeSeconds: Math.floor((performance.now() - startedAt) / 1000), connections: deps.openConnections() });
  });
  app.get('/readyz', async (_req, res) => {
    const ready = deps.isAccepting() && (await deps.store.ping().then(() => true, () => false));
    const bus = deps.busHealth?.() ?? { ok: true, detail: '' };
    // A bus outage leaves reads and writes working: ready, with the outage in `detail`.
    res.status(ready ? 200 : errorCatalogue.unavailable.status).json({ status: ready ? 'ready' : 'unavailable', ...(bus.ok ? {} : { detail: `event bus: ${bus.detail}` }) });
  });
  // Prometheus text format, no token: it holds no id, token or data (docs/operations.md "Metrics").
  if (deps.metrics) app.get('/metrics', deps.metrics.route);
  app.get('/v2/version', (_req, res) => {
    res.json(deps.build);
  });

  const body = jsonBody(deps.maxBodyBytes);
  const readBody = bodyReader(deps.maxBodyBytes);
  const v2Body = [bodyStep(readBody), stripBodyToken];
  const v2Authenticate = authenticate(deps.access, deps.logger, { readBody, cookieName: deps.authCookieName });
  // Before the realm-scoped router: its mount path `/v2/realm/:realm` also takes the realm's own path.
  app.use(realmRoutes(deps, v2Authenticate, v2Body));
  const realmScoped = express.Router({ mergeParams: true });
  realmScoped.use(mountedAt('/v2/realm/:realm'), v2Authenticate, realmGate(deps.access));
  realmScoped.use(objectRoutes(deps, v2Body), areaRoutes(deps, v2Body), instructionRoutes(deps, v2Body));
  app.use('/v2/realm/:realm', realmScoped);

  const admin = express.Router();
  admin.use(mountedAt('/admin/v1'), authenticate(deps.access, deps.logger), adminGate(deps.access), adminRoutes(deps, body));
  app.use('/admin/v1', admin);

  for (const router of deps.routers ?? []) app.use(router);
  // WebSocket upgrades never reach express (the HTTP server's upgrade event takes them).
  app.route([...wsPaths]).get(upgradeRequired).all(methodNotAllowed(['GET']));
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
