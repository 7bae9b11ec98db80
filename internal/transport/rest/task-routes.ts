/**
 * Tasks on REST v2 (`/v2/realm/<realm>/task[/<id>]`), in the style of the area resource: GET
 * lists (an object keyed by task id, in creation order) or reads one task, POST creates (409
 * on an existing id), PATCH updates (given fields replace, data merges, steps replace), DELETE
 * deletes (404 `unknown task <id>` for a missing one). Bodies and answers use the long field
 * names of domain/task-input.ts. The realm gate (app.ts) checks the realm-level right (GET R,
 * POST C, PATCH U, DELETE D), `idGate` the `per` grant on the task's id; a list holds only the
 * tasks the caller may read.
 */
import express, { type RequestHandler, type Response, type Router } from 'express';
import type { IdFilter } from '../../auth/rights.js';
import type { Realm } from '../../domain/types.js';
import type { TaskService } from '../../service/tasks.js';
import { keyedById } from '../../service/views.js';
import { methodNotAllowed } from './errors.js';
import { param } from './request-context.js';

const success = { result: 'success' } as const;

/** What the realm-scoped router of app.ts provides. */
export interface RealmScope {
  realmOf: (res: Response) => Realm;
  readableOf: (res: Response) => IdFilter | null;
  idGate: express.RequestParamHandler;
}

export function taskRoutes(tasks: TaskService, body: RequestHandler[], scope: RealmScope): Router {
  const { realmOf, readableOf } = scope;
  const router = express.Router({ mergeParams: true });
  router.param('id', scope.idGate);
  router
    .route('/task')
    .get(async (_req, res) => {
      res.json(keyedById(await tasks.list(realmOf(res), readableOf(res))));
    })
    .all(methodNotAllowed(['GET']));
  router
    .route('/task/:id')
    .get(async (req, res) => {
      res.json(await tasks.get(realmOf(res), param(req, 'id')));
    })
    .post(...body, async (req, res) => {
      const task = await tasks.create(realmOf(res), param(req, 'id'), req.body);
      res.json({ id: task.id, ...success });
    })
    .patch(...body, async (req, res) => {
      const task = await tasks.update(realmOf(res), param(req, 'id'), req.body);
      res.json({ id: task.id, ...success });
    })
    .delete(async (req, res) => {
      const change = await tasks.delete(realmOf(res), param(req, 'id'));
      res.json({ id: change.id, ...success });
    })
    .all(methodNotAllowed(['GET', 'POST', 'PATCH', 'DELETE']));
  return router;
}
