import fs from 'node:fs';

/** The nice value of each thread of process `pid` (default: this one), by thread id (/proc/PID/task/TID/stat, field 19). */
export function threadNiceValues(pid: number | 'self' = 'self'): Map<number, number> {
  const values = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    values.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return values;
}
