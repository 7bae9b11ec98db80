/** The v1 action protocol of one process: the dispatcher's handler table and the connection gateway. */
import type { Logger } from 'pino';
import type { BuildInfo } from '../build-info.js';
import type { Config } from '../config/config.js';
import type { ServerMetrics } from '../observability/metrics/server-metrics.js';
import { RealmSearch } from '../service/realm-search.js';
import { Dispatcher } from '../transport/actions/dispatcher.js';
import { ActionGateway } from '../transport/actions/gateway.js';
import { v1Handlers } from '../transport/actions/handlers/index.js';
import type { Services } from './services.js';

export interface V1 {
  dispatcher: Dispatcher;
  gateway: ActionGateway;
}

export function buildV1(config: Config, s: Services, build: BuildInfo, logger: Logger, metrics?: ServerMetrics | null): V1 {
  const { access, objects, areas, tasks, instructions, realms, subscriptions, pubsub, live, presence, clock } = s;
  const handlers = v1Handlers({
    access,
    objects,
    areas,
    instructions,
    tasks,
    realms,
    search: new RealmSearch(s.store),
    subscriptions,
    pubsub,
    live,
    presence,
    limits: { maxPage: config.maxPage, maxFilterConditions: config.maxFilterConditions, maxVertices: config.maxVertices },
    clock,
    build,
  });
  const observer = metrics?.v1Observer(handlers);
  const dispatcher = new Dispatcher({
    access,
    handlers,
    onInternalError: (err) => logger.error({ err }, 'v1 action failed'),
    ...(s.tracing === null ? {} : { tracing: s.tracing.actions }),
    ...(observer === undefined ? {} : { observer }),
  });
  const gateway = new ActionGateway(
    {
      access,
      dispatcher,
      subscriptions,
      build,
      logger,
      presence,
      heldPrincipal: (hash) => access.heldPrincipal(hash),
      ...(observer === undefined ? {} : { observer }),
      limits: {
        handshakeTimeoutMs: config.handshakeTimeoutMs,
        idleTimeoutMs: config.idleTimeoutMs,
        sendBufferBytes: config.sendBufferBytes,
        slowConsumerMs: config.slowConsumerMs,
        tokenRecheckMs: config.tokenRecheckMs,
        // A connection's messages under way hold at most one message's worth of text.
        pipelineChars: config.maxMessageBytes,
        maxActions: config.maxActions,
      },
      ...(s.tracing === null ? {} : { tracing: s.tracing.pushes }),
    },
    config.maxConnections,
  );
  return { dispatcher, gateway };
}
