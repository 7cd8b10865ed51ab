// The TypeScript declarations (types/*.d.ts) declare exactly what each entry point exports, and
// compile under `tsc --strict` as a user imports them (test/types/usage.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

/** Names a declaration file gives values (not types-only declarations). */
function declaredValues(dts) {
  const text = readFileSync(new URL(`../${dts}`, import.meta.url), 'utf8');
  return [...text.matchAll(/^export declare (?:const|function|class) (\w+)/gm)].map((m) => m[1]).sort();
}

for (const [entry, target] of Object.entries(pkg.exports)) {
  if (typeof target !== 'object') continue; // data files, package.json
  test(`${entry}: its declarations name exactly its exports`, async () => {
    const runtime = Object.keys(await import(new URL(`../${target.default}`, import.meta.url))).sort();
    assert.deepEqual(declaredValues(target.types), runtime);
  });
}

test('the declarations compile under tsc --strict as a user imports them', () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  // Throws, with tsc's messages, on any type error.
  execFileSync(process.execPath, [tsc, '-p', 'test/types'], { cwd: root, stdio: 'pipe' });
});
