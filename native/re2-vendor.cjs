// Prints, for binding.gyp, what the addon's copy of RE2 is built from: the RE2 and
// Abseil sources node-re2 vendors and builds itself (`sources`), or their include
// directories (`include_dirs`), so both addons run the same RE2. Sources are relative
// to this directory: gyp's make output cannot name objects of absolute paths.
const path = require('node:path');
const fs = require('node:fs');

const root = path.dirname(require.resolve('re2/package.json'));
const [what] = process.argv.slice(2);
if (what === 'include_dirs') {
  console.log(['vendor/re2', 'vendor/abseil-cpp'].map((dir) => path.join(root, dir)).join('\n'));
} else if (what === 'sources') {
  // binding.gyp is JSON with trailing commas.
  const gyp = JSON.parse(fs.readFileSync(path.join(root, 'binding.gyp'), 'utf8').replace(/,(\s*[\]}])/g, '$1'));
  const sources = gyp.targets.find((target) => target.target_name === 're2').sources.filter((source) => source.startsWith('vendor/'));
  console.log(sources.map((source) => path.relative(__dirname, path.join(root, source))).join('\n'));
} else {
  throw new Error('usage: node re2-vendor.cjs sources|include_dirs');
}
