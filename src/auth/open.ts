/** Opens a data directory's auth state and audit trail, as the daemon and the offline `trawl admin` do. */
import { AuditTrail } from './audit.js';
import { TEST_LICENSE_KEY_VARIABLE, trustedLicenseKeys } from './license.js';
import { AuthStore, stateDirectory, type AuthStoreOptions } from './store.js';
import { EtcdJournal } from './etcd-journal.js';
import { isEtcdError, openEtcd, readClusterKey, unreachable } from '../cluster/etcd.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../obs/logger.js';

export interface OpenedAuth {
  store: AuthStore;
  audit: AuditTrail;
  close(): Promise<void>;
}

/** In a cluster, the credential log on etcd (etcd-journal.ts), with this directory's state.log its checkpoint. */
function clusterJournal(cluster: NonNullable<Config['cluster']>, directory: string, logger: Logger): AuthStoreOptions['openJournal'] {
  return async (host) => {
    const clusterKey = readClusterKey(cluster);
    const etcd = await openEtcd(cluster);
    try {
      return await EtcdJournal.open({ etcd, directory, clusterKey, node: cluster.node, snapshotAfterChanges: cluster.snapshotAfterChanges, logger }, host);
    } catch (error) {
      etcd.close();
      throw (await isEtcdError(error)) ? unreachable(cluster, error) : error;
    }
  };
}

/**
 * Takes both logs' locks (StateLogLockedError while another process holds
 * them), replays them and reports what was repaired.
 */
export async function openAuth(config: Pick<Config, 'dataDir' | 'auth' | 'cluster'>, logger: Logger): Promise<OpenedAuth> {
  const directory = stateDirectory(config.dataDir);
  if (process.env[TEST_LICENSE_KEY_VARIABLE])
    logger.warn({ variable: TEST_LICENSE_KEY_VARIABLE }, 'licenses signed with a test key are trusted: for tests only');
  const { store, repair } = await AuthStore.open({
    directory,
    trustedLicenseKeys: trustedLicenseKeys(),
    sessionLimits: { idleMs: config.auth.sessionIdleHours * 3_600_000, maxAgeMs: config.auth.sessionMaxAgeDays * 86_400_000 },
    onBackgroundError: (error, what) => logger.error({ err: error, what }, 'state log write in the background failed; the log is unchanged'),
    ...(config.cluster ? { openJournal: clusterJournal(config.cluster, directory, logger) } : {}),
  });
  if (repair) logger.warn({ ...repair, directory }, 'state log: a damaged tail was cut off at the last good record');
  let audit: AuditTrail;
  try {
    audit = await AuditTrail.open(directory, {
      retentionDays: config.auth.auditRetentionDays,
      maxBytes: config.auth.auditMaxMegabytes * 2 ** 20,
      onError: (error) => logger.error({ err: error }, 'audit trail'),
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  if (audit.repair) logger.warn({ ...audit.repair, directory }, 'audit log: a damaged tail was cut off at the last good record');
  return { store, audit, close: async () => void (await Promise.all([store.close(), audit.close()])) };
}
