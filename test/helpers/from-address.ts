import http from 'node:http';

/**
 * A request sent from another loopback address (127.0.0.0/8 is all this machine's), so that per-address bounds
 * see several clients: its status, headers and body text.
 */
export function requestFrom(
  localAddress: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: init.method ?? 'GET', headers: init.headers, localAddress }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text }));
    });
    request.on('error', reject);
    request.end(init.body);
  });
}

/** POSTs `body` as JSON from `localAddress`. */
export function postFrom(localAddress: string, url: string, body: unknown, headers: Record<string, string> = {}) {
  return requestFrom(localAddress, url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
}
