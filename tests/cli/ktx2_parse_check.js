// node ktx2_parse_check.js NPM_PREFIX DIR
// Reads every KTX2 file that textures.compress (texture_compress_check.cpp)
// listed in DIR/expect.json with ktx-parse (npm, installed by
// scripts/install-deps.sh under NPM_PREFIX/node_modules): an independent
// KTX2 reader. Each file must parse and have the listed vkFormat,
// supercompression scheme, DFD colour model and transfer function, size
// and level count; every level must lie inside the file; UASTC levels must
// hold 16 bytes per 4x4 block uncompressed; BasisLZ files must carry one
// global-data image description per level. Exit 0 when all match, 1 when
// one does not, 77 (ctest's SKIP_RETURN_CODE) when ktx-parse or the files
// are not there.
'use strict';
const fs = require('fs');
const path = require('path');
const url = require('url');

const [prefix, dir] = process.argv.slice(2);
const expectFile = path.join(dir, 'expect.json');

(async () => {
  let ktx;
  try {
    const entry = require.resolve('ktx-parse', {paths: [path.join(prefix, 'node_modules')]});
    ktx = await import(url.pathToFileURL(entry).href);
  } catch (e) {
    console.log(`skipped: ktx-parse is not installed under ${prefix} (scripts/install-deps.sh installs it)`);
    process.exit(77);
  }
  if (!fs.existsSync(expectFile)) {
    console.log(`skipped: no ${expectFile} (textures.compress was skipped: no Basis Universal encoder)`);
    process.exit(77);
  }
  const expected = JSON.parse(fs.readFileSync(expectFile, 'utf8'));
  if (expected.length === 0) {
    console.log(`${expectFile} lists no file`);
    process.exit(1);
  }
  let failed = 0;
  for (const want of expected) {
    const problems = [];
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, want.file)));
    let c;
    try {
      c = ktx.read(bytes);
    } catch (e) {
      problems.push(`ktx-parse cannot read it: ${e.message}`);
    }
    if (c) {
      const dfd = c.dataFormatDescriptor[0];
      const got = {
        vkFormat: c.vkFormat,
        supercompressionScheme: c.supercompressionScheme,
        colorModel: dfd.colorModel,
        transferFunction: dfd.transferFunction,
        width: c.pixelWidth,
        height: c.pixelHeight,
        levels: c.levels.length,
      };
      for (const [k, v] of Object.entries(got))
        if (v !== want[k]) problems.push(`${k} ${v}, expected ${want[k]}`);
      c.levels.forEach((level, i) => {
        if (level.levelData.byteLength === 0) problems.push(`level ${i} is empty`);
        const w = Math.max(1, c.pixelWidth >> i), h = Math.max(1, c.pixelHeight >> i);
        if (dfd.colorModel === ktx.KHR_DF_MODEL_UASTC) {
          const size = Math.ceil(w / 4) * Math.ceil(h / 4) * 16;
          if (level.uncompressedByteLength !== size)
            problems.push(`level ${i} uncompressed ${level.uncompressedByteLength} bytes, expected ${size}`);
        }
      });
      if (c.supercompressionScheme === ktx.KHR_SUPERCOMPRESSION_BASISLZ) {
        const images = c.globalData ? c.globalData.imageDescs.length : 0;
        if (images !== c.levels.length) problems.push(`BasisLZ global data has ${images} image descriptions, expected ${c.levels.length}`);
      }
      console.log(`${want.file}: vkFormat ${got.vkFormat}, scheme ${got.supercompressionScheme}, model ${got.colorModel}, ` +
                  `transfer ${got.transferFunction}, ${got.width}x${got.height}, ${got.levels} levels, ${bytes.length} bytes`);
    }
    for (const p of problems) console.log(`  FAIL: ${p}`);
    if (problems.length > 0) ++failed;
  }
  console.log(failed === 0 ? `ok: ${expected.length} files read by ktx-parse` : `${failed} of ${expected.length} files failed`);
  process.exit(failed === 0 ? 0 : 1);
})();
