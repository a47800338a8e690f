// node gltf_validate.js VALIDATOR_PREFIX DIR
// Runs the Khronos glTF-Validator (npm package gltf-validator, installed by
// scripts/install-deps.sh under VALIDATOR_PREFIX/node_modules) over every
// .glb and .gltf under DIR and prints, per file, its error / warning / info
// counts and every error. Exit 0 when no file has an error, 1 when one has,
// 77 (ctest's SKIP_RETURN_CODE) when the validator is not installed.
'use strict';
const fs = require('fs');
const path = require('path');

const [prefix, dir] = process.argv.slice(2);
let validator;
try {
  validator = require(path.join(prefix, 'node_modules', 'gltf-validator'));
} catch (e) {
  console.log(`skipped: gltf-validator is not installed under ${prefix} (scripts/install-deps.sh installs it)`);
  process.exit(77);
}

function files(d) {
  return fs.readdirSync(d, {withFileTypes: true}).flatMap((e) => {
    const p = path.join(d, e.name);
    if (e.isDirectory()) return files(p);
    return /\.(glb|gltf)$/.test(e.name) ? [p] : [];
  }).sort();
}

(async () => {
  const all = files(dir);
  if (all.length === 0) {
    console.log(`no .glb or .gltf files under ${dir}`);
    process.exit(1);
  }
  let failed = 0;
  for (const file of all) {
    const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)), {
      uri: path.basename(file),
      maxIssues: 0,
      externalResourceFunction: (uri) => new Promise((resolve, reject) => {
        fs.readFile(path.join(path.dirname(file), decodeURIComponent(uri)),
                    (err, data) => err ? reject(err.toString()) : resolve(new Uint8Array(data)));
      }),
    });
    const i = report.issues;
    console.log(`${path.relative(dir, file)}: ${i.numErrors} errors, ${i.numWarnings} warnings, ${i.numInfos} infos`);
    for (const m of i.messages) {
      if (m.severity === 0 || process.env.UNTOLD_GLTF_VALIDATOR_VERBOSE)
        console.log(`  [${m.severity === 0 ? 'error' : m.severity === 1 ? 'warning' : 'info'}] ${m.code} ${m.pointer || ''}: ${m.message}`);
    }
    if (i.numErrors > 0) ++failed;
  }
  console.log(`${all.length} files, ${failed} with errors`);
  process.exit(failed === 0 ? 0 : 1);
})();
