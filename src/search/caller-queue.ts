/**
 * The workers' queue of tasks waiting for a worker, taken caller by caller in turn and first in, first
 * out within a caller: a caller with many costly searches queued (each may hold a worker for the search
 * time budget) delays another caller's next task by one turn, not by its whole queue (docs/design.md,
 * "Workers"). With one caller it is a plain first in, first out queue.
 */
import { queueOptionsSymbol, type TaskQueue } from 'piscina';

type Task = Parameters<TaskQueue['push']>[0];

/** The queue options a task carries (the symbol-keyed member a structured clone leaves behind). */
export interface QueueOptions {
  /** Whose task it is (server/rate-limit.ts `callerKey`); tasks without one take their turns together. */
  caller?: string;
  /** The worker thread a task is for (workers.ts, mapping shards). */
  thread?: number;
  /** A task resuming one that gave its worker up (contention.ts): first of its caller's, in the caller's turn. */
  resumes?: boolean;
}

const optionsOf = (task: Task) => task[queueOptionsSymbol] as QueueOptions | null;
const callerOf = (task: Task) => optionsOf(task)?.caller ?? '';

export class CallerTaskQueue implements TaskQueue {
  private readonly tasksOf = new Map<string, Task[]>();
  /** The callers with tasks queued, in the order of their turns. */
  private readonly turns: string[] = [];
  private queued = 0;

  get size(): number {
    return this.queued;
  }

  /** The next task of the caller whose turn it is; that caller's next turn comes after every other caller's. */
  shift(): Task | null {
    const caller = this.turns.shift();
    if (caller === undefined) return null;
    const tasks = this.tasksOf.get(caller)!;
    const task = tasks.shift()!;
    this.queued--;
    if (tasks.length > 0) this.turns.push(caller);
    else this.tasksOf.delete(caller);
    return task;
  }

  /** Queues `task` last of its caller's (first if it `resumes`); a caller with none queued takes its turn after the others'. */
  push(task: Task): void {
    this.add(task, false);
  }

  /** Puts back the task `shift` gave when no worker could take it: first again, in the turn it had. */
  unshift(task: Task): void {
    this.add(task, true);
  }

  remove(task: Task): void {
    const caller = callerOf(task);
    const tasks = this.tasksOf.get(caller);
    const index = tasks?.indexOf(task) ?? -1;
    if (index < 0) return;
    tasks!.splice(index, 1);
    this.queued--;
    if (tasks!.length === 0) {
      this.tasksOf.delete(caller);
      this.turns.splice(this.turns.indexOf(caller), 1);
    }
  }

  private add(task: Task, first: boolean): void {
    const caller = callerOf(task);
    const tasks = this.tasksOf.get(caller);
    if (tasks === undefined) {
      this.tasksOf.set(caller, [task]);
      if (first) this.turns.unshift(caller);
      else this.turns.push(caller);
    } else if (first) {
      tasks.unshift(task);
      this.turns.splice(this.turns.indexOf(caller), 1);
      this.turns.unshift(caller);
    } else if (optionsOf(task)?.resumes) {
      tasks.unshift(task);
    } else {
      tasks.push(task);
    }
    this.queued++;
  }
}
