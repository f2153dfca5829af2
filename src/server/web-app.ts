/**
 * The browser app (src/web, bundled into dist/web at build time), served by
 * the daemon itself: its page for `/`, `/search` and every `/browse/…` URL
 * (the app routes on the client), its assets under `/assets/`. Read once at
 * start; a strict Content-Security-Policy keeps the page talking to this
 * daemon only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TextReply } from './http.js';

export interface WebApp {
  page: TextReply;
  assets: Map<string, TextReply>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

const SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

/** The built app next to the compiled daemon (dist/web), or null when it was not built. */
export function loadWebApp(directory = fileURLToPath(new URL('../../web/', import.meta.url))): WebApp | null {
  const pagePath = path.join(directory, 'index.html');
  if (!fs.existsSync(pagePath)) return null;
  const assets = new Map<string, TextReply>();
  for (const name of fs.readdirSync(directory)) {
    const contentType = CONTENT_TYPES[path.extname(name)];
    if (contentType) assets.set(name, { status: 200, text: fs.readFileSync(path.join(directory, name), 'utf8'), contentType, headers: SECURITY_HEADERS });
  }
  return { page: { status: 200, text: fs.readFileSync(pagePath, 'utf8'), contentType: 'text/html; charset=utf-8', headers: SECURITY_HEADERS }, assets };
}
