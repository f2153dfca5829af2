/**
 * HTTP between the nodes of a cluster: node's own client over kept-alive connections, a few tenths of a millisecond
 * a loopback round trip cheaper than fetch (docs/cluster.md, "Search"). An answer is read whole, up to a bound, or as a
 * stream (an exhaustive search's parts).
 */
import http from 'node:http';
import https from 'node:https';

/** The header a node presents its cluster key in. */
export const CLUSTER_KEY_HEADER = 'x-trawl-cluster-key';

/** A peer's answer larger than this is refused (a capped search's answer carries at most 64 MiB of content). */
const MAX_ANSWER_BYTES = 256 << 20;

/** An idle connection is closed after this long, before the peer's server (10 s idle) closes it under a new request. */
const IDLE_MS = 4_000;
const agentOptions = { keepAlive: true, maxSockets: 256, timeout: IDLE_MS };
const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };

export interface PeerAnswer {
  status: number;
  contentType: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface PeerRequest {
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  signal: AbortSignal;
}

/** `body` POSTed as JSON with the cluster key. */
export function postedJson(body: unknown, key: string, signal: AbortSignal): PeerRequest {
  return { method: 'POST', headers: { 'content-type': 'application/json', [CLUSTER_KEY_HEADER]: key }, body: Buffer.from(JSON.stringify(body)), signal };
}

/**
 * `request` sent to `url`, its answer read whole; rejects when the peer cannot be reached, the signal aborts, or the
 * answer is too large.
 */
export async function askPeer(url: string, request: PeerRequest): Promise<PeerAnswer> {
  const response = await openPeer(url, request);
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > MAX_ANSWER_BYTES) throw new Error(`the answer of ${new URL(url).host} is over ${MAX_ANSWER_BYTES >> 20} MiB`);
    chunks.push(chunk);
  }
  return { status: response.statusCode ?? 0, contentType: response.headers['content-type'], headers: response.headers, body: Buffer.concat(chunks) };
}

/**
 * `request` sent to `url`: resolves with the answer once its head has come, its body to be read (or destroyed) by
 * the caller. A kept-alive connection the peer closed as it was reused is replaced once by a new one, as Node's
 * documentation advises.
 */
export async function openPeer(url: string, request: PeerRequest): Promise<http.IncomingMessage> {
  try {
    return await send(url, request);
  } catch (error) {
    if (!(error instanceof StaleConnectionError)) throw error;
    return send(url, request);
  }
}

class StaleConnectionError extends Error {}

function send(url: string, { method, headers, body, signal }: PeerRequest): Promise<http.IncomingMessage> {
  const target = new URL(url);
  const protocol = target.protocol === 'https:' ? 'https:' : 'http:';
  const client = protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(target, { method, headers, agent: agents[protocol], signal }, resolve);
    request.on('error', (error: NodeJS.ErrnoException) =>
      reject(request.reusedSocket && error.code === 'ECONNRESET' ? new StaleConnectionError(error.message, { cause: error }) : error),
    );
    request.end(body);
  });
}
