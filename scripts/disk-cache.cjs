/**
 * The entries of the caches the tools keep under node_modules/.cache/cdk-webhook-inbox: the
 * templates the tests synthesize (test/support/template-cache.ts) and the files ts-node
 * transpiles (scripts/transpile.cjs). An entry is a JSON file named by a digest of what made it,
 * read and written by processes running side by side.
 */
'use strict';
const { createHash } = require('node:crypto');
const { readFileSync, renameSync, writeFileSync } = require('node:fs');
const { resolve } = require('node:path');

/** The folder the caches share: under node_modules, which `npm ci` empties. */
const CACHE_ROOT = resolve(__dirname, '..', 'node_modules', '.cache', 'cdk-webhook-inbox');

/** A short digest of `parts` (strings or bytes), each ended by a NUL so that no two lists of parts run together. */
const digest = (...parts) =>
  parts
    .reduce((hash, part) => hash.update(part).update('\0'), createHash('sha256'))
    .digest('hex')
    .slice(0, 32);

/** The value kept in `file`; undefined when there is none, or one that cannot be read or parsed, which is then made again and written over. */
function readEntry(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Keeps `value` in `file`, written aside and then renamed: a reader in another process sees the whole entry or none. */
function writeEntry(file, value) {
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, JSON.stringify(value));
  renameSync(partial, file);
}

module.exports = { CACHE_ROOT, digest, readEntry, writeEntry };
