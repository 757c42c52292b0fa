/**
 * What the function bundles carry from other packages is under a licence that allows shipping
 * it, and every package whose licence asks for its notice to travel with the code (anything but
 * Apache-2.0, whose notices live in NOTICE files, and those packages have none) is named in the
 * package's NOTICE with its copyright line, since the minified bundles keep no legal comments.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { handlerBundleOptions, handlerNames, ROOT } from '../../scripts/bundle-options';

/** Licences whose code may ship inside the bundles. */
const SHIPPABLE = new Set(['Apache-2.0', 'MIT', 'ISC', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD']);

/** The package directory of each node_modules input with bytes in a handler bundle. */
async function bundledPackages(): Promise<Set<string>> {
  const found = new Set<string>();
  for (const name of handlerNames()) {
    const result = await build(handlerBundleOptions(name, { write: false, logLevel: 'silent' }));
    // Every file ships: the handler's module and the chunks it loads on first use. Inputs
    // tree-shaken to nothing are in the metafile too; only what is written ships.
    for (const output of Object.values(result.metafile!.outputs))
      for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
        if (bytesInOutput === 0) continue;
        const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
        if (match) found.add(match[1]);
      }
  }
  return found;
}

test('every bundled package is shippable, and each one not under Apache-2.0 is named in NOTICE with its copyright', async () => {
  const notice = readFileSync(join(ROOT, 'NOTICE'), 'utf8');
  const packages = [...(await bundledPackages())].map((dir) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as { name: string; license?: string };
    const licenceFile = readdirSync(join(ROOT, dir)).find((file) => /^licen[cs]e/i.test(file));
    const copyright = licenceFile ? /^\s*(Copyright .+)$/im.exec(readFileSync(join(ROOT, dir, licenceFile), 'utf8'))?.[1].trim() : undefined;
    return { name: manifest.name, license: manifest.license, copyright };
  });
  // The bundles hold the AWS SDK: a run that found no packages measured nothing.
  expect(packages.map((p) => p.name)).toContain('@aws-sdk/client-dynamodb');

  expect(packages.filter((p) => !SHIPPABLE.has(p.license ?? ''))).toEqual([]);
  const unnamed = packages.filter(
    (p) => p.license !== 'Apache-2.0' && !(notice.includes(p.name) && p.copyright && notice.includes(p.copyright.replace(/^Copyright /, ''))),
  );
  expect(unnamed).toEqual([]);
});
