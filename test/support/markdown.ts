/**
 * The project's Markdown as the documentation tests read it: every document (README.md,
 * CONTRIBUTING.md and docs/), its fenced code blocks with their language and line, its relative
 * links, and the anchors its headings make (GitHub's rule: lower-cased, punctuation dropped,
 * spaces to hyphens, repeats numbered).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface Document {
  /** Absolute path. */
  readonly path: string;
  /** Path from the repository root, for messages. */
  readonly name: string;
  readonly text: string;
}

export interface CodeBlock {
  readonly document: Document;
  readonly language: string;
  /** The line of the opening fence (1-based). */
  readonly line: number;
  readonly code: string;
}

export interface Link {
  readonly document: Document;
  readonly line: number;
  readonly target: string;
}

/** README.md, CONTRIBUTING.md and every Markdown file under docs/, in a stable order. */
export function projectDocuments(root: string): Document[] {
  const paths = [join(root, 'README.md'), join(root, 'CONTRIBUTING.md'), ...markdownUnder(join(root, 'docs'))];
  return paths.map((path) => ({ path, name: relative(root, path), text: readFileSync(path, 'utf8') }));
}

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => (entry.isDirectory() ? markdownUnder(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : []));
}

/** The fenced code blocks of a document (```lang … ```). */
export function codeBlocks(document: Document): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = document.text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const open = /^```(\S*)\s*$/.exec(lines[index]);
    if (!open) continue;
    const end = lines.findIndex((line, at) => at > index && /^```\s*$/.test(line));
    if (end < 0) throw new Error(`${document.name}:${index + 1}: a code fence that is never closed`);
    blocks.push({ document, language: open[1], line: index + 1, code: lines.slice(index + 1, end).join('\n') });
    index = end;
  }
  return blocks;
}

/** The text of a document outside its code blocks and inline code, line by line (links in code are not links). */
function proseLines(document: Document): string[] {
  let fenced = false;
  return document.text.split('\n').map((line) => {
    if (/^```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, '');
  });
}

/** The relative links of a document's prose (`[text](target)`), not web or mail addresses. */
export function relativeLinks(document: Document): Link[] {
  const links: Link[] = [];
  proseLines(document).forEach((line, index) => {
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1];
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push({ document, line: index + 1, target });
    }
  });
  return links;
}

/** The anchors of a document's headings, as GitHub renders them, plus explicit `<a id>` / `<a name>` anchors. */
export function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(match[1]);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]
      .replace(/<[^>]+>/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return found;
}
