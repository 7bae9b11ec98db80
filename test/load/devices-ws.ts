/**
 * Devices over WebSocket (the v1 protocol, as Hivekit's client speaks it): each virtual user is a
 * device that signs in with `Bearer <token>`, then sends `obj upd` of its own object once a
 * second and awaits each reply. Thresholds: every reply a success, p95 of the reply time under
 * 250 ms, no connection refused.
 *   k6 run -e LOCUS_URL=http://... -e LOCUS_TOKEN=... -e LOCUS_REALM=... test/load/devices-ws.ts
 */
import { check } from 'k6';
import { Counter, Rate, Trend } from 'k6/metrics';
import ws from 'k6/ws';
import { fix, settings } from './settings.ts';

const config = settings();
const replyTime = new Trend('locus_ws_reply_ms', true);
const replyOk = new Rate('locus_ws_reply_ok');
const updates = new Counter('locus_ws_updates');

export const options = {
  scenarios: {
    devices: { executor: 'constant-vus', vus: config.devices, duration: config.duration },
  },
  thresholds: {
    locus_ws_reply_ok: ['rate>0.999'],
    locus_ws_reply_ms: ['p(95)<250', 'p(99)<1000'],
    checks: ['rate>0.99'],
  },
};

interface Reply {
  typ?: string;
  act?: string;
  cid?: string;
  res?: string;
}

export default function (): void {
  const device = __VU;
  const sent = new Map<string, number>();
  let step = 0;
  const response = ws.connect(config.wsUrl, {}, (socket) => {
    socket.on('open', () => {
      socket.send(`Bearer ${config.token}`);
    });
    socket.on('message', (text: string) => {
      const replies = JSON.parse(text) as Reply[];
      for (const reply of replies) {
        if (reply.act === 'aut') {
          check(reply, { 'signed in': (r) => r.res === 'suc' });
          socket.setInterval(() => {
            const cid = `${device}-${step}`;
            sent.set(cid, Date.now());
            socket.send(JSON.stringify([{ typ: 'obj', act: 'upd', cid, id: `ws-device-${device}`, rea: config.realm, loc: fix(device, step) }]));
            step++;
          }, 1000);
          continue;
        }
        if (reply.cid === undefined || !sent.has(reply.cid)) continue;
        replyTime.add(Date.now() - (sent.get(reply.cid) as number));
        sent.delete(reply.cid);
        replyOk.add(reply.res === 'suc');
        updates.add(1);
      }
    });
    // Each connection lives 30 s, then the device reconnects (a fleet's churn).
    socket.setTimeout(() => socket.close(), 30_000);
  });
  check(response, { 'upgraded to WebSocket': (r) => r !== null && r.status === 101 });
}
