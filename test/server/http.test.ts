import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import type { Test } from 'tap';
import uWS from 'uWebSockets.js';
import { serve, type HandlerHooks, type Reply, type Request } from '../../src/server/http.js';

/** A uWS app on port 0 whose one route runs `handle` under `serve`; `finished` hears each request's end. */
async function listen(t: Test, handle: (request: Request) => Promise<Reply>, finished: HandlerHooks['finished'], streamStallMs = 30_000): Promise<string> {
  const hooks: HandlerHooks = { maxBodyBytes: 1024, streamStallMs, finished, unexpected: () => undefined };
  const app = uWS.App().any('/*', (res, req) => serve(res, req, hooks, handle));
  const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (listening) => (listening ? resolve(listening) : reject(new Error('cannot listen')))),
  );
  t.teardown(() => uWS.us_listen_socket_close(socket));
  return `http://127.0.0.1:${uWS.us_socket_local_port(socket)}`;
}

/** Sends GET `path` on a connection of its own and never reads the answer. */
function getWithoutReading(t: Test, url: string, path: string): void {
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1', () => {
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    socket.pause();
  });
  t.teardown(() => socket.destroy());
}

t.test('a client that goes away before the answer: its listeners run once, one added later at once', async (t) => {
  let release = () => {};
  const heard: string[] = [];
  let entered!: (request: Request) => void;
  const handling = new Promise<Request>((resolve) => (entered = resolve));
  let ended!: (aborted: boolean) => void;
  const over = new Promise<boolean>((resolve) => (ended = resolve));
  const url = await listen(
    t,
    async (request) => {
      if (request.path !== '/slow') return { status: 200, body: {} };
      request.onAborted(() => heard.push('first'));
      request.onAborted(() => heard.push('second'));
      entered(request);
      await new Promise<void>((resolve) => (release = resolve));
      return { status: 200, body: { late: true } };
    },
    (_request, _status, aborted) => ended(aborted),
  );
  const client = http.get(`${url}/slow`);
  client.on('error', () => undefined); // destroyed on purpose
  const request = await handling;
  t.same(heard, [], 'nothing heard while the client waits');
  client.destroy();
  t.equal(await over, true, 'the request ended aborted');
  t.same(heard, ['first', 'second'], 'each listener once, in order');
  request.onAborted(() => heard.push('late'));
  t.same(heard, ['first', 'second', 'late'], 'a listener added after the client left runs at once');
  release(); // the handler's answer has nobody to go to and is dropped
  const response = await fetch(`${url}/next`, { method: 'POST', body: '{}' });
  t.equal(response.status, 200, 'the server keeps serving');
});

t.test('a text reply is released once: after it is written, or when its client is gone', async (t) => {
  const released: string[] = [];
  let answer = () => {};
  let entered!: () => void;
  const handling = new Promise<void>((resolve) => (entered = resolve));
  let gone!: () => void;
  const aborted = new Promise<void>((resolve) => (gone = resolve));
  const url = await listen(
    t,
    async (request) => {
      if (request.path === '/slow') {
        entered();
        await new Promise<void>((resolve) => (answer = resolve));
      }
      return { status: 200, text: Buffer.from(`"${request.path}"`), contentType: 'application/json', release: () => released.push(request.path) };
    },
    (_request, _status, wasAborted) => wasAborted && gone(),
  );
  t.equal(await (await fetch(`${url}/fast`)).text(), '"/fast"', 'the text is the body');
  t.same(released, ['/fast'], 'released once written');
  const client = http.get(`${url}/slow`);
  client.on('error', () => undefined); // destroyed on purpose
  await handling;
  client.destroy();
  await aborted;
  answer();
  t.equal(await (await fetch(`${url}/after`)).text(), '"/after"', 'the server keeps serving');
  t.same(released, ['/fast', '/slow', '/after'], 'a reply nobody takes is released too');
});

t.test('an answered request never calls its listeners', async (t) => {
  const heard: string[] = [];
  let kept: Request | undefined;
  const url = await listen(
    t,
    async (request) => {
      request.onAborted(() => heard.push('during'));
      kept = request;
      return { status: 200, body: { ok: true } };
    },
    () => undefined,
  );
  const response = await fetch(`${url}/quick`);
  t.same(await response.json(), { ok: true });
  kept!.onAborted(() => heard.push('after'));
  t.same(heard, [], 'no listener ran');
});

t.test('a streaming client that takes nothing is cut off after streamStallMs, and the stream ends', async (t) => {
  let ended: boolean | null = null;
  let writes = 0;
  const piece = 'x'.repeat(1 << 20);
  const streamed = new Promise<void>((resolveStreamed) => {
    void listen(
      t,
      async () => ({
        contentType: 'text/plain',
        async stream(sink) {
          // 256 MiB offered to a client that reads nothing: the writes must stop waiting once it is cut off.
          for (let i = 0; i < 256 && !sink.isClosed(); i++) {
            await sink.write(piece);
            writes++;
          }
          resolveStreamed();
        },
      }),
      (_request, _status, aborted) => (ended = aborted),
      300,
    ).then((url) => getWithoutReading(t, url, '/stream'));
  });
  await streamed;
  t.equal(ended, true, 'the response ended as aborted');
  t.ok(writes < 256, `the stream stopped early (${writes} MiB written of 256)`);
});

t.test('a reply in pieces reaches a slow client whole, with its Content-Length, then is released', async (t) => {
  // 24 MiB in pieces of uneven sizes, views of one buffer and of others: more than a socket takes at once.
  const whole = Buffer.alloc(24 << 20);
  for (let i = 0; i < whole.length; i += 4) whole.writeUInt32LE(i, i);
  const cuts = [0, 1, 7, 65_536, 3 << 20, (3 << 20) + 1, 20 << 20, whole.length];
  const pieces = cuts.slice(1).map((end, i) => (i % 2 === 0 ? whole.subarray(cuts[i], end) : Buffer.from(whole.subarray(cuts[i], end))));
  let released = 0;
  let ended: boolean | null = null;
  const url = await listen(
    t,
    async () => ({ status: 200, text: pieces, contentType: 'application/octet-stream', release: () => void released++ }),
    (_request, _status, aborted) => (ended = aborted),
  );
  const received = await new Promise<{ length: string | undefined; body: Buffer }>((resolve, reject) => {
    http.get(url, (response) => {
      const chunks: Buffer[] = [];
      response.pause();
      // Read slowly at first: the server must wait for the client, not buffer the rest.
      const resumeLater = setTimeout(() => response.resume(), 200);
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        clearTimeout(resumeLater);
        resolve({ length: response.headers['content-length'], body: Buffer.concat(chunks) });
      });
      response.on('error', reject);
    });
  });
  t.equal(received.length, String(whole.length), 'Content-Length is the sum of the pieces');
  t.ok(received.body.equals(whole), 'every byte, in order');
  t.equal(ended, false, 'answered, not aborted');
  t.equal(released, 1, 'released once');
});

t.test('a client that takes nothing of a large reply is cut off after streamStallMs, and the reply released', async (t) => {
  for (const pieces of [[Buffer.alloc(16 << 20, 'a'), Buffer.alloc(16 << 20, 'b')], [Buffer.alloc(32 << 20, 'c')]]) {
    await t.test(`in ${pieces.length} pieces`, (t) => cutOff(t, pieces));
  }
});

async function cutOff(t: Test, pieces: Buffer[]): Promise<void> {
  let released!: () => void;
  const releasedNow = new Promise<void>((resolve) => (released = resolve));
  let ended: boolean | null = null;
  const url = await listen(
    t,
    async () => ({ status: 200, text: pieces, contentType: 'text/plain', release: () => released() }),
    (_request, _status, aborted) => (ended = aborted),
    300,
  );
  getWithoutReading(t, url, '/pieces');
  await releasedNow;
  t.equal(ended, true, 'the response ended as aborted');
  const next = await fetch(url);
  t.equal(next.status, 200, 'the server keeps serving');
  await next.arrayBuffer();
}

t.test('every response announces the keep-alive timeout, and a connection idle that long still takes a request', async (t) => {
  const url = await listen(
    t,
    async () => ({ status: 200, body: { ok: true } }),
    () => undefined,
  );
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
  t.teardown(() => socket.destroy());
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  const answers = (count: number) =>
    new Promise<void>((resolve) => {
      const check = () => ((received.match(/HTTP\/1\.1 200/g)?.length ?? 0) >= count ? resolve() : setTimeout(check, 20));
      check();
    });
  socket.write('GET /first HTTP/1.1\r\nHost: x\r\n\r\n');
  await answers(1);
  const announced = /^Keep-Alive: timeout=(\d+)\r$/m.exec(received);
  t.ok(announced, 'Keep-Alive: timeout=N');
  // Idle for what was announced, less the second clients keep in hand (undici's default threshold).
  await new Promise((resolve) => setTimeout(resolve, (Number(announced![1]) - 1) * 1000));
  t.notOk(socket.destroyed || socket.readyState !== 'open', 'the connection is still open');
  socket.write('GET /second HTTP/1.1\r\nHost: x\r\n\r\n');
  await answers(2);
  t.pass('and answers on it');
});
