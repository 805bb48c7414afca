import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalStorageDriver } from './local.driver.js';
import { isInfrastructureError } from '../common/infrastructure-errors.js';
import { S3StorageDriver } from './s3.driver.js';
import { spoolTarget, StorageLimitError, StorageNotFoundError, type StorageDriver } from './storage-driver.js';

const BUCKET = 'sdf-contract';
const BOUNDS = { connectTimeoutMs: 1_000, socketTimeoutMs: 1_000, maxAttempts: 2 };

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A stream of `total` bytes in 64 KiB chunks, optionally failing after `failAfter` bytes. */
function generated(total: number, failAfter?: number): Readable {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let sent = 0;
  return new Readable({
    read() {
      if (failAfter !== undefined && sent >= failAfter) {
        this.destroy(new Error('client went away'));
        return;
      }
      if (sent >= total) {
        this.push(null);
        return;
      }
      const n = Math.min(chunk.length, total - sent);
      sent += n;
      this.push(chunk.subarray(0, n));
    },
  });
}

interface Harness {
  driver: StorageDriver;
  /** Leftovers of aborted writes that the driver itself could see (temporary files). */
  leftovers: () => string[];
  close: () => Promise<void>;
}

async function localHarness(): Promise<Harness> {
  const root = mkdtempSync(join(tmpdir(), 'sdf-local-contract-'));
  const driver = new LocalStorageDriver(root);
  return {
    driver,
    leftovers: () => {
      return filesUnder(join(root, '.tmp'));
    },
    close: async () => rmSync(root, { recursive: true, force: true }),
  };
}

/** S13 contract against a real S3-compatible server (s3rver, from npm) on loopback. */
async function s3Harness(): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'sdf-s3rver-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const admin = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
  admin.destroy();
  const driver = new S3StorageDriver({
    endpoint,
    region: 'us-east-1',
    bucket: BUCKET,
    forcePathStyle: true,
    ...credentials,
    ...BOUNDS,
    // Small pages, so that listing a handful of objects crosses pages.
    listPageSize: 2,
  });
  return {
    driver,
    leftovers: () => [],
    close: async () => {
      await driver.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe.each([
  ['local', localHarness],
  ['s3', s3Harness],
])('storage driver contract: %s', (_name, makeHarness) => {
  let h: Harness;
  beforeAll(async () => {
    h = await makeHarness();
  });
  afterAll(() => h.close());

  const key = (name: string) => `tenants/00000000-0000-4000-8000-000000000001/documents/${name}.sdf`;

  it('stores a stream and reads it back as a stream and as a buffer', async () => {
    const { size } = await h.driver.put(key('a'), Readable.from([Buffer.from('hello '), Buffer.from('world')]));
    expect(size).toBe(11);
    expect(await text(await h.driver.get(key('a')))).toBe('hello world');
    expect((await h.driver.getBuffer(key('a'))).toString()).toBe('hello world');
    expect(await h.driver.exists(key('a'))).toBe(true);
  });

  it('stores a file from disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdf-putfile-'));
    const path = join(dir, 'f');
    writeFileSync(path, Buffer.alloc(300_000, 7));
    try {
      expect((await h.driver.putFile(key('file'), path)).size).toBe(300_000);
      expect((await h.driver.getBuffer(key('file'))).equals(Buffer.alloc(300_000, 7))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('replaces an object whole on overwrite', async () => {
    await h.driver.put(key('b'), Readable.from([Buffer.from('first version, longer')]));
    await h.driver.put(key('b'), Readable.from([Buffer.from('second')]));
    expect((await h.driver.getBuffer(key('b'))).toString()).toBe('second');
  });

  it('stores nothing when a stream crosses maxBytes, and keeps an existing object intact', async () => {
    await expect(h.driver.put(key('big'), generated(1_000_000), { maxBytes: 200_000 })).rejects.toBeInstanceOf(
      StorageLimitError,
    );
    expect(await h.driver.exists(key('big'))).toBe(false);
    await h.driver.put(key('keep'), Readable.from([Buffer.from('old')]));
    await expect(h.driver.put(key('keep'), generated(1_000_000), { maxBytes: 200_000 })).rejects.toThrow();
    expect((await h.driver.getBuffer(key('keep'))).toString()).toBe('old');
    expect(h.leftovers()).toEqual([]);
  });

  it('stores nothing when the source stream fails midway', async () => {
    await expect(h.driver.put(key('broken'), generated(1_000_000, 300_000))).rejects.toThrow('client went away');
    expect(await h.driver.exists(key('broken'))).toBe(false);
    expect(h.leftovers()).toEqual([]);
  });

  it('deletes idempotently and reports a missing object clearly', async () => {
    await h.driver.put(key('c'), Readable.from([Buffer.from('x')]));
    await h.driver.delete(key('c'));
    await h.driver.delete(key('c'));
    expect(await h.driver.exists(key('c'))).toBe(false);
    await expect(h.driver.get(key('c'))).rejects.toBeInstanceOf(StorageNotFoundError);
    await expect(h.driver.getBuffer(key('c'))).rejects.toBeInstanceOf(StorageNotFoundError);
  });

  it('refuses keys that could leave the storage root', async () => {
    for (const bad of ['../etc/passwd', 'tenants/../../x', '/abs/key', 'a//b', 'a\\b']) {
      await expect(h.driver.put(bad, Readable.from([Buffer.from('x')]))).rejects.toThrow(/unsafe storage key/);
    }
  });

  it('lists the objects under a prefix, across pages, with when each was written, and no temporary file', async () => {
    const tenant = (t: string, name: string) => `tenants/00000000-0000-4000-8000-00000000000${t}/documents/${name}`;
    const before = Date.now() - 2_000;
    for (const k of [tenant('2', 'x.sdf'), tenant('2', 'y.sdf'), tenant('2', 'y.data.json'), tenant('3', 'z.sdf')]) {
      await h.driver.put(k, Readable.from([Buffer.from('x')]));
    }
    await h.driver.put('tenantsX/other.sdf', Readable.from([Buffer.from('x')]));
    // A write under way: the local driver's temporary file, never a stored object.
    if (h.driver.spoolDir) {
      mkdirSync(h.driver.spoolDir(), { recursive: true });
      writeFileSync(join(h.driver.spoolDir(), 'partial.part'), 'x');
    }
    const listed = async (prefix: string) => {
      const found: { key: string; modifiedAt: Date }[] = [];
      for await (const o of h.driver.list(prefix)) found.push(o);
      return found.sort((a, b) => a.key.localeCompare(b.key));
    };

    const two = await listed('tenants/00000000-0000-4000-8000-000000000002/');
    expect(two.map((o) => o.key)).toEqual([tenant('2', 'x.sdf'), tenant('2', 'y.data.json'), tenant('2', 'y.sdf')]);
    for (const o of two) {
      expect(o.modifiedAt).toBeInstanceOf(Date);
      expect(o.modifiedAt.getTime()).toBeGreaterThan(before);
      expect(o.modifiedAt.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
    }
    expect((await listed(tenant('2', 'y'))).map((o) => o.key)).toEqual([
      tenant('2', 'y.data.json'),
      tenant('2', 'y.sdf'),
    ]);
    const all = (await listed('')).map((o) => o.key);
    expect(all).toEqual(expect.arrayContaining([tenant('3', 'z.sdf'), 'tenantsX/other.sdf', key('a')]));
    expect(all.filter((k) => k.startsWith('.tmp'))).toEqual([]);
    expect((await listed('tenants/')).map((o) => o.key)).not.toContain('tenantsX/other.sdf');
    expect(await listed('nothing-here/')).toEqual([]);
    await h.driver.delete(tenant('2', 'x.sdf'));
    expect((await listed('tenants/00000000-0000-4000-8000-000000000002/')).map((o) => o.key)).not.toContain(
      tenant('2', 'x.sdf'),
    );
  });

  it('answers the readiness probe', async () => {
    await expect(h.driver.probe()).resolves.toBeUndefined();
  });
});

describe('S3 driver: a store that is away', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdf-s3-away-'));
  const file = join(dir, 'upload.sdf');
  writeFileSync(file, Buffer.alloc(100_000, 7));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const driverAt = (endpoint: string) =>
    new S3StorageDriver({
      endpoint,
      region: 'us-east-1',
      bucket: BUCKET,
      accessKeyId: 'x',
      secretAccessKey: 'y',
      forcePathStyle: true,
      ...BOUNDS,
    });
  const openFiles = () => readdirSync('/proc/self/fd').length;

  it('fails the probe and a PUT as unavailable when nothing listens, and keeps no descriptor', async () => {
    const driver = driverAt('http://127.0.0.1:9');
    await expect(driver.probe()).rejects.toBeDefined();
    const before = openFiles();
    for (let i = 0; i < 20; i++) {
      const err = await driver.putFile('tenants/t/documents/refused.sdf', file).catch((e: unknown) => e);
      expect(isInfrastructureError(err)).toBe(true);
    }
    expect(openFiles()).toBeLessThanOrEqual(before);
    await driver.close();
  });

  it('fails a PUT as unavailable, within its socket timeout, when the store accepts but never answers', async () => {
    // A store that hangs: connections are accepted, requests read, nothing is ever answered.
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const driver = driverAt(`http://127.0.0.1:${port}`);
    try {
      const started = Date.now();
      const err = await driver.putFile('tenants/t/documents/hung.sdf', file).catch((e: unknown) => e);
      expect(isInfrastructureError(err)).toBe(true);
      // One attempt (a streamed body is never sent twice) of one socket timeout, not the life of the socket.
      expect(Date.now() - started).toBeLessThan(10 * BOUNDS.socketTimeoutMs);
      await expect(driver.probe()).rejects.toSatisfy(isInfrastructureError);
    } finally {
      await driver.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('local driver: storing a spooled file', () => {
  const root = mkdtempSync(join(tmpdir(), 'sdf-local-move-'));
  const driver = new LocalStorageDriver(root);
  const key = 'tenants/00000000-0000-4000-8000-000000000002/documents/moved.sdf';
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a spool target: what its writer wrote is moved under the key; an abandoned one is removed', async () => {
    const spool = driver.spoolDir();
    mkdirSync(spool, { recursive: true });
    const stored = spoolTarget(driver, spool, '.out');
    expect(stored.path.startsWith(spool)).toBe(true);
    writeFileSync(stored.path, Buffer.alloc(1_000, 6), { flush: true });
    await stored.store(key);
    await stored.discard();
    expect((await driver.getBuffer(key)).equals(Buffer.alloc(1_000, 6))).toBe(true);

    const abandoned = spoolTarget(driver, spool, '.out');
    expect(abandoned.path).not.toBe(stored.path);
    writeFileSync(abandoned.path, 'half');
    await abandoned.discard();
    await abandoned.discard();
    expect(readdirSync(spool)).toEqual([]);
    expect((await driver.getBuffer(key)).equals(Buffer.alloc(1_000, 6))).toBe(true);
  });

  it('moves a file from its spool folder into place instead of copying it', async () => {
    const spool = driver.spoolDir();
    mkdirSync(spool, { recursive: true });
    const path = join(spool, 'upload.part');
    writeFileSync(path, Buffer.alloc(50_000, 3));
    const inode = statSync(path).ino;
    expect(await driver.putFile(key, path)).toEqual({ size: 50_000, moved: true });
    expect(existsSync(path)).toBe(false);
    expect(statSync(driver.localPath(key)).ino).toBe(inode);
    expect((await driver.getBuffer(key)).equals(Buffer.alloc(50_000, 3))).toBe(true);
    expect(readdirSync(spool)).toEqual([]);

    // A file its writer flushed already is moved the same way, its size taken from the file.
    const synced = join(spool, 'synced.part');
    writeFileSync(synced, Buffer.alloc(60_000, 4), { flush: true });
    expect(await driver.putFile(key, synced, { synced: true })).toEqual({ size: 60_000, moved: true });
    expect((await driver.getBuffer(key)).equals(Buffer.alloc(60_000, 4))).toBe(true);
    expect(readdirSync(spool)).toEqual([]);
  });

  it('copies a file from another filesystem (a RAM disk here) and leaves it to the caller', async () => {
    const other = mkdtempSync(join('/dev/shm', 'sdf-spool-'));
    try {
      // The premise: the two folders are on different filesystems, so a rename cannot cross.
      expect(statSync(other).dev).not.toBe(statSync(root).dev);
      const path = join(other, 'upload.part');
      writeFileSync(path, Buffer.alloc(70_000, 5));
      expect(await driver.putFile(key, path)).toEqual({ size: 70_000, moved: false });
      expect((await driver.getBuffer(key)).equals(Buffer.alloc(70_000, 5))).toBe(true);
      expect(existsSync(path)).toBe(true);
      expect(filesUnder(join(root, '.tmp'))).toEqual([]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

/** The files (not folders) anywhere under `dir`; none when it does not exist. */
function filesUnder(dir: string): string[] {
  try {
    return (readdirSync(dir, { recursive: true }) as string[]).filter((n) => statSync(join(dir, n)).isFile());
  } catch {
    return [];
  }
}

describe('local driver: temporary files no process will finish', () => {
  const root = mkdtempSync(join(tmpdir(), 'sdf-local-sweep-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const tmp = join(root, '.tmp');
  const put = (folder: string, name: string, ageMs = 0) => {
    mkdirSync(join(tmp, folder), { recursive: true });
    const path = join(tmp, folder, name);
    writeFileSync(path, 'x');
    if (ageMs) utimesSync(path, new Date(Date.now() - ageMs), new Date(Date.now() - ageMs));
  };

  it("removes a gone process's folder of this host and its own name's at start, other hosts' files only once idle", async () => {
    const driver = new LocalStorageDriver(root);
    // A process of this host that is gone (no process has pid 2^22 + 1 here), and this name from an earlier life.
    put(`4194305@${hostname()}`, 'a.part');
    put(driver.instance, 'b.part');
    put(`1@elsewhere`, 'fresh.part');
    put(`1@elsewhere`, 'idle.part', 120_000);
    expect(await driver.sweepTemp(60_000, { atStart: true })).toBe(3);
    expect(filesUnder(tmp)).toEqual([join('1@elsewhere', 'fresh.part')]);

    // Later sweeps leave this process's own files alone, however old.
    put(driver.instance, 'mine.part', 120_000);
    expect(await driver.sweepTemp(60_000)).toBe(0);
    expect(filesUnder(tmp).sort()).toEqual(
      [join('1@elsewhere', 'fresh.part'), join(driver.instance, 'mine.part')].sort(),
    );
  });
});
