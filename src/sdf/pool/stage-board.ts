import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where a pool process records which file it works on, since when, and which check it is in: a small
 * private file that the pool and the process both hold open (the process as this descriptor, the
 * file unlinked as soon as it is opened). The process writes it in place; the pool reads it only when
 * it needs to know: when a file's time budget may be up, or when the process died of its heap.
 *
 * A message over the IPC channel per check would wake the pool's event loop five or six times per
 * file for a value it almost never reads; a write into the page cache wakes nobody.
 */
export const STAGE_BOARD_FD = 4;

/** [task id: float64][started at, ms since the epoch: float64][check index, or NONE: uint8] */
const SIZE = 17;
const NONE = 255;

export interface StageMark {
  taskId: number;
  startedAt: number;
  /** Index in CHECK_NAMES of the check running, or -1 before the first. */
  stage: number;
}

/** A new board for one pool process: its descriptor, to pass as the child's fd STAGE_BOARD_FD. */
export function openStageBoard(): number {
  const path = join(tmpdir(), `sdf-stage-${randomUUID()}`);
  const fd = openSync(path, 'wx+', 0o600);
  unlinkSync(path);
  return fd;
}

export function closeStageBoard(fd: number): void {
  closeSync(fd);
}

/**
 * The mark of `taskId`, or undefined when the process has not started on it (or the board is closed,
 * fd -1). Read until two reads agree, so a read that crossed the process's write is never taken for a
 * mark.
 */
export function readStage(fd: number, taskId: number): StageMark | undefined {
  if (fd < 0) return undefined; // closed: the process is gone and its file answered
  const read = (): Buffer => {
    const buf = Buffer.alloc(SIZE);
    readSync(fd, buf, 0, SIZE, 0);
    return buf;
  };
  let last = read();
  for (let again = read(); !again.equals(last); again = read()) last = again;
  if (last.readDoubleLE(0) !== taskId) return undefined;
  const stage = last.readUInt8(16);
  return { taskId, startedAt: last.readDoubleLE(8), stage: stage === NONE ? -1 : stage };
}

/** In the pool process: the task starts now, in check `stage` (-1: none yet). */
export function markStart(taskId: number, stage: number): void {
  const buf = Buffer.alloc(SIZE);
  buf.writeDoubleLE(taskId, 0);
  buf.writeDoubleLE(Date.now(), 8);
  buf.writeUInt8(stage < 0 ? NONE : stage, 16);
  writeSync(STAGE_BOARD_FD, buf, 0, SIZE, 0);
}

const stageByte = Buffer.alloc(1);

/** In the pool process: the running task enters check `stage`. One byte, so no read sees half of it. */
export function markStage(stage: number): void {
  stageByte[0] = stage;
  writeSync(STAGE_BOARD_FD, stageByte, 0, 1, 16);
}
