/** A stream_search a test holds open: started, its first bytes read, then paused until the test reads the rest. */
import http from 'node:http';
import { commitAll, writeFiles } from './git.js';

export interface PausedStream {
  response: http.IncomingMessage;
  /** Reads the rest to its end; the `data:` payloads of every event, in order. */
  rest(): Promise<{ text: string; payloads: string[] }>;
}

export async function pausedStreamSearch(url: string, headers: Record<string, string>, body: unknown): Promise<PausedStream> {
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = http.request(`${url}/api/stream_search`, { method: 'POST', headers });
    request.on('response', (incoming) => {
      incoming.once('data', () => {
        incoming.pause();
        resolve(incoming);
      });
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
  return {
    response,
    async rest() {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (piece: string) => (text += piece));
      response.resume();
      await new Promise((resolve) => response.on('end', resolve));
      return {
        text,
        payloads: text
          .split('\n\n')
          .filter((block) => block.startsWith('data: '))
          .map((block) => block.slice('data: '.length)),
      };
    },
  };
}

/** Commits more text matching `needle` than socket buffers hold, so a stream that is not read stays open. */
export function commitStreamFodder(root: string): void {
  writeFiles(root, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`gen/file${i}.txt`, 'needle line of generated text\n'.repeat(2000)])));
  commitAll(root, 'generated files');
}
