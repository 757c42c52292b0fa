/**
 * ts-node's transpiled files kept on disk (scripts/transpile.cjs `diskCached`): a file is
 * transformed once for all the processes that load it, and only an output of the same text,
 * name and version is ever served from the folder.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { diskCached } = require('../../scripts/transpile.cjs') as {
  diskCached: (folder: string, version: string, transform: Transform) => Transform;
};
type Transform = (text: string, fileName: string) => { outputText: string };

/** A transform that says what it was given and counts its calls. */
function countingTransform(): { transform: Transform; calls: string[] } {
  const calls: string[] = [];
  return { calls, transform: (text, fileName) => (calls.push(fileName), { outputText: `${fileName}:${text.toUpperCase()}` }) };
}

const folder = () => mkdtempSync(join(tmpdir(), 'transpile-'));

test('a file is transformed once: the next process over the same folder is served the output from disk', () => {
  const at = folder();
  const first = countingTransform();
  expect(diskCached(at, 'v1', first.transform)('const a = 1;', '/src/a.ts')).toEqual({ outputText: '/src/a.ts:CONST A = 1;' });
  const second = countingTransform();
  expect(diskCached(at, 'v1', second.transform)('const a = 1;', '/src/a.ts')).toEqual({ outputText: '/src/a.ts:CONST A = 1;' });
  expect([first.calls, second.calls]).toEqual([['/src/a.ts'], []]);
  expect(readdirSync(at)).toHaveLength(1);
});

test('an edited file, the same text at another path, and a new version are each transformed again', () => {
  const at = folder();
  diskCached(at, 'v1', countingTransform().transform)('const a = 1;', '/src/a.ts');
  const again = countingTransform();
  const cached = diskCached(at, 'v1', again.transform);
  expect(cached('const a = 2;', '/src/a.ts').outputText).toBe('/src/a.ts:CONST A = 2;');
  expect(cached('const a = 1;', '/src/b.ts').outputText).toBe('/src/b.ts:CONST A = 1;');
  const upgraded = countingTransform();
  expect(diskCached(at, 'v2', upgraded.transform)('const a = 1;', '/src/a.ts').outputText).toBe('/src/a.ts:CONST A = 1;');
  expect([again.calls, upgraded.calls]).toEqual([['/src/a.ts', '/src/b.ts'], ['/src/a.ts']]);
});

test("a file's new entry replaces its old one, and another process's entry being written is left alone", () => {
  const at = folder();
  const cached = diskCached(at, 'v1', countingTransform().transform);
  cached('const a = 1;', '/src/a.ts');
  cached('let b;', '/src/b.ts');
  const [first] = readdirSync(at).filter((name) => readFileSync(join(at, name), 'utf8').includes('/src/a.ts'));
  const beingWritten = `${first.slice(0, first.indexOf('-'))}-0123.json.4242.partial`;
  writeFileSync(join(at, beingWritten), '{');
  cached('const a = 2;', '/src/a.ts');
  diskCached(at, 'v2', countingTransform().transform)('const a = 2;', '/src/a.ts');
  const entries = readdirSync(at).filter((name) => name.endsWith('.json'));
  expect(
    entries
      .map((name) => JSON.parse(readFileSync(join(at, name), 'utf8')) as { outputText: string })
      .map((entry) => entry.outputText)
      .sort(),
  ).toEqual(['/src/a.ts:CONST A = 2;', '/src/b.ts:LET B;']);
  expect(entries).not.toContain(first);
  expect(readdirSync(at)).toContain(beingWritten);
});

test('an entry that cannot be parsed is transformed again and written whole', () => {
  const at = folder();
  diskCached(at, 'v1', countingTransform().transform)('let b;', '/src/b.ts');
  const [entry] = readdirSync(at);
  writeFileSync(join(at, entry), '{"outputText":"/src/b.ts:LE');
  const again = countingTransform();
  expect(diskCached(at, 'v1', again.transform)('let b;', '/src/b.ts').outputText).toBe('/src/b.ts:LET B;');
  expect(again.calls).toEqual(['/src/b.ts']);
  expect(JSON.parse(readFileSync(join(at, entry), 'utf8'))).toEqual({ outputText: '/src/b.ts:LET B;' });
  expect(readdirSync(at)).toEqual([entry]);
});

test('a folder that cannot be made only costs the transform: every output is still right', () => {
  const parent = folder();
  writeFileSync(join(parent, 'a-file'), '');
  const unmakeable = countingTransform();
  const underAFile = diskCached(join(parent, 'a-file', 'cache'), 'v1', unmakeable.transform);
  expect([underAFile('x', '/src/x.ts').outputText, underAFile('x', '/src/x.ts').outputText]).toEqual(['/src/x.ts:X', '/src/x.ts:X']);
  expect(unmakeable.calls).toHaveLength(2);
});
