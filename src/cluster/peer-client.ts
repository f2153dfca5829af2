/**
 * HTTP between the nodes of a cluster: node's own client over kept-alive connections, a few tenths of a millisecond
 * a loopback round trip cheaper than fetch (docs/cluster.md, "Search"). An answer is read whole, up to a bound.
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
  body: Buffer;
}

export interface PeerRequest {
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  signal: AbortSignal;
}

/**
 * `request` sent to `url`; rejects when the peer cannot be reached, the signal aborts, or the answer is too large.
 * A kept-alive connection the peer closed as it was reused is replaced once by a new one, as Node's documentation advises.
 */
export async function askPeer(url: string, request: PeerRequest): Promise<PeerAnswer> {
  try {
    return await send(url, request);
  } catch (error) {
    if (!(error instanceof StaleConnectionError)) throw error;
    return send(url, request);
  }
}

class StaleConnectionError extends Error {}

function send(url: string, { method, headers, body, signal }: PeerRequest): Promise<PeerAnswer> {
  const target = new URL(url);
  const protocol = target.protocol === 'https:' ? 'https:' : 'http:';
  const client = protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(target, { method, headers, agent: agents[protocol], signal }, (response) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > MAX_ANSWER_BYTES) request.destroy(new Error(`the answer of ${target.host} is over ${MAX_ANSWER_BYTES >> 20} MiB`));
        else chunks.push(chunk);
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'], body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', (error: NodeJS.ErrnoException) =>
      reject(request.reusedSocket && error.code === 'ECONNRESET' ? new StaleConnectionError(error.message, { cause: error }) : error),
    );
    request.end(body);
  });
}
