/**
 * What `npm run bundle` ships in assets/: each function's folder (the Lambda asset) and the CLI
 * and client bundles carry no source map, since nothing turns them on and turning them on costs
 * every cold start (bench/cold-start.ts measures it; docs/DESIGN.md, "Function assets").
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const ASSETS = join(__dirname, '..', '..', 'assets');
const folders = readdirSync(ASSETS, { withFileTypes: true }).filter((entry) => entry.isDirectory());

test('the assets hold every function, the CLI and the client', () => {
  expect(folders.map((folder) => folder.name).sort()).toEqual(['cli', 'client', 'processor', 'reconciler', 'rotator', 'verifier']);
});

/** Every file of an asset folder, its chunks' folder included, relative to the folder. */
const filesOf = (name: string) =>
  readdirSync(join(ASSETS, name), { recursive: true, encoding: 'utf8' }).filter((file) => statSync(join(ASSETS, name, file)).isFile());

test.each(folders.map((folder) => folder.name))('%s ships no source map, as a file or as a reference', (name) => {
  const files = filesOf(name);
  expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
  for (const file of files.filter((candidate) => /\.m?js$/.test(candidate))) {
    expect([file, readFileSync(join(ASSETS, name, file), 'utf8').includes('sourceMappingURL')]).toEqual([file, false]);
  }
});

const FUNCTIONS = ['processor', 'reconciler', 'rotator', 'verifier'];

test.each(FUNCTIONS)('the %s asset is its handler module and every chunk it can import, nothing else', (name) => {
  // Lambda loads `index.handler` from index.mjs; what that file imports, statically or on first use, must be in the folder.
  const reached = new Set<string>();
  const visit = (file: string) => {
    if (reached.has(file)) return;
    reached.add(file);
    const code = readFileSync(join(ASSETS, name, file), 'utf8');
    for (const [, specifier] of code.matchAll(/(?:from|import)\s*\(?\s*"(\.\.?\/[^"]+)"/g)) {
      const target = relative(join(ASSETS, name), join(ASSETS, name, dirname(file), specifier));
      expect([file, specifier, existsSync(join(ASSETS, name, target))]).toEqual([file, specifier, true]);
      visit(target);
    }
  };
  visit('index.mjs');
  expect([...reached].sort()).toEqual(filesOf(name).sort());
  expect(reached.size).toBeGreaterThan(1);
});
