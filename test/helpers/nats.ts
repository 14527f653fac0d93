import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

export interface NatsCluster {
  /** the client URLs, nats://127.0.0.1:PORT each */
  urls: string[];
  stop(): Promise<void>;
}

/** A port free right now (the OS's pick for port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Starts `count` nats-server processes (test/setup/system-packages.sh installs it) on loopback as one
 * JetStream cluster, and resolves once JetStream answers (its meta leader is elected) and can place a stream
 * replicated on every server. `t.teardown` stops them.
 */
export async function startNatsCluster(t: { teardown(fn: () => unknown): void }, count = 3): Promise<NatsCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'chat-nats-'));
  const clientPorts: number[] = [];
  const routePorts: number[] = [];
  for (let i = 0; i < count; i++) {
    clientPorts.push(await freePort());
    routePorts.push(await freePort());
  }
  const routes = routePorts.map((port) => `nats://127.0.0.1:${port}`).join(',');
  const processes: ChildProcess[] = [];
  const output: string[] = [];
  const stop = async () => {
    await Promise.all(processes.map((child) => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    })));
    rmSync(dir, { recursive: true, force: true });
  };
  t.teardown(stop);
  for (let i = 0; i < count; i++) {
    const args = [
      '-a', '127.0.0.1', '-p', String(clientPorts[i]), '-n', `nats-${i}`, '-js', '-sd', join(dir, `n${i}`),
      '--cluster_name', 'chat-test', '--cluster', `nats://127.0.0.1:${routePorts[i]}`, '--routes', routes,
    ];
    const child = spawn('nats-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    output[i] = '';
    child.stdout!.on('data', (chunk) => (output[i] += chunk));
    child.stderr!.on('data', (chunk) => (output[i] += chunk));
    processes.push(child);
  }
  const urls = clientPorts.map((port) => `nats://127.0.0.1:${port}`);
  // Ready once JetStream answers through each server (each has joined the cluster and knows its leader).
  const deadline = Date.now() + 30_000;
  for (const url of urls) {
    for (;;) {
      try {
        const nc = await connect({ servers: url, timeout: 1000 });
        try {
          const jsm = await jetstreamManager(nc, { timeout: 1000 });
          await jsm.getAccountInfo();
          break;
        } finally {
          await nc.close();
        }
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`the NATS cluster did not start: ${String(error)}\n${output.join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }
  // Each server answers before JetStream has found every peer: a stream replicated on all of them (as a chat
  // node's log is) could then not be placed, and a node starting in that moment waited, on a loaded machine
  // for all of its 30 s ("no suitable peers for placement"). Ready once such a stream can be made.
  const nc = await connect({ servers: urls, timeout: 1000 });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 1000 });
    for (;;) {
      try {
        await jsm.streams.add({ name: PLACEMENT_PROBE, subjects: [`${PLACEMENT_PROBE}.probe`], num_replicas: count });
        await jsm.streams.delete(PLACEMENT_PROBE);
        break;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`the NATS cluster could not place a stream on its ${count} servers: ${String(error)}\n${output.join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  } finally {
    await nc.close();
  }
  return { urls, stop };
}

/** The stream made and deleted to learn that the cluster can place one on every server. */
const PLACEMENT_PROBE = 'TEST_PLACEMENT_PROBE';
