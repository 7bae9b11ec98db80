/**
 * Devices over raw TCP (the locus extension of the v1 protocol: one JSON frame per line), through
 * the TCP Service's load balancer: each virtual user connects, signs in, sends `obj upd` of its own
 * object once a second for 30 s and awaits each reply, then reconnects. Uses k6/x/tcp (an official
 * k6 extension k6 resolves when the script imports it). Thresholds as for WebSocket devices.
 *   k6 run -e LOCUS_TCP=host:7070 -e LOCUS_TOKEN=... -e LOCUS_REALM=... test/load/devices-tcp.ts
 */
import { check } from 'k6';
import { Rate, Trend } from 'k6/metrics';
import { setTimeout } from 'k6/timers';
import { Socket } from 'k6/x/tcp';
import { fix, settings } from './settings.ts';

const config = settings();
const replyTime = new Trend('locus_tcp_reply_ms', true);
const replyOk = new Rate('locus_tcp_reply_ok');
const signedIn = new Rate('locus_tcp_signed_in');

export const options = {
  scenarios: {
    devices: { executor: 'constant-vus', vus: config.devices, duration: config.duration },
  },
  thresholds: {
    locus_tcp_signed_in: ['rate>0.999'],
    locus_tcp_reply_ok: ['rate>0.999'],
    locus_tcp_reply_ms: ['p(95)<250', 'p(99)<1000'],
  },
};

interface Reply {
  act?: string;
  cid?: string;
  res?: string;
}

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export default async function (): Promise<void> {
  const device = __VU;
  const socket = new Socket({ tags: { transport: 'tcp' } });
  const sent = new Map<string, number>();
  let buffered = '';
  socket.on('data', (data) => {
    buffered += String.fromCharCode(...new Uint8Array(data));
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
      if (line === '') continue;
      for (const reply of JSON.parse(line) as Reply[]) {
        if (reply.act === 'aut') signedIn.add(reply.res === 'suc');
        else if (reply.cid !== undefined && sent.has(reply.cid)) {
          replyTime.add(Date.now() - (sent.get(reply.cid) as number));
          sent.delete(reply.cid);
          replyOk.add(reply.res === 'suc');
        }
      }
    }
  });
  await socket.connect(config.tcpPort, config.tcpHost);
  await socket.write(`Bearer ${config.token}\n`);
  for (let step = 0; step < 30; step++) {
    const cid = `${device}-${step}`;
    sent.set(cid, Date.now());
    await socket.write(JSON.stringify([{ typ: 'obj', act: 'upd', cid, id: `tcp-device-${device}`, rea: config.realm, loc: fix(device, step) }]) + '\n');
    await wait(1000);
  }
  check(sent, { 'every update answered': (s) => s.size === 0 });
  socket.destroy();
}
