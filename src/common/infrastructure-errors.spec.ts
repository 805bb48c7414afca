import { describe, expect, it } from 'vitest';
import { diskFault, isInfrastructureError } from './infrastructure-errors.js';

const fileError = (code: string, syscall = 'write') =>
  Object.assign(new Error(`${code}: failed, ${syscall}`), { code, syscall, errno: -1 });

describe('diskFault: a full or unwritable disk, told from a fault of the request or job', () => {
  it('no space and an exhausted quota are a full disk; a read-only or forbidden folder is unwritable', () => {
    expect(diskFault(fileError('ENOSPC'))).toBe('full');
    expect(diskFault(fileError('EDQUOT'))).toBe('full');
    expect(diskFault(fileError('EROFS', 'open'))).toBe('unwritable');
    expect(diskFault(fileError('EACCES', 'mkdir'))).toBe('unwritable');
    expect(diskFault(fileError('EPERM', 'rename'))).toBe('unwritable');
  });

  it('finds the fault as a cause, and PostgreSQL out of disk on the driver error', () => {
    expect(diskFault(new Error('store failed', { cause: fileError('ENOSPC') }))).toBe('full');
    expect(diskFault(Object.assign(new Error('query failed'), { driverError: { code: '53100' } }))).toBe('full');
  });

  it('a permission error that is not a file call, a missing file and a plain error are not the disk', () => {
    expect(diskFault(Object.assign(new Error('not allowed'), { code: 'EPERM' }))).toBeNull();
    expect(diskFault(fileError('ENOENT', 'open'))).toBeNull();
    expect(diskFault(new Error('ENOSPC in a message only'))).toBeNull();
    expect(diskFault(null)).toBeNull();
  });

  it('is not taken for an unreachable dependency: requests get their own code for it', () => {
    expect(isInfrastructureError(fileError('ENOSPC'))).toBe(false);
  });
});
