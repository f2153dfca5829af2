/**
 * The process logger: pino, JSON lines on stderr (a daemon's, for journald and log shippers), or plain lines
 * for a person at a terminal (a one-shot command's); $TRAWL_LOG_LEVEL overrides the level.
 */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(name: string, defaultLevel: pino.LevelWithSilent = 'info'): Logger {
  return pino({ name, level: process.env.TRAWL_LOG_LEVEL ?? defaultLevel }, pino.destination(2));
}

/** A one-shot command's logger: `trawl admin: warning: message (key: value, …)` on stderr, nothing a table's reader must skip. */
export function createCommandLogger(command: string, defaultLevel: pino.LevelWithSilent = 'warn'): Logger {
  const labels: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };
  const plain = {
    write(line: string) {
      const { level, msg, time: _time, pid: _pid, hostname: _hostname, name: _name, err, ...fields } = JSON.parse(line) as Record<string, unknown>;
      const details = Object.entries({ ...fields, ...(err ? { error: (err as { message?: string }).message } : {}) }).map(
        ([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`,
      );
      process.stderr.write(`${command}: ${labels[level as number] ?? 'log'}: ${String(msg)}${details.length > 0 ? ` (${details.join(', ')})` : ''}\n`);
    },
  };
  return pino({ name: command, level: process.env.TRAWL_LOG_LEVEL ?? defaultLevel }, plain);
}
