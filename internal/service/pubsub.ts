/**
 * Realm pub/sub (hivekit-compat.md 4.8, 12.8): connections subscribe to an event name with
 * an id glob; a message published under a literal id reaches, on every connection, each
 * subscription of that event whose glob matches the id, once per matching pattern, the
 * publisher's own included. Publications travel through the event bus (kind `pub`), so
 * that in cluster mode a message published on one process reaches subscribers on all.
 *
 * A delivery goes to a connection only when its principal may read (`per` R) the id the
 * message was published under (auth/rights.ts readFilter, prepared once per subscriber).
 *
 * Subscriptions live with their connection: they end when it closes (compat 9; the client
 * re-sends them after a reconnect). Each realm with at least one local subscriber holds one
 * subscription on the bus.
 */
import { readFilter, type IdFilter } from '../auth/rights.js';
import { compileGlob, type CompiledGlob } from '../domain/id-glob.js';
import type { Publication, PubSubTopic } from '../domain/pubsub-input.js';
import { invalid } from '../errors.js';
import type { PublishedEvent } from '../domain/events.js';
import type { BusSubscription, EventBus, RealmMessage } from '../events/port.js';
import type { LiveConnection } from './live-connection.js';

/** Most pub/sub subscriptions (event and pattern pairs, all realms) one connection may hold. */
export const maxPubSubPerConnection = 1000;

/** A realm as pub/sub needs it: the storage key (bus, store) and the name the wire shows. */
export interface PubSubRealm {
  key: string;
  name: string;
}

interface Subscriber {
  connection: LiveConnection;
  /** The ids whose publications the connection may read (readFilter); null: every id. */
  readable: IdFilter | null;
  /** Pattern → its compiled glob, in subscription order. */
  patterns: Map<string, CompiledGlob>;
}

interface RealmTopics {
  name: string;
  bus: BusSubscription;
  /** Event name → connection id → that connection's patterns for it. */
  events: Map<string, Map<string, Subscriber>>;
}

interface ConnectionState {
  count: number;
  realms: Set<string>;
}

/** A pub/sub delivery (compat 4.8), sent without `cid`. */
export interface PubSubDelivery {
  typ: 'rea';
  act: 'pub';
  rea: string;
  sid: string;
  dat: { eve: string; dat?: unknown };
}

export class PubSub {
  private readonly realms = new Map<string, RealmTopics>();
  private readonly connections = new Map<string, ConnectionState>();

  constructor(private readonly bus: EventBus) {}

  /** Adds a subscription (again: nothing changes). Ends with the connection. */
  subscribe(connection: LiveConnection, realm: PubSubRealm, topic: PubSubTopic): void {
    let state = this.connections.get(connection.id);
    const topics = this.realms.get(realm.key);
    const existing = topics?.events.get(topic.eve)?.get(connection.id);
    if (existing?.patterns.has(topic.idp) === true) return;
    if ((state?.count ?? 0) >= maxPubSubPerConnection) {
      throw invalid(`a connection may hold at most ${maxPubSubPerConnection} pub/sub subscriptions; unsubscribe some first`);
    }
    if (state === undefined) {
      state = { count: 0, realms: new Set() };
      this.connections.set(connection.id, state);
      connection.onClose(() => this.dropConnection(connection.id));
    }
    const into = topics ?? this.openRealm(realm);
    let byConnection = into.events.get(topic.eve);
    if (byConnection === undefined) {
      byConnection = new Map();
      into.events.set(topic.eve, byConnection);
    }
    let subscriber = byConnection.get(connection.id);
    if (subscriber === undefined) {
      subscriber = { connection, readable: readFilter(connection.principal, realm.name), patterns: new Map() };
      byConnection.set(connection.id, subscriber);
    }
    subscriber.patterns.set(topic.idp, compileGlob(topic.idp));
    state.count++;
    state.realms.add(realm.key);
  }

  /** Removes a subscription; one that does not exist is no error (a client re-sends after reconnects). */
  unsubscribe(connection: LiveConnection, realmKey: string, topic: PubSubTopic): void {
    const topics = this.realms.get(realmKey);
    const byConnection = topics?.events.get(topic.eve);
    const subscriber = byConnection?.get(connection.id);
    if (topics === undefined || byConnection === undefined || subscriber === undefined) return;
    if (!subscriber.patterns.delete(topic.idp)) return;
    const state = this.connections.get(connection.id);
    if (state !== undefined) state.count--;
    if (subscriber.patterns.size > 0) return;
    byConnection.delete(connection.id);
    if (byConnection.size === 0) topics.events.delete(topic.eve);
    if (state !== undefined && !this.holdsRealm(topics, connection.id)) state.realms.delete(realmKey);
    if (topics.events.size === 0) this.closeRealm(realmKey);
  }

  /** Publishes through the bus; delivery happens when the bus hands the message back (this or another process). */
  publish(realmKey: string, publication: Publication): void {
    const event: PublishedEvent = { kind: 'pub', realm: realmKey, eve: publication.eve, idp: publication.idp, dat: publication.dat };
    this.bus.publish(realmKey, [event]);
  }

  /** Pub/sub subscriptions held by a connection (for tests and stats). */
  countOf(connectionId: string): number {
    return this.connections.get(connectionId)?.count ?? 0;
  }

  private openRealm(realm: PubSubRealm): RealmTopics {
    const topics: RealmTopics = {
      name: realm.name,
      events: new Map(),
      bus: this.bus.subscribe(realm.key, (message) => this.receive(realm.key, message)),
    };
    this.realms.set(realm.key, topics);
    return topics;
  }

  private closeRealm(realmKey: string): void {
    const topics = this.realms.get(realmKey);
    if (topics === undefined) return;
    topics.bus.unsubscribe();
    this.realms.delete(realmKey);
  }

  private holdsRealm(topics: RealmTopics, connectionId: string): boolean {
    for (const byConnection of topics.events.values()) if (byConnection.has(connectionId)) return true;
    return false;
  }

  private receive(realmKey: string, message: RealmMessage): void {
    const topics = this.realms.get(realmKey);
    if (topics === undefined) return;
    if (message.kind === 'realm_deleted') {
      // The realm's subscriptions end silently (compat 11 #31).
      for (const byConnection of topics.events.values()) {
        for (const [connectionId, subscriber] of byConnection) {
          const state = this.connections.get(connectionId);
          if (state === undefined) continue;
          state.count -= subscriber.patterns.size;
          state.realms.delete(realmKey);
        }
      }
      this.closeRealm(realmKey);
      return;
    }
    for (const event of message.events) {
      if (event.kind === 'pub') this.deliver(topics, event);
    }
  }

  private deliver(topics: RealmTopics, event: PublishedEvent): void {
    const byConnection = topics.events.get(event.eve);
    if (byConnection === undefined) return;
    const dat: PubSubDelivery['dat'] = event.dat === undefined ? { eve: event.eve } : { eve: event.eve, dat: event.dat };
    for (const subscriber of byConnection.values()) {
      if (subscriber.readable !== null && !subscriber.readable(event.idp)) continue;
      const messages: PubSubDelivery[] = [];
      for (const [pattern, glob] of subscriber.patterns) {
        if (glob.matches(event.idp)) messages.push({ typ: 'rea', act: 'pub', rea: topics.name, sid: pattern, dat });
      }
      if (messages.length > 0) subscriber.connection.push(messages);
    }
  }

  private dropConnection(connectionId: string): void {
    const state = this.connections.get(connectionId);
    if (state === undefined) return;
    this.connections.delete(connectionId);
    for (const realmKey of state.realms) {
      const topics = this.realms.get(realmKey);
      if (topics === undefined) continue;
      for (const [eve, byConnection] of topics.events) {
        byConnection.delete(connectionId);
        if (byConnection.size === 0) topics.events.delete(eve);
      }
      if (topics.events.size === 0) this.closeRealm(realmKey);
    }
  }
}
