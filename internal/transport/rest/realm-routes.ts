/**
 * Hivekit's realm endpoints on REST v2 (docs/reference/hivekit-rest.md §2): a realm as an
 * entity with a label and data. Creating, changing, listing and deleting realms needs a
 * token of scope admin; reading one realm also takes a token of that realm, of any scope
 * (a client reads its realm's configuration with the token it tracks with).
 * Settings and tokens stay with the admin API (/admin/v1).
 */
import express, { type RequestHandler, type Router } from 'express';
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
  const admin: RequestHandler = (_req, res, next) => {
    access.enterAdmin(principalOf(res));
    next();
  };
  router
    .route('/v2/realm')
    .all(authenticate)
    .get(admin, async (_req, res) => {
      res.json(keyedById((await realms.list()).map(realmView)));
    })
    .all(methodNotAllowed(['GET']));
  router
    .route('/v2/realm/:realm')
    .all(authenticate)
    .get(async (req, res) => {
      const id = param(req, 'realm');
      await access.enterRealm(principalOf(res), id, 'read');
      res.json(await realms.read(id));
    })
    .post(admin, ...body, async (req, res) => {
      const realm = await realms.create(param(req, 'realm'), req.body);
      res.json({ id: realm.id, ...success });
    })
    .patch(admin, ...body, async (req, res) => {
      const realm = await realms.update(param(req, 'realm'), req.body);
      res.json({ id: realm.id, ...success });
    })
    .delete(admin, async (req, res) => {
      const id = param(req, 'realm');
      await realms.delete(id);
      res.json({ id, ...success });
    })
    .all(methodNotAllowed(['GET', 'POST', 'PATCH', 'DELETE']));
  return router;
}
