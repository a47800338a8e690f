// web/codecs.js - the decoders behind the module's codec hook
// (include/untold/compression.hpp, UNTOLD_EXTERNAL_CODECS): WebAssembly has
// no liblz4 or libzstd, so the module asks this page for lz4 and zstd chunks.
//   zstd: fzstd (npm, pinned in scripts/install-deps.sh; fzstd.js beside this file).
//   lz4:  the strict raw-block decoder below (a block is a few lines of
//         format; the npm decoders accept blocks liblz4 refuses, such as a
//         match reaching before the output's start, and would turn them into
//         zeros instead of an error).
// decode() returns 0 when `stored` decodes to exactly `size` bytes (outSize
// < size: to at least outSize, the first outSize written), else 1, and never
// writes outside out..out+outSize: the contract of untold_external_decode.
"use strict";
var untoldCodecs = (function () {
  const LZ4 = 1, ZSTD = 2;
  const ZSTD_MAGIC = 0xfd2fb528;
  const calls = { exact: 0, prefix: 0 };  // what the module asked for (the tests read it)

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

  // The frame header's content size (null when the frame does not declare
  // it) and window size (RFC 8878 3.1.1.1), read before fzstd allocates either.
  function zstdFrameSizes(src) {
    if (src.length < 6) return null;
    const fhd = src[4], single = (fhd >> 5) & 1, fcsFlag = fhd >> 6;
    let at = 5, windowSize = 0;
    if (!single) {
      const wd = src[at++], base = 2 ** (10 + (wd >> 3));
      windowSize = base + (base / 8) * (wd & 7);
    }
    at += [0, 1, 2, 4][fhd & 3];  // dictionary id
    const fcsBytes = fcsFlag === 0 ? single : 1 << fcsFlag;
    if (src.length < at + fcsBytes) return null;
    let content = null;
    if (fcsBytes) {
      content = 0;
      for (let i = fcsBytes - 1; i >= 0; --i) content = content * 256 + src[at + i];
      if (fcsBytes === 2) content += 256;
    }
    return { content, window: single ? content : windowSize };
  }

  // Exactly one frame that decodes to `size` bytes (outSize < size: at least
  // outSize of them). fzstd allocates the frame's content size (or its window
  // when the size is not declared): refused above the chunk's declared size
  // (a window: above max(size, 8 MiB)), so a small file cannot make it
  // allocate more than the reader's limits allowed for the chunk.
  function decodeZstd(src, outSize, size) {
    if (src.length < 4 || ((src[0] | (src[1] << 8) | (src[2] << 16) | (src[3] << 24)) >>> 0) !== ZSTD_MAGIC) return null;
    const sizes = zstdFrameSizes(src);
    if (!sizes) return null;
    if (sizes.content !== null ? sizes.content !== size : sizes.window > Math.max(size, 8 << 20)) return null;
    let whole;
    try {
      whole = fzstd.decompress(src);
    } catch (e) {
      return null;  // corrupt
    }
    if (outSize < size ? whole.length < outSize : whole.length !== size) return null;
    return whole.subarray(0, outSize);
  }

  // heap: the module's HEAPU8 (fresh: memory growth replaces it). size: the
  // chunk's declared size; outSize < size asks for a prefix (compression.hpp).
  function decode(heap, method, stored, storedSize, out, outSize, size) {
    ++calls[outSize < size ? "prefix" : "exact"];
    const src = heap.slice(stored, stored + storedSize);  // a copy: decoding never aliases the heap
    const dst = heap.subarray(out, out + outSize);
    if (method === LZ4) return lz4Block(src, dst, outSize < size) === outSize ? 0 : 1;
    if (method === ZSTD) {
      const bytes = decodeZstd(src, outSize, size);
      if (bytes === null) return 1;
      dst.set(bytes);
      return 0;
    }
    return 1;
  }

  return { decode: decode, calls: calls };
})();
