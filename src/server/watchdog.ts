/**
 * The systemd watchdog: under WatchdogSec= ($WATCHDOG_USEC set), pings it at
 * half the interval, but only while the search pool is responsive (tasks
 * answered since the last tick, or a no-op task answered in time): a wedged
 * pool stops the pings and systemd restarts the daemon.
 */
import { native } from '../../native/index.js';
import type { Logger } from '../obs/logger.js';
import type { SearchPool } from '../search/pool.js';

/** The ping timer (cleared at shutdown), or null when systemd asked for no watchdog. */
export function startWatchdog(pool: SearchPool, logger: Logger, searchTimeBudgetMs: number): NodeJS.Timeout | null {
  const usec = Number(process.env.WATCHDOG_USEC);
  if (!Number.isFinite(usec) || usec <= 0) return null;
  const intervalMs = Math.max(100, usec / 2000);
  if (searchTimeBudgetMs >= intervalMs) {
    logger.warn(
      { searchTimeBudgetMs, intervalMs },
      'server.searchTimeBudgetMs is not below half of WatchdogSec: one long search can make a busy pool look wedged',
    );
  }
  const timer = setInterval(() => {
    void pool.responsive(intervalMs).then((alive) => {
      if (alive) native.sdNotify('WATCHDOG=1');
      else logger.warn({ intervalMs }, 'search pool did not answer: watchdog not pinged');
    });
  }, intervalMs);
  timer.unref();
  return timer;
}
