// tools/pipeline/recompress.hpp - rewrite a .untold file's chunk compression without
// touching its content (`untold recompress`).
//
// A raw rewrite: the input is opened and validated (every rule, hash
// included), each chunk's uncompressed payload is re-stored under the new
// policy (kept compressed only when that makes it smaller), and the header,
// the chunk table order, element counts, reserved fields and every chunk -
// unknown core and plugin chunks too - are carried over as they were. The
// content hash is recomputed when the input had one, and the block digests
// (untold.integrity chunk, same block size; the default one for a stale
// chunk) when the input had them, bound to the new content hash. The result
// is opened again and its payloads compared with the input's, byte for byte.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <untold/bytes.hpp>
#include <untold/writer.hpp>

namespace untold::tools {

struct recompress_result {
  std::string error;  // empty on success
  std::vector<std::byte> bytes;
  explicit operator bool() const noexcept { return error.empty(); }
};

[[nodiscard]] recompress_result recompress(byte_span input, const compression_policy& policy);

/// Empty when `a` and `b` are two valid files with the same header (except
/// contentHash), the same chunk rows (except compression, offset and stored
/// size) and byte-identical uncompressed payloads (the untold.integrity
/// chunk, which describes stored bytes, only by type); else what differs.
[[nodiscard]] std::string compare_payloads(byte_span a, byte_span b);

}  // namespace untold::tools
