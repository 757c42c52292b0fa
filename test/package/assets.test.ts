/**
 * What `npm run bundle` ships in assets/: each function's folder (the Lambda asset) and the CLI
 * and client bundles carry no source map, since nothing turns them on and turning them on costs
 * every cold start (bench/cold-start.ts measures it; docs/DESIGN.md, "Function assets").
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ASSETS = join(__dirname, '..', '..', 'assets');
const folders = readdirSync(ASSETS, { withFileTypes: true }).filter((entry) => entry.isDirectory());

test('the assets hold every function, the CLI and the client', () => {
  expect(folders.map((folder) => folder.name).sort()).toEqual(['cli', 'client', 'processor', 'reconciler', 'rotator', 'verifier']);
});

test.each(folders.map((folder) => folder.name))('%s ships no source map, as a file or as a reference', (name) => {
  const files = readdirSync(join(ASSETS, name));
  expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
  for (const file of files.filter((candidate) => candidate.endsWith('.js'))) {
    expect([file, readFileSync(join(ASSETS, name, file), 'utf8').includes('sourceMappingURL')]).toEqual([file, false]);
  }
});
