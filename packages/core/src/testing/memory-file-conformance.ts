import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import type { UserScope } from '../messages/scope.js';
import type { Store } from '../store/store.js';

const user: UserScope = { tenantId: 'tenant-a', userId: 'user-1' };
const now = '2030-01-01T00:00:00.000Z';
const later = '2030-01-02T00:00:00.000Z';
const is = (code: Parameters<typeof isMemoryError>[1]) => (error: unknown) => isMemoryError(error, code);

/** Memory-file cases of the store conformance suite: versions, directories, rename, isolation, erase, path checks. */
export function describeMemoryFileConformance(store: () => Store): void {
  describe('memory files', () => {
    it('creates, reads and rewrites a file with a version that guards concurrent writers', async () => {
      const created = await store().putMemoryFile(user, {
        path: '/memories/trip.md',
        content: 'June 14',
        now,
        expectedVersion: 0,
      });
      expect(created).toMatchObject({
        ...user,
        path: '/memories/trip.md',
        content: 'June 14',
        version: 1,
        createdAt: now,
        updatedAt: now,
      });
      await expect(
        store().putMemoryFile(user, { path: '/memories/trip.md', content: 'x', now, expectedVersion: 0 }),
      ).rejects.toSatisfy(is('conflict'));
      const updated = await store().putMemoryFile(user, {
        path: '/memories/trip.md',
        content: 'June 21',
        now: later,
        expectedVersion: 1,
      });
      expect(updated).toMatchObject({ version: 2, createdAt: now, updatedAt: later });
      await expect(
        store().putMemoryFile(user, { path: '/memories/trip.md', content: 'stale', now, expectedVersion: 1 }),
      ).rejects.toSatisfy(is('conflict'));
      expect((await store().getMemoryFile(user, '/memories/trip.md'))?.content).toBe('June 21');
      expect(await store().getMemoryFile(user, '/memories/none.md')).toBeUndefined();
    });

    it('lists a directory recursively by path with sizes, and deletes a directory with everything under it', async () => {
      for (const path of ['/memories/b.md', '/memories/a/x.md', '/memories/a/y/z.md', '/memories/ab.md']) {
        await store().putMemoryFile(user, { path, content: 'héllo', now });
      }
      expect((await store().listMemoryFiles(user, '/memories')).map((file) => file.path)).toEqual([
        '/memories/a/x.md',
        '/memories/a/y/z.md',
        '/memories/ab.md',
        '/memories/b.md',
      ]);
      const listed = await store().listMemoryFiles(user, '/memories/a');
      expect(listed.map((file) => file.path)).toEqual(['/memories/a/x.md', '/memories/a/y/z.md']);
      expect(listed[0]).toMatchObject({ sizeBytes: 6, version: 1 });
      expect(listed[0]).not.toHaveProperty('content');
      expect(await store().deleteMemoryFiles(user, '/memories/a')).toBe(2);
      expect((await store().listMemoryFiles(user, '/memories')).map((file) => file.path)).toEqual([
        '/memories/ab.md',
        '/memories/b.md',
      ]);
    });

    it('renames a file or a whole directory and refuses to overwrite', async () => {
      await store().putMemoryFile(user, { path: '/memories/notes/a.md', content: 'A', now });
      await store().putMemoryFile(user, { path: '/memories/notes/sub/b.md', content: 'B', now });
      await store().putMemoryFile(user, { path: '/memories/other.md', content: 'O', now });
      expect(await store().renameMemoryFiles(user, '/memories/notes', '/memories/archive', later)).toBe(2);
      expect((await store().listMemoryFiles(user, '/memories/archive')).map((file) => file.path)).toEqual([
        '/memories/archive/a.md',
        '/memories/archive/sub/b.md',
      ]);
      expect((await store().getMemoryFile(user, '/memories/archive/sub/b.md'))?.content).toBe('B');
      await expect(
        store().renameMemoryFiles(user, '/memories/other.md', '/memories/archive/a.md', later),
      ).rejects.toSatisfy(is('conflict'));
      await expect(store().renameMemoryFiles(user, '/memories/missing.md', '/memories/x.md', later)).rejects.toSatisfy(
        is('not_found'),
      );
      expect((await store().getMemoryFile(user, '/memories/other.md'))?.content).toBe('O');
    });

    it('refuses paths that are not normalized or leave /memories', async () => {
      for (const path of [
        '/memories/../etc/passwd',
        '/etc/passwd',
        'memories/x',
        '/memories//x',
        '/memories/./x',
        '/memories/x/',
      ]) {
        await expect(store().putMemoryFile(user, { path, content: 'x', now })).rejects.toSatisfy(is('invalid_input'));
      }
    });

    it('keeps tenants and users apart and erases files with their user', async () => {
      await store().putMemoryFile(user, { path: '/memories/secret.md', content: 'mine', now });
      const otherTenant = { ...user, tenantId: 'tenant-b' };
      const otherUser = { ...user, userId: 'user-2' };
      expect(await store().getMemoryFile(otherTenant, '/memories/secret.md')).toBeUndefined();
      expect(await store().listMemoryFiles(otherUser, '/memories')).toEqual([]);
      expect(await store().deleteMemoryFiles(otherTenant, '/memories')).toBe(0);
      await store().putMemoryFile(otherUser, { path: '/memories/secret.md', content: 'theirs', now });
      await store().deleteUser(user);
      expect(await store().getMemoryFile(user, '/memories/secret.md')).toBeUndefined();
      expect((await store().getMemoryFile(otherUser, '/memories/secret.md'))?.content).toBe('theirs');
    });
  });
}
