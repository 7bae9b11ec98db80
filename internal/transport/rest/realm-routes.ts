/**
 * Hivekit's realm endpoints on REST v2 (docs/reference/hivekit-rest.md §2, D8): a realm as an
 * entity with a label and data, within the caller's tenant. Creating, changing and deleting
 * realms needs realm-management rights (auth/rights.ts mayManageRealm: tenant JWTs without
 * `per` or with `per` granting the letter on the realm, LOCUS_ADMIN_TOKEN, opaque admin
 * tokens); listing gives the tenant's realms the caller may read; reading one realm also
 * takes a token of that realm, of any scope (a client reads its realm's configuration with
 * the token it tracks with). Settings and tokens stay with the admin API (/admin/v1).
 */
import express, { type RequestHandler, type Router } from 'express';
import { realmAllows } from '../../auth/rights.js';
import type { Access } from '../../service/access.js';
import type { RealmService } from '../../service/realms.js';
import { keyedById, realmView } from '../../service/views.js';
import { methodNotAllowed } from './errors.js';
import { param, principalOf } from './request-context.js';

const success = { result: 'success' } as const;

/**
 * The routes, at their full paths: mounted at `/v2/realm` they would also take every path
 * under a realm (`/v2/realm/<r>/object/…`), whose router authenticates on its own.
 * `authenticate` is REST v2's (token in header, query, body or cookie); `body` parses the
 * body and takes its `token` property out.
 */
export function realmRoutes(
  deps: { access: Access; realms: RealmService },
  authenticate: RequestHandler,
  body: RequestHandler[],
): Router {
  const { access, realms } = deps;
  const router = express.Router();
  router
    .route('/v2/realm')
    .all(authenticate)
    .get(async (_req, res) => {
      const principal = principalOf(res);
      const tenant = access.enterTenant(principal);
      const readable = (await realms.list(tenant)).filter((realm) => realmAllows(principal, realm.name, 'R'));
      res.json(keyedById(readable.map(realmView)));
    })
    .all(methodNotAllowed(['GET']));
  router
    .route('/v2/realm/:realm')
    .all(authenticate)
    .get(async (req, res) => {
      const name = param(req, 'realm');
      const realm = await access.enterRealm(principalOf(res), name, 'R');
      res.json(await realms.read(realm.tenant, name));
    })
    .post(
      (req, res, next) => {
        res.locals.tenant = access.enterRealmManagement(principalOf(res), param(req, 'realm'), 'C');
        next();
      },
      ...body,
      async (req, res) => {
        const realm = await realms.create(res.locals.tenant as string, param(req, 'realm'), req.body);
        res.json({ id: realm.name, ...success });
      },
    )
    .patch(
      (req, res, next) => {
        res.locals.tenant = access.enterRealmManagement(principalOf(res), param(req, 'realm'), 'U');
        next();
      },
      ...body,
      async (req, res) => {
        const realm = await realms.update(res.locals.tenant as string, param(req, 'realm'), req.body);
        res.json({ id: realm.name, ...success });
      },
    )
    .delete(async (req, res) => {
      const name = param(req, 'realm');
      await realms.delete(access.enterRealmManagement(principalOf(res), name, 'D'), name);
      res.json({ id: name, ...success });
    })
    .all(methodNotAllowed(['GET', 'POST', 'PATCH', 'DELETE']));
  return router;
}
