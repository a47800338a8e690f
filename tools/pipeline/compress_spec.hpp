// tools/pipeline/compress_spec.hpp - the `--compress` argument of the untold tool.
//
//   none | lz4 | lz4hc[:N] | zstd[:N] | meshopt | meshopt+zstd[:N]
//
// lz4hc levels are 1..12 (default 9), zstd levels 1..22 (default: zstd's
// own default). The result is one untold::chunk_compression that the tool
// applies to metadata and geometry alike; the meshopt ones reach vertex and
// index data only (compression_policy::for_chunk: meshopt leaves the other
// chunks uncompressed, meshopt+zstd stores them as zstd at that level).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <untold/writer.hpp>

namespace untold::tools {

/// Parses a --compress value; nullopt (with `error` filled) when malformed.
[[nodiscard]] std::optional<chunk_compression> parse_compression(std::string_view spec, std::string& error);

/// A policy that stores every chunk (metadata and data) with `c`.
[[nodiscard]] compression_policy uniform_policy(chunk_compression c);

/// "none", "lz4", "lz4hc:9", "zstd", "zstd:19", "meshopt", "meshopt+zstd:19".
[[nodiscard]] std::string describe_compression(chunk_compression c);

}  // namespace untold::tools
