/**
 * docs/LAYOUT.md maps the repository one folder a row. The map is held to the tree git tracks:
 * every folder it names holds tracked files, and every folder under the parents it covers is
 * named, so a folder added, moved or removed fails here until the map says so.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Parents whose every child folder the map must name ('' is the repository root). */
const COVERED_PARENTS = [
  '',
  'lib/',
  'lib/contract/',
  'lambda/',
  'lambda/shared/',
  'cli/',
  'packages/',
  'packages/webhook-inbox-local/',
  'packages/webhook-inbox-local/src/',
  'packages/webhook-inbox-local/test/',
  'test/',
  'docs/',
];

/** Every folder holding a tracked file, at any depth, with a trailing slash. */
function trackedFolders(): Set<string> {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  const folders = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    for (let depth = 1; depth < parts.length; depth += 1) folders.add(`${parts.slice(0, depth).join('/')}/`);
  }
  return folders;
}

/** The folders the map's tables name: the first cell of each row, a path in backticks ending in `/`. */
function mappedFolders(markdown: string): string[] {
  return [...markdown.matchAll(/^\| `([^`]+\/)` \|/gm)].map((match) => match[1]);
}

/** The parent of a folder path (`a/b/` → `a/`, `a/` → ''). */
function parentOf(folder: string): string {
  const trimmed = folder.slice(0, -1);
  const slash = trimmed.lastIndexOf('/');
  return slash < 0 ? '' : trimmed.slice(0, slash + 1);
}

const tracked = trackedFolders();
const mapped = mappedFolders(readFileSync(join(ROOT, 'docs', 'LAYOUT.md'), 'utf8'));

test('the map names folders, each once', () => {
  expect(mapped.length).toBeGreaterThan(COVERED_PARENTS.length);
  expect(mapped.filter((folder, index) => mapped.indexOf(folder) !== index)).toEqual([]);
});

test('every folder the map names holds files git tracks', () => {
  expect(mapped.filter((folder) => !tracked.has(folder))).toEqual([]);
});

test('every folder under a covered parent is in the map', () => {
  const required = [...tracked].filter((folder) => COVERED_PARENTS.includes(parentOf(folder)));
  expect(required.filter((folder) => !mapped.includes(folder)).sort()).toEqual([]);
});

test('the rules read a path the way the tree does', () => {
  expect(parentOf('lib/')).toBe('');
  expect(parentOf('lambda/shared/stores/')).toBe('lambda/shared/');
  expect(mappedFolders('| folder | x |\n| `lib/` | the construct |\n| `lib/x.ts` | a file |')).toEqual(['lib/']);
});
