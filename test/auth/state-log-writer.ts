/**
 * A child process for the crash test: appends records to the state log in
 * the directory given as argv[2], 16 at a time, and prints "acked <n>" for
 * each acknowledged one, until it is killed.
 */
import { StateLog } from '../../src/auth/state-log.js';

const { log } = await StateLog.open(process.argv[2]!);
let next = 0;
const writeOne = async (): Promise<void> => {
  for (;;) {
    const n = next++;
    await log.append({ v: 1, type: 'token.created', at: Date.now(), n, secret: 'x'.repeat(n % 200) });
    process.stdout.write(`acked ${n}\n`);
  }
};
await Promise.all(Array.from({ length: 16 }, writeOne));
