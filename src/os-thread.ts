import { closeSync, openSync, readlinkSync, readSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * The calling thread's id in the operating system, on Linux (/proc/thread-self names it);
 * undefined elsewhere. Worker threads use it to lower their own priority, which Linux keeps per
 * thread, and the render pool to read a render thread's CPU time.
 */
export function osThreadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Names the calling thread in the operating system (Linux: /proc/thread-self/comm, at most 15
 * bytes), so that `top -H`, `ps -L` and the bench's per-thread CPU (#48) tell Herald's threads
 * apart: Node leaves every thread named `node`. Elsewhere, or not allowed: the name stays.
 */
export function nameOwnThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // Not Linux: the thread keeps its name.
  }
}

/**
 * Lowers the calling thread's priority to at least `nice` (an unprivileged process may lower a
 * priority but not raise it again). Not Linux, or not allowed: the thread keeps the process's.
 */
export function lowerOwnPriority(nice: number): void {
  const tid = osThreadId();
  if (tid === undefined) return;
  try {
    setPriority(tid, Math.max(getPriority(tid), Math.min(19, nice)));
  } catch {
    // Not allowed: the thread keeps its priority.
  }
}

/** A thread's CPU time so far, read from outside it. */
export interface ThreadCpu {
  /** Milliseconds the thread has run on a CPU; undefined once it cannot be read (the thread ended). */
  ms(): number | undefined;
  close(): void;
}

/**
 * Opens the CPU clock of thread `tid` of this process (Linux: the first field of
 * /proc/self/task/<tid>/schedstat, nanoseconds on a CPU; one read from an open descriptor costs
 * about 1.5 µs). Undefined where there is no such file.
 */
export function threadCpu(tid: number | undefined): ThreadCpu | undefined {
  if (tid === undefined) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(`/proc/self/task/${tid}/schedstat`, 'r');
  } catch {
    return undefined;
  }
  const buffer = Buffer.alloc(64);
  return {
    ms() {
      if (fd === undefined) return undefined;
      try {
        const length = readSync(fd, buffer, 0, buffer.length, 0);
        const ns = Number(buffer.toString('latin1', 0, length).split(' ', 1)[0]);
        return Number.isFinite(ns) ? ns / 1e6 : undefined;
      } catch {
        return undefined;
      }
    },
    close() {
      if (fd === undefined) return;
      try {
        closeSync(fd);
      } catch {
        // already gone
      }
      fd = undefined;
    },
  };
}
