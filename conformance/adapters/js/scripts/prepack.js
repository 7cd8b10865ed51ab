// npm pack / npm publish: copy into the package what lives elsewhere in the repository (the
// vectors bundle that lib/node-test.js reads, and the LICENSE), and remove the copies afterwards
// (`--clean`, the postpack step), so the repository keeps one of each.
import { copyFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const COPIES = [
  [here('../../../vectors.bundle.json'), here('../vectors.bundle.json')],
  [here('../../../../LICENSE'), here('../LICENSE')],
];

for (const [from, to] of COPIES) {
  if (process.argv.includes('--clean')) rmSync(to, { force: true });
  else copyFileSync(from, to);
}
