import fs from 'node:fs';

/** The inotify watches this process holds (a watched directory or file is one each). */
export function inotifyWatches(): number {
  let watches = 0;
  for (const fd of fs.readdirSync('/proc/self/fdinfo')) {
    try {
      watches += (fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').match(/^inotify wd:/gm) ?? []).length;
    } catch {
      // the descriptor closed while it was listed
    }
  }
  return watches;
}
