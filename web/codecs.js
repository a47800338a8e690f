// web/codecs.js - the decoders behind the module's codec hook
// (include/untold/compression.hpp, UNTOLD_EXTERNAL_CODECS): WebAssembly has
// no liblz4 or libzstd, so the module asks this page for lz4 and zstd chunks.
//   zstd: fzstd (npm, pinned in scripts/install-deps.sh; fzstd.js beside this file).
//   lz4:  the strict raw-block decoder below (a block is a few lines of
//         format; the npm decoders accept blocks liblz4 refuses, such as a
//         match reaching before the output's start, and would turn them into
//         zeros instead of an error).
// decode() returns 0 when `stored` decodes to exactly outSize bytes (prefix:
// at least outSize, the first outSize written), else 1, and never writes
// outside out..out+outSize: the contract of untold_external_decode.
"use strict";
var untoldCodecs = (function () {
  const LZ4 = 1, ZSTD = 2;
  const ZSTD_MAGIC = 0xfd2fb528;

  // A raw LZ4 block (lz4's Block_format.md): sequences of literals then a
  // match; the last sequence is literals only and ends exactly at the end of
  // the input. Returns the bytes produced, or -1 when the block is malformed
  // or would produce more than dst.length (prefix: stops once dst is full).
  function lz4Block(src, dst, prefix) {
    let s = 0, d = 0;
    const end = src.length, cap = dst.length;
    if (end === 0) return -1;
    const length = (base) => {
      let n = base;
      if (base === 15) {
        for (;;) {
          if (s >= end) return -1;
          const b = src[s++];
          n += b;
          if (b !== 255) break;
        }
      }
      return n;
    };
    for (;;) {
      const token = src[s++];
      const literals = length(token >> 4);
      if (literals < 0 || literals > end - s) return -1;
      if (literals > cap - d) {
        if (!prefix) return -1;
        dst.set(src.subarray(s, s + (cap - d)), d);
        return cap;
      }
      dst.set(src.subarray(s, s + literals), d);
      s += literals;
      d += literals;
      if (s === end) return d;  // the last sequence: literals only
      if (end - s < 2) return -1;
      const offset = src[s] | (src[s + 1] << 8);
      s += 2;
      if (offset === 0 || offset > d) return -1;
      let match = length(token & 15);
      if (match < 0) return -1;
      match += 4;
      if (s >= end) return -1;  // a match is always followed by another sequence
      if (match > cap - d) {
        if (!prefix) return -1;
        match = cap - d;
      }
      for (let i = 0; i < match; ++i, ++d) dst[d] = dst[d - offset];  // overlapping copies repeat
      if (d === cap && prefix) return d;
    }
  }

  function decodeZstd(src, outSize, prefix) {
    if (src.length < 4 || ((src[0] | (src[1] << 8) | (src[2] << 16) | (src[3] << 24)) >>> 0) !== ZSTD_MAGIC) return null;
    let whole;
    try {
      whole = fzstd.decompress(src);
    } catch (e) {
      return null;  // corrupt, or a declared size too large to allocate
    }
    if (prefix ? whole.length < outSize : whole.length !== outSize) return null;
    return whole.subarray(0, outSize);
  }

  // heap: the module's HEAPU8 (fresh: memory growth replaces it).
  function decode(heap, method, stored, storedSize, out, outSize, prefix) {
    const src = heap.slice(stored, stored + storedSize);  // a copy: decoding never aliases the heap
    const dst = heap.subarray(out, out + outSize);
    if (method === LZ4) {
      const produced = lz4Block(src, dst, prefix !== 0);
      return produced === outSize ? 0 : 1;
    }
    if (method === ZSTD) {
      const bytes = decodeZstd(src, outSize, prefix !== 0);
      if (bytes === null) return 1;
      dst.set(bytes);
      return 0;
    }
    return 1;
  }

  return { decode: decode, lz4Block: lz4Block };
})();
