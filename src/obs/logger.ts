/** The process logger: pino, JSON lines on stderr; $TRAWL_LOG_LEVEL overrides the level. */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(name: string, defaultLevel: pino.LevelWithSilent = 'info'): Logger {
  return pino({ name, level: process.env.TRAWL_LOG_LEVEL ?? defaultLevel }, pino.destination(2));
}
