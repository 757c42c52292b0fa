/**
 * Where the documents must say the same thing as each other and as the packages: docs/README.md's
 * index lists every page of docs/, and the Node.js range a newcomer reads (README.md,
 * CONTRIBUTING.md, docs/DEPLOY.md, docs/COMPATIBILITY.md) quotes the `engines` of both packages,
 * which are one range.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectDocuments, relativeLinks } from '../support/markdown';

const ROOT = join(__dirname, '..', '..');
const documents = projectDocuments(ROOT);
const docsIndex = documents.find((document) => document.name === join('docs', 'README.md'))!;
const engines = (path: string) => (JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as { engines: { node: string } }).engines.node;

test('docs/README.md lists every page under docs/', () => {
  const listed = new Set(relativeLinks(docsIndex).map((link) => join('docs', link.target.split('#')[0])));
  const pages = documents.map((document) => document.name).filter((name) => name.startsWith('docs') && name !== docsIndex.name);
  expect(pages.length).toBeGreaterThan(30);
  expect(pages.filter((page) => !listed.has(page))).toEqual([]);
});

test('both packages ask for the same Node.js range, and the documents a newcomer reads quote it', () => {
  const range = engines('package.json');
  expect(engines(join('packages', 'webhook-inbox-local', 'package.json'))).toBe(range);
  for (const name of ['README.md', 'CONTRIBUTING.md', join('docs', 'DEPLOY.md'), join('docs', 'COMPATIBILITY.md')]) {
    expect({ name, quotesTheRange: documents.find((document) => document.name === name)!.text.includes(`\`${range}\``) }).toEqual({
      name,
      quotesTheRange: true,
    });
  }
});
