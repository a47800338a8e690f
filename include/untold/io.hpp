// untold/io.hpp - files on disk: open a .untold by path, write one safely.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "asset.hpp"
#include "error.hpp"
#include "reader.hpp"
#include "source.hpp"

namespace untold {

/// An asset together with the mapped file it views.
struct mapped_asset {
  mapped_file file;
  untold::asset asset;
};

/// Maps `path` read-only and opens it with untold::open. Missing or unreadable
/// files give E-IO-* errors; an empty or too-short file gives R-TRUNC-HEADER,
/// exactly as untold::open on the same bytes (one error for one condition).
/// The whole file is read ahead only when every byte is about to be read
/// (integrity::full or the deep checks); otherwise pages load as views touch
/// them. (A lazy open of a file without block digests hashes every byte
/// too, but whether the file has them is known only once it is mapped.)
template <class = void>
result<mapped_asset> open_file(const std::filesystem::path& path, const open_options& options = {}) {
  const bool every_byte = options.effective_integrity() == integrity::full || options.deep_checks;
  auto file = mapped_file::open(path, every_byte ? read_ahead::whole_file : read_ahead::on_demand);
  if (!file && file.error().code == errc::io_empty_file) return open(byte_span{}, options).error();
  if (!file) return file.error();
  auto a = open(file->bytes(), options);
  if (!a) return a.error();
  return mapped_asset{std::move(*file), std::move(*a)};
}

/// Writes the bytes `produce(sink)` passes to `sink(byte_span) -> bool`
/// (in order) to `path`, through a temporary file in the same directory and
/// a rename, so readers never see a half-written file. `produce` returns a
/// status; on any failure the temporary file is removed and `path` left
/// as it was. Streams: nothing is held in memory here, e.g.
///
///   untold::write_file_with(path, [&](auto&& sink) { return builder.write(sink, options); });
template <class Produce>
status write_file_with(const std::filesystem::path& path, Produce&& produce) {
  const std::filesystem::path temp = path.string() + ".tmp";
  std::FILE* f = std::fopen(temp.string().c_str(), "wb");
  if (f == nullptr) return make_error(errc::io_open_failed, {.field = "path"});
  bool written = true;
  const auto sink = [&](byte_span bytes) {
    written = written && (bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
    return written;
  };
  const status produced = produce(sink);
  const bool closed = std::fclose(f) == 0;
  std::error_code ec;
  if (!produced || !written || !closed) {
    std::filesystem::remove(temp, ec);
    if (!produced && written) return produced.error();
    return make_error(errc::io_write_failed, {.field = "write"});
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    return make_error(errc::io_write_failed, {.field = "rename"});
  }
  return {};
}

/// Writes `bytes` to `path` (write_file_with).
inline status write_file(const std::filesystem::path& path, byte_span bytes) {
  return write_file_with(path, [bytes](auto&& sink) -> status {
    if (!sink(bytes)) return make_error(errc::io_write_failed, {.field = "write"});
    return {};
  });
}

}  // namespace untold
