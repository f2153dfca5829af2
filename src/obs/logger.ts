/** The process logger: pino, JSON lines on stderr, level from $TRAWL_LOG_LEVEL (default info). */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(name: string): Logger {
  return pino({ name, level: process.env.TRAWL_LOG_LEVEL ?? 'info' }, pino.destination(2));
}
