/**
 * Functions and files past the project's size limits: a function (declaration, method, accessor,
 * constructor, arrow or function expression) over `MAX_FUNCTION_LINES` lines, a source file over
 * `MAX_FILE_LINES`. Reads the files git tracks (what the build generates is never tracked), with
 * the TypeScript compiler's own parser, so a line count is a node's, not a regular expression's.
 *
 * `ts-node --transpile-only -P tsconfig.dev.json scripts/code-size.ts [folder ...]` prints what is
 * over (every folder of `CHECKED` without arguments) and the largest function and file, and exits 1
 * when anything is over. `test/package/code-size.test.ts` holds the same limits over `CHECKED`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';

export const MAX_FUNCTION_LINES = 120;
export const MAX_FILE_LINES = 450;

/** The product's code: the construct, the handlers, the ops CLI, and the twin's. */
export const CHECKED: readonly string[] = ['lib', 'lambda', 'cli', 'packages/webhook-inbox-local/src'];

const ROOT = join(__dirname, '..');
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
/** Declarations jsii writes beside lib/*.ts are ignored by git, but a checkout may hold them untracked. */
const GENERATED = /\.d\.ts$/;

/** One function's span. */
export interface FunctionSize {
  readonly file: string;
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

/** One file's length. */
export interface FileSize {
  readonly file: string;
  readonly lines: number;
}

/** The tracked source files under `folders`, relative to the repository root. */
export function trackedSources(folders: readonly string[]): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--', ...folders], { cwd: ROOT, encoding: 'utf8' });
  return listed
    .split('\0')
    .filter((file) => SOURCE.test(file) && !GENERATED.test(file))
    .sort();
}

/** A function's name as a reader finds it: its own, its variable's or property's, else `<anonymous>`. */
function nameOf(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name !== undefined) return node.name.getText(source);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name !== undefined) {
    return parent.name.getText(source);
  }
  return '<anonymous>';
}

/** Every function in one file with its length in lines, from its first token to its last. */
export function functionSizes(file: string, text: string = readFileSync(join(ROOT, file), 'utf8')): FunctionSize[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const sizes: FunctionSize[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      sizes.push({ file, name: nameOf(node, source), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sizes;
}

/** One file's length in lines (a final newline ends the last line, it does not start another). */
export function fileSize(file: string, text: string = readFileSync(join(ROOT, file), 'utf8')): FileSize {
  return { file, lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) };
}

/** What is over the limits under `folders`, and the largest of each kind. */
export function measure(folders: readonly string[]) {
  const files = trackedSources(folders);
  const functions = files.flatMap((file) => functionSizes(file)).sort((a, b) => b.lines - a.lines);
  const lengths = files.map((file) => fileSize(file)).sort((a, b) => b.lines - a.lines);
  return {
    longFunctions: functions.filter((size) => size.lines > MAX_FUNCTION_LINES),
    longFiles: lengths.filter((size) => size.lines > MAX_FILE_LINES),
    largestFunction: functions[0] as FunctionSize | undefined,
    largestFile: lengths[0] as FileSize | undefined,
  };
}

if (require.main === module) {
  const folders = process.argv.length > 2 ? process.argv.slice(2) : CHECKED;
  const { longFunctions, longFiles, largestFunction, largestFile } = measure(folders);
  for (const size of longFunctions) console.log(`function ${size.lines} lines > ${MAX_FUNCTION_LINES}: ${size.file}:${size.line} ${size.name}`);
  for (const size of longFiles) console.log(`file ${size.lines} lines > ${MAX_FILE_LINES}: ${size.file}`);
  if (largestFunction) console.log(`largest function: ${largestFunction.lines} lines, ${largestFunction.file}:${largestFunction.line} ${largestFunction.name}`);
  if (largestFile) console.log(`largest file: ${largestFile.lines} lines, ${largestFile.file}`);
  process.exitCode = longFunctions.length + longFiles.length > 0 ? 1 : 0;
}
