import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { closeStageBoard, openStageBoard, readStage, STAGE_BOARD_FD } from './stage-board.js';
import { transpiledWorkerUrl } from './ts-sources.js';

/** Runs `body` in a child process that imports the board's writers and holds `board` as its descriptor. */
function inChild(board: number, body: string): void {
  const module = new URL('./stage-board.js', transpiledWorkerUrl(new URL('./pool.ts', import.meta.url).href)).href;
  const stdio: ('ignore' | 'pipe' | number)[] = ['ignore', 'ignore', 'pipe', 'ignore'];
  stdio[STAGE_BOARD_FD] = board;
  const child = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', `import { markStart, markStage } from ${JSON.stringify(module)};\n${body}`],
    { stdio },
  );
  expect(child.stderr.toString()).toBe('');
  expect(child.status).toBe(0);
}

describe('stage board', () => {
  it('shows the pool the task a process works on, since when and in which check, after the process is gone', () => {
    const board = openStageBoard();
    try {
      expect(readStage(board, 1)).toBeUndefined();
      const before = Date.now();
      inChild(board, 'markStart(41, -1);');
      expect(readStage(board, 41)).toEqual({ taskId: 41, startedAt: expect.any(Number), stage: -1 });
      expect(readStage(board, 41)!.startedAt).toBeGreaterThanOrEqual(before);
      expect(readStage(board, 41)!.startedAt).toBeLessThanOrEqual(Date.now());

      inChild(board, 'markStart(42, -1); markStage(0); markStage(3);');
      expect(readStage(board, 42)).toMatchObject({ taskId: 42, stage: 3 });
      // A mark of another task is no mark of this one.
      expect(readStage(board, 41)).toBeUndefined();

      inChild(board, 'markStart(43, 5);');
      expect(readStage(board, 43)).toMatchObject({ stage: 5 });
    } finally {
      closeStageBoard(board);
    }
  });
});
