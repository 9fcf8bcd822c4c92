import { describe, expect, it } from 'vitest';
import { isMemoryError, type ErrorCode } from '../errors/memory-error.js';
import type { UserScope } from '../messages/scope.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import type { Store } from '../store/store.js';
import { createMemoryTool, type MemoryToolOptions } from './memory-tool.js';
import { memoryToolInputSchema, parseMemoryCommand } from './memory-tool-schema.js';

const maren: UserScope = { tenantId: 'tenant-a', userId: 'maren' };

function setup(options: Partial<MemoryToolOptions> = {}) {
  const store = options.store ?? new InMemoryStore();
  const tool = createMemoryTool({ store, now: () => Date.parse('2030-01-01T00:00:00Z'), ...options });
  return { store, tool, run: (input: unknown, user: UserScope = maren) => tool.run(user, input) };
}

/** The store with `getMemoryFile` replaced, as a racing request would make it behave. */
function withGetMemoryFile(store: Store, getMemoryFile: Store['getMemoryFile']): Store {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'getMemoryFile') return getMemoryFile;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const failsWith = (code: ErrorCode, message?: RegExp) => (error: unknown) =>
  isMemoryError(error, code) && (message === undefined || message.test(error.message));

describe('createMemoryTool', () => {
  it('describes itself with a flat JSON schema a tool-calling model accepts', () => {
    const { tool } = setup();

    expect(tool.definition.name).toBe('memory');
    expect(tool.definition.description).toContain('/memories');
    expect(tool.definition.inputSchema).toBe(memoryToolInputSchema);
    expect(memoryToolInputSchema).toMatchObject({ type: 'object', required: ['command'] });
    expect(Object.isFrozen((memoryToolInputSchema as { properties: object }).properties)).toBe(true);
  });

  it('creates a file, views it with line numbers and a range, and lists the directory with sizes', async () => {
    const { run } = setup();

    expect(
      await run({
        command: 'create',
        path: '/memories/maren.md',
        file_text: 'Name: Maren\nRelay: LARCH-RIDGE\nLikes: short replies\n',
      }),
    ).toBe('Created /memories/maren.md (52 bytes).');
    await run({ command: 'create', path: '/memories/trips/june.md', file_text: 'Bergen 14 June' });

    expect(await run({ command: 'view', path: '/memories/maren.md' })).toBe(
      '/memories/maren.md (version 1), lines 1-3 of 3:\n     1\tName: Maren\n     2\tRelay: LARCH-RIDGE\n     3\tLikes: short replies',
    );
    expect(await run({ command: 'view', path: '/memories/maren.md', view_range: [2, -1] })).toBe(
      '/memories/maren.md (version 1), lines 2-3 of 3:\n     2\tRelay: LARCH-RIDGE\n     3\tLikes: short replies',
    );
    expect(await run({ command: 'view', path: '/memories' })).toBe(
      [
        '/memories: 2 files, 66B; entries up to 2 levels deep (directories end with /):',
        '52B\t/memories/maren.md',
        '14B\t/memories/trips/',
        '14B\t/memories/trips/june.md',
      ].join('\n'),
    );
  });

  it('lists two levels deep and sums the sizes of deeper files into their directory', async () => {
    const { run } = setup();
    await run({ command: 'create', path: '/memories/a/b/c/deep.md', file_text: 'x'.repeat(2048) });

    expect(await run({ command: 'view', path: '/memories/' })).toBe(
      [
        '/memories: 1 file, 2.0K; entries up to 2 levels deep (directories end with /):',
        '2.0K\t/memories/a/',
        '2.0K\t/memories/a/b/',
      ].join('\n'),
    );
  });

  it('shows an empty root, and not_found for a path that does not exist', async () => {
    const { run } = setup();

    expect(await run({ command: 'view', path: '/memories' })).toBe('/memories is empty.');
    await expect(run({ command: 'view', path: '/memories/none.md' })).rejects.toSatisfy(
      failsWith('not_found', /does not exist/),
    );
  });

  it('refuses a view_range outside the file', async () => {
    const { run } = setup();
    await run({ command: 'create', path: '/memories/a.md', file_text: 'one\ntwo' });

    for (const view_range of [
      [0, 1],
      [2, 5],
      [2, 1],
      [3, -1],
    ]) {
      await expect(run({ command: 'view', path: '/memories/a.md', view_range })).rejects.toSatisfy(
        failsWith('invalid_input', /lines 1 to 2/),
      );
    }
  });

  it('refuses a create over an existing file and keeps the file as it was', async () => {
    const { run, store } = setup();
    await run({ command: 'create', path: '/memories/a.md', file_text: 'old' });

    await expect(run({ command: 'create', path: '/memories/a.md', file_text: 'new' })).rejects.toSatisfy(
      failsWith('conflict', /\/memories\/a\.md already exists \(version 1\); nothing was written/),
    );
    expect(await store.getMemoryFile(maren, '/memories/a.md')).toMatchObject({ content: 'old', version: 1 });
  });

  it('keeps a directory listed, empty, after its last file is deleted or renamed away, and creates into it', async () => {
    const { run, store } = setup({ limits: { maxFilesPerUser: 2 } });
    await run({ command: 'create', path: '/memories/trips/june.md', file_text: 'Bergen' });
    await run({ command: 'create', path: '/memories/notes/a.md', file_text: 'A' });

    await run({ command: 'delete', path: '/memories/trips/june.md' });
    await run({ command: 'rename', old_path: '/memories/notes/a.md', new_path: '/memories/a.md' });

    expect(await run({ command: 'view', path: '/memories/trips' })).toBe('/memories/trips is empty.');
    expect(await run({ command: 'view', path: '/memories' })).toBe(
      [
        '/memories: 1 file, 1B; entries up to 2 levels deep (directories end with /):',
        '1B\t/memories/a.md',
        '0B\t/memories/notes/',
        '0B\t/memories/trips/',
      ].join('\n'),
    );
    // An empty directory is still a directory; its marker is no file the model can write or count against the cap.
    await expect(run({ command: 'create', path: '/memories/trips', file_text: 'x' })).rejects.toSatisfy(
      failsWith('conflict', /is a directory/),
    );
    await expect(
      run({ command: 'create', path: '/memories/trips/.mnemo-directory', file_text: 'x' }),
    ).rejects.toSatisfy(failsWith('invalid_input', /reserved|keeps an empty directory/));
    expect(await run({ command: 'create', path: '/memories/trips/july.md', file_text: 'Oslo' })).toBe(
      'Created /memories/trips/july.md (4 bytes).',
    );
    expect(await run({ command: 'view', path: '/memories/trips' })).toContain('4B\t/memories/trips/july.md');
    expect(await run({ command: 'delete', path: '/memories/notes' })).toBe(
      'Deleted the directory /memories/notes (0 files).',
    );
    await expect(run({ command: 'view', path: '/memories/notes' })).rejects.toSatisfy(failsWith('not_found'));
    expect((await store.listMemoryFiles(maren, '/memories')).map((file) => file.path)).toEqual([
      '/memories/a.md',
      '/memories/trips/.mnemo-directory',
      '/memories/trips/july.md',
    ]);
  });

  it('replaces a unique string and shows the edited lines', async () => {
    const { run, store } = setup();
    await run({ command: 'create', path: '/memories/a.md', file_text: 'Relay: LARCH-RIDGE\nBattery: 80%\n' });

    const output = await run({ command: 'str_replace', path: '/memories/a.md', old_str: '80%', new_str: '45%' });

    expect(output).toBe('Edited /memories/a.md (now version 2).\n     1\tRelay: LARCH-RIDGE\n     2\tBattery: 45%');
    expect((await store.getMemoryFile(maren, '/memories/a.md'))?.content).toBe('Relay: LARCH-RIDGE\nBattery: 45%\n');
  });

  it('refuses str_replace when old_str is missing or occurs more than once, saying how many times and where', async () => {
    const { run, store } = setup();
    await run({ command: 'create', path: '/memories/a.md', file_text: 'rain\nsun\nrain\n' });

    await expect(
      run({ command: 'str_replace', path: '/memories/a.md', old_str: 'snow', new_str: 'x' }),
    ).rejects.toSatisfy(failsWith('invalid_input', /does not occur/));
    await expect(
      run({ command: 'str_replace', path: '/memories/a.md', old_str: 'rain', new_str: 'x' }),
    ).rejects.toSatisfy(failsWith('invalid_input', /occurs 2 times in \/memories\/a\.md \(lines 1, 3\)/));
    // Overlapping occurrences count too: "aa" is in "aaa" twice.
    await run({ command: 'create', path: '/memories/b.md', file_text: 'aaa' });
    await expect(
      run({ command: 'str_replace', path: '/memories/b.md', old_str: 'aa', new_str: 'b' }),
    ).rejects.toSatisfy(failsWith('invalid_input', /2 times/));
    expect((await store.getMemoryFile(maren, '/memories/a.md'))?.version).toBe(1);
  });

  it('inserts after a line, at the top, and at the end, keeping the final newline', async () => {
    const { run, store } = setup();
    await run({ command: 'create', path: '/memories/a.md', file_text: 'one\nthree\n' });

    await run({ command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: 'two' });
    await run({ command: 'insert', path: '/memories/a.md', insert_line: 0, insert_text: 'zero\n' });
    const output = await run({ command: 'insert', path: '/memories/a.md', insert_line: 4, insert_text: 'four\nfive' });

    expect((await store.getMemoryFile(maren, '/memories/a.md'))?.content).toBe('zero\none\ntwo\nthree\nfour\nfive\n');
    expect(output).toContain('Inserted 2 line(s) into /memories/a.md after line 4 (now version 4).');
    await expect(
      run({ command: 'insert', path: '/memories/a.md', insert_line: 7, insert_text: 'x' }),
    ).rejects.toSatisfy(failsWith('invalid_input', /has 6 lines \(use 0 to 6\)/));
  });

  it('deletes a file or a whole directory, and not_found for nothing', async () => {
    const { run, store } = setup();
    await run({ command: 'create', path: '/memories/a.md', file_text: 'a' });
    await run({ command: 'create', path: '/memories/dir/x.md', file_text: 'x' });
    await run({ command: 'create', path: '/memories/dir/sub/y.md', file_text: 'y' });

    expect(await run({ command: 'delete', path: '/memories/a.md' })).toBe('Deleted /memories/a.md.');
    expect(await run({ command: 'delete', path: '/memories/dir' })).toBe(
      'Deleted the directory /memories/dir (2 files).',
    );
    expect(await store.listMemoryFiles(maren, '/memories')).toEqual([]);
    await expect(run({ command: 'delete', path: '/memories/a.md' })).rejects.toSatisfy(failsWith('not_found'));
    await expect(run({ command: 'delete', path: '/memories' })).rejects.toSatisfy(failsWith('invalid_input', /itself/));
  });

  it('renames a file or a directory and refuses to overwrite', async () => {
    const { run, store } = setup();
    await run({ command: 'create', path: '/memories/notes/a.md', file_text: 'A' });
    await run({ command: 'create', path: '/memories/notes/b.md', file_text: 'B' });
    await run({ command: 'create', path: '/memories/c.md', file_text: 'C' });

    expect(await run({ command: 'rename', old_path: '/memories/notes', new_path: '/memories/archive/2030' })).toBe(
      'Renamed /memories/notes to /memories/archive/2030 (2 files).',
    );
    expect(await run({ command: 'rename', old_path: '/memories/c.md', new_path: '/memories/d.md' })).toBe(
      'Renamed /memories/c.md to /memories/d.md.',
    );
    expect((await store.listMemoryFiles(maren, '/memories')).map((file) => file.path)).toEqual([
      '/memories/archive/2030/a.md',
      '/memories/archive/2030/b.md',
      '/memories/d.md',
    ]);
    await expect(
      run({ command: 'rename', old_path: '/memories/d.md', new_path: '/memories/archive/2030/a.md' }),
    ).rejects.toSatisfy(failsWith('conflict'));
    await expect(
      run({ command: 'rename', old_path: '/memories/d.md', new_path: '/memories/d.md/inside' }),
    ).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'invalid_input') || isMemoryError(error, 'conflict'));
    await expect(run({ command: 'rename', old_path: '/memories/none', new_path: '/memories/x' })).rejects.toSatisfy(
      failsWith('not_found'),
    );
  });

  it('refuses path traversal and paths outside /memories in every command, writing nothing', async () => {
    const { run, store } = setup();
    const bad = [
      '/memories/../etc/passwd',
      '/etc/passwd',
      'memories/x.md',
      '/memories/./x',
      '/memories//x',
      '/memories\\..\\x',
      '../memories/x',
    ];

    for (const path of bad) {
      for (const input of [
        { command: 'view', path },
        { command: 'create', path, file_text: 'x' },
        { command: 'str_replace', path, old_str: 'a', new_str: 'b' },
        { command: 'insert', path, insert_line: 0, insert_text: 'x' },
        { command: 'delete', path },
        { command: 'rename', old_path: path, new_path: '/memories/ok.md' },
        { command: 'rename', old_path: '/memories/ok.md', new_path: path },
      ]) {
        await expect(run(input), `${input.command} ${path}`).rejects.toSatisfy(
          failsWith('invalid_input', /memory path/),
        );
      }
    }
    expect(await store.listMemoryFiles(maren, '/memories')).toEqual([]);
  });

  it('refuses a file over the size cap, on create and when an edit would grow it past the cap', async () => {
    const { run, store } = setup({ limits: { maxFileBytes: 10 } });

    await expect(run({ command: 'create', path: '/memories/a.md', file_text: 'é'.repeat(6) })).rejects.toSatisfy(
      failsWith('invalid_input', /12 bytes, over the limit of 10 bytes/),
    );
    await run({ command: 'create', path: '/memories/a.md', file_text: '0123456789' });
    await expect(
      run({ command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: 'x' }),
    ).rejects.toSatisfy(failsWith('invalid_input', /over the limit/));
    expect((await store.getMemoryFile(maren, '/memories/a.md'))?.content).toBe('0123456789');
  });

  it('caps the number of files per user, while editing an existing file stays allowed', async () => {
    const { run } = setup({ limits: { maxFilesPerUser: 2 } });
    await run({ command: 'create', path: '/memories/a.md', file_text: 'a' });
    await run({ command: 'create', path: '/memories/b.md', file_text: 'b' });

    await expect(run({ command: 'create', path: '/memories/c.md', file_text: 'c' })).rejects.toSatisfy(
      failsWith('budget_exceeded', /already holds 2 files, the limit is 2/),
    );
    expect(await run({ command: 'str_replace', path: '/memories/b.md', old_str: 'b', new_str: 'b2' })).toContain(
      'Edited',
    );
    // Another user has a cap of their own.
    expect(
      await run({ command: 'create', path: '/memories/c.md', file_text: 'c' }, { ...maren, userId: 'olav' }),
    ).toContain('Created');
  });

  it('refuses to create a file over a directory or under a file, and to edit a directory', async () => {
    const { run } = setup();
    await run({ command: 'create', path: '/memories/dir/x.md', file_text: 'x' });

    await expect(run({ command: 'create', path: '/memories/dir', file_text: 'y' })).rejects.toSatisfy(
      failsWith('conflict', /is a directory/),
    );
    await expect(run({ command: 'create', path: '/memories/dir/x.md/y.md', file_text: 'y' })).rejects.toSatisfy(
      failsWith('conflict', /is a file/),
    );
    await expect(run({ command: 'str_replace', path: '/memories/dir', old_str: 'x', new_str: 'y' })).rejects.toSatisfy(
      failsWith('invalid_input', /is a directory/),
    );
    await expect(run({ command: 'create', path: '/memories', file_text: 'y' })).rejects.toSatisfy(
      failsWith('invalid_input', /itself/),
    );
  });

  it('keeps users and tenants apart', async () => {
    const { run } = setup();
    await run({ command: 'create', path: '/memories/secret.md', file_text: 'mine' });

    await expect(
      run({ command: 'view', path: '/memories/secret.md' }, { tenantId: 'tenant-b', userId: 'maren' }),
    ).rejects.toSatisfy(failsWith('not_found'));
    expect(await run({ command: 'view', path: '/memories' }, { tenantId: 'tenant-a', userId: 'olav' })).toBe(
      '/memories is empty.',
    );
  });

  it('redoes an edit on the fresh content when a concurrent writer wins once, losing neither edit', async () => {
    const store = new InMemoryStore();
    let interleave = true;
    // A store whose first read of the file is followed by another writer's edit, as a racing request would do.
    const racing = withGetMemoryFile(store, async (...args) => {
      const file = await store.getMemoryFile(args[0], args[1]);
      if (interleave && file !== undefined) {
        interleave = false;
        await store.putMemoryFile(args[0], {
          path: file.path,
          content: `${file.content}\nfrom the other writer`,
          now: file.updatedAt,
          expectedVersion: file.version,
        });
      }
      return file;
    });
    const { run } = setup({ store: racing });
    await store.putMemoryFile(maren, {
      path: '/memories/a.md',
      content: 'Battery: 80%',
      now: '2030-01-01T00:00:00.000Z',
    });

    await run({ command: 'str_replace', path: '/memories/a.md', old_str: '80%', new_str: '45%' });

    const file = await store.getMemoryFile(maren, '/memories/a.md');
    expect(file?.content).toBe('Battery: 45%\nfrom the other writer');
    expect(file?.version).toBe(3);
  });

  it('gives up with conflict when a concurrent writer wins twice', async () => {
    const store = new InMemoryStore();
    const racing = withGetMemoryFile(store, async (...args) => {
      const file = await store.getMemoryFile(args[0], args[1]);
      if (file !== undefined)
        await store.putMemoryFile(args[0], { path: file.path, content: `${file.content}!`, now: file.updatedAt });
      return file;
    });
    const { run } = setup({ store: racing });
    await store.putMemoryFile(maren, { path: '/memories/a.md', content: 'x', now: '2030-01-01T00:00:00.000Z' });

    await expect(
      run({ command: 'insert', path: '/memories/a.md', insert_line: 0, insert_text: 'y' }),
    ).rejects.toSatisfy(failsWith('conflict', /changed by another writer/));
  });
});

describe('parseMemoryCommand', () => {
  it('names every offending field', () => {
    expect(() => parseMemoryCommand({ command: 'str_replace', path: '/memories/a.md', old_str: 3 })).toThrow(
      /old_str: must be a string; new_str: must be a string/,
    );
    expect(() =>
      parseMemoryCommand({ command: 'insert', path: '/memories/a.md', insert_line: -1, insert_text: '' }),
    ).toThrow(/insert_line: must be 0 or more/);
    expect(() => parseMemoryCommand({ command: 'view', path: '/memories', view_range: [1] })).toThrow(/view_range/);
    expect(() => parseMemoryCommand({ command: 'view', path: '/memories', extra: true })).toThrow(
      /unknown field\(s\) extra/,
    );
  });

  it('refuses an unknown command or a non-object with invalid_input', () => {
    for (const input of [{ command: 'format' }, {}, 'view /memories', null]) {
      expect(() => parseMemoryCommand(input)).toThrow(expect.objectContaining({ code: 'invalid_input' }) as Error);
    }
    expect(() => parseMemoryCommand({ command: 'format' })).toThrow(
      /command: must be one of view, create, str_replace, insert, delete, rename/,
    );
  });
});
