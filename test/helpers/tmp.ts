import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';

/** What cleans up after a test (tap's Test), or after a benchmark run. */
export interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A fresh temporary directory removed when the test ends. */
export function tempDir(t: Teardown, prefix = 'trawl-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A file system of its own for a test: a full one gives the real ENOSPC. */
export interface SmallFileSystem {
  dir: string;
  /** Writes a file until the file system is full. */
  fill(): void;
  /** Removes that file. */
  free(): void;
}

/** Mounting needs root: tests that use `smallFileSystem` skip with this reason otherwise. */
export const NEEDS_ROOT_TO_MOUNT = process.getuid?.() !== 0 && 'mounting a small file system needs root';

/** A tmpfs of `sizeKiB` mounted on a fresh directory, unmounted and removed when the test ends. */
export function smallFileSystem(t: Test, sizeKiB = 1024): SmallFileSystem {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trawl-small-fs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k,mode=700`, 'tmpfs', dir]);
  t.teardown(() => {
    execFileSync('umount', [dir]);
    fs.rmdirSync(dir);
  });
  const filler = path.join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = fs.openSync(filler, 'a');
      const chunk = Buffer.alloc(64 << 10);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      } finally {
        fs.closeSync(fd);
      }
    },
    free: () => fs.rmSync(filler, { force: true }),
  };
}
