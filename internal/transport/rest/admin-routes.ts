/**
 * The operators' admin API (/admin/v1; LOCUS_ADMIN_TOKEN or an opaque admin token):
 * realms and their opaque tokens, per tenant (`/realm/...` is the default tenant's,
 * `/tenant/<t>/realm/...` any tenant's), tenants, and tenants' JWT signing keys. A key's
 * secret is in the create and rotate answers only; the access log never holds bodies.
 */
import express, { type Request, type RequestHandler, type Router } from 'express';
import { defaultTenant } from '../../auth/principal.js';
import type { RealmService } from '../../service/realms.js';
import type { TenantService } from '../../service/tenants.js';
import { keyedById } from '../../service/views.js';
import { methodNotAllowed } from './errors.js';
import { param } from './request-context.js';

const success = { result: 'success' } as const;

/** Realms and opaque tokens of the tenant `tenantOf` names. */
function realmAdmin(realms: RealmService, body: RequestHandler[], tenantOf: (req: Request) => string): Router {
  const router = express.Router({ mergeParams: true });
  router
    .route('/realm')
    .get(async (req, res) => {
      const list = await realms.list(tenantOf(req));
      res.json(keyedById(list.map((r) => ({ id: r.name, settings: r.settings, created: r.created }))));
    })
    .all(methodNotAllowed(['GET']));
  router
    .route('/realm/:realm')
    .put(...body, async (req, res) => {
      const { realm } = await realms.put(tenantOf(req), param(req, 'realm'), req.body);
      res.json({ id: realm.name, ...success });
    })
    .get(async (req, res) => {
      res.json(await realms.get(tenantOf(req), param(req, 'realm')));
    })
    .delete(async (req, res) => {
      const id = param(req, 'realm');
      await realms.delete(tenantOf(req), id);
      res.json({ id, ...success });
    })
    .all(methodNotAllowed(['GET', 'PUT', 'DELETE']));
  router
    .route('/realm/:realm/token')
    .post(...body, async (req, res) => {
      res.json(await realms.createToken(tenantOf(req), param(req, 'realm'), req.body));
    })
    .all(methodNotAllowed(['POST']));
  router
    .route('/realm/:realm/token/:tokenId')
    .delete(async (req, res) => {
      const id = param(req, 'tokenId');
      await realms.revokeToken(tenantOf(req), param(req, 'realm'), id);
      res.json({ id, ...success });
    })
    .all(methodNotAllowed(['DELETE']));
  return router;
}

function tenantAdmin(tenants: TenantService, body: RequestHandler[]): Router {
  const router = express.Router();
  router
    .route('/tenant')
    .get(async (_req, res) => {
      res.json(keyedById(await tenants.list()));
    })
    .all(methodNotAllowed(['GET']));
  router
    .route('/tenant/:tenant')
    .post(...body, async (req, res) => {
      const tenant = await tenants.create(param(req, 'tenant'), req.body);
      res.json({ id: tenant.id, ...success });
    })
    .get(async (req, res) => {
      res.json(await tenants.get(param(req, 'tenant')));
    })
    .delete(async (req, res) => {
      const id = param(req, 'tenant');
      await tenants.delete(id);
      res.json({ id, ...success });
    })
    .all(methodNotAllowed(['GET', 'POST', 'DELETE']));
  router
    .route('/tenant/:tenant/key')
    .post(...body, async (req, res) => {
      res.json(await tenants.createKey(param(req, 'tenant'), req.body));
    })
    .get(async (req, res) => {
      res.json(await tenants.listKeys(param(req, 'tenant')));
    })
    .all(methodNotAllowed(['GET', 'POST']));
  router
    .route('/tenant/:tenant/key/:keyId')
    .delete(async (req, res) => {
      const id = param(req, 'keyId');
      await tenants.revokeKey(param(req, 'tenant'), id);
      res.json({ id, ...success });
    })
    .all(methodNotAllowed(['DELETE']));
  router
    .route('/tenant/:tenant/key/:keyId/rotate')
    .post(async (req, res) => {
      res.json(await tenants.rotateKey(param(req, 'tenant'), param(req, 'keyId')));
    })
    .all(methodNotAllowed(['POST']));
  return router;
}

export function adminRoutes(deps: { realms: RealmService; tenants: TenantService }, body: RequestHandler[]): Router {
  const router = express.Router();
  router.use(realmAdmin(deps.realms, body, () => defaultTenant));
  router.use(tenantAdmin(deps.tenants, body));
  router.use('/tenant/:tenant', realmAdmin(deps.realms, body, (req) => param(req, 'tenant')));
  return router;
}
