/**
 * Every relative link of README.md, CONTRIBUTING.md and docs/ leads somewhere: the file (or
 * folder) it names exists, and an anchor it names (`#section`, in the same document or another
 * Markdown file) is a heading of that document, as GitHub renders headings into anchors.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { anchors, Document, Link, projectDocuments, relativeLinks } from '../support/markdown';

const ROOT = join(__dirname, '..', '..');
const documents = projectDocuments(ROOT);
const links = documents.flatMap(relativeLinks);

/** The anchors of a Markdown file, read once. */
const anchorCache = new Map<string, Set<string>>();
function anchorsOf(path: string): Set<string> {
  if (!anchorCache.has(path)) anchorCache.set(path, anchors(readFileSync(path, 'utf8')));
  return anchorCache.get(path)!;
}

/** What is wrong with a link; undefined when it leads somewhere. */
function problem(link: Link): string | undefined {
  const [pathPart, anchor] = link.target.split('#', 2);
  const target = pathPart === '' ? link.document.path : join(dirname(link.document.path), decodeURI(pathPart));
  if (!existsSync(target)) return `${relative(ROOT, target)} does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!target.endsWith('.md')) return undefined;
  return anchorsOf(target).has(anchor) ? undefined : `${relative(ROOT, target)} has no heading for #${anchor}`;
}

test('the documents hold relative links, to files and to anchors (the extraction works)', () => {
  expect(links.length).toBeGreaterThan(100);
  expect(links.some((link) => link.target.includes('#'))).toBe(true);
});

test('the check finds a missing file and a missing anchor (control)', () => {
  const document: Document = { path: join(ROOT, 'README.md'), name: 'README.md', text: '' };
  expect(problem({ document, line: 1, target: 'docs/NO-SUCH-FILE.md' })).toMatch(/does not exist/);
  expect(problem({ document, line: 1, target: 'docs/DEPLOY.md#no-such-section' })).toMatch(/no heading for #no-such-section/);
  expect(problem({ document, line: 1, target: 'docs/DEPLOY.md#1-install' })).toBeUndefined();
});

test.each(documents.map((document) => [document.name, document] as const))('every relative link of %s leads somewhere', (_name, document) => {
  const broken = relativeLinks(document)
    .map((link) => ({ link, problem: problem(link) }))
    .filter((entry) => entry.problem !== undefined)
    .map(({ link, problem }) => `line ${link.line}: ${link.target}: ${problem}`);
  expect(broken).toEqual([]);
});
