// untold/io.hpp - files on disk: open a .untold by path, write one safely.
#pragma once

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "asset.hpp"
#include "error.hpp"
#include "reader.hpp"
#include "source.hpp"

#if defined(_WIN32)
#include <io.h>  // _commit, _fileno
#endif

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
  const bool every_byte = verifies_every_byte(options.effective_integrity()) || options.deep_checks;
  auto file = mapped_file::open(path, every_byte ? read_ahead::whole_file : read_ahead::on_demand);
  if (!file && file.error().code == errc::io_empty_file) return open(byte_span{}, options).error();
  if (!file) return file.error();
  auto a = open(file->bytes(), options);
  if (!a) return a.error();
  return mapped_asset{std::move(*file), std::move(*a)};
}

namespace detail {

/// errno after a failed C library call, EIO when the call left it unset.
[[nodiscard]] inline int failed_call_errno() noexcept { return errno != 0 ? errno : EIO; }

/// Flushes `f`'s buffer and then the system's cache of the file to the disk,
/// so that a rename never publishes a file a crash could leave short. 0, or
/// the errno of the step that failed.
[[nodiscard]] inline int flush_to_disk(std::FILE* f) noexcept {
  errno = 0;
  if (std::fflush(f) != 0) return failed_call_errno();
  errno = 0;
#if defined(_WIN32)
  if (::_commit(::_fileno(f)) != 0) return failed_call_errno();
#else
  if (::fsync(::fileno(f)) != 0) return failed_call_errno();
#endif
  return 0;
}

}  // namespace detail

/// Writes the bytes `produce(sink)` passes to `sink(byte_span) -> bool`
/// (in order) to `path`, through the temporary file `path` + ".tmp" in the
/// same directory (an existing one is replaced): written, flushed to the
/// disk and closed, each step checked, then renamed over `path`, so a reader
/// never sees a half-written file. `produce` returns a status. On any
/// failure the temporary file is removed and `path` left as it was; the
/// error is E-IO-OPEN (the temporary file cannot be created) or E-IO-WRITE
/// (a write, the flush, the close or the rename failed) with the OS error
/// number in context.value and context.field "errno" (as source.hpp's I/O
/// errors; "GetLastError" for a failed rename on Windows), or the error
/// `produce` returned when the failure is its own. Streams: nothing is held
/// in memory here, e.g.
///
///   untold::write_file_with(path, [&](auto&& sink) { return builder.write(sink, options); });
template <class Produce>
status write_file_with(const std::filesystem::path& path, Produce&& produce) {
  std::filesystem::path temp = path;
  temp += ".tmp";
  errno = 0;
  std::FILE* f = std::fopen(temp.string().c_str(), "wb");
  if (f == nullptr)
    return detail::source_error(errc::io_open_failed, "errno", static_cast<std::uint64_t>(detail::failed_call_errno()));
  int failure = 0;  // errno of the first failed write, flush or close
  const auto sink = [&](byte_span bytes) {
    errno = 0;
    if (failure == 0 && !bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
      failure = detail::failed_call_errno();
    return failure == 0;
  };
  const status produced = produce(sink);
  if (produced && failure == 0) failure = detail::flush_to_disk(f);
  errno = 0;
  const int close_failure = std::fclose(f) == 0 ? 0 : detail::failed_call_errno();  // a deferred write error shows here
  if (produced && failure == 0) failure = close_failure;
  std::error_code ec;
  if (!produced || failure != 0) {
    std::filesystem::remove(temp, ec);
    if (failure == 0) return produced.error();
    return detail::source_error(errc::io_write_failed, "errno", static_cast<std::uint64_t>(failure));
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) {
#if defined(_WIN32)
    const char* origin = ec.category() == std::generic_category() ? "errno" : "GetLastError";
#else
    const char* origin = "errno";
#endif
    const error failed = detail::source_error(errc::io_write_failed, origin, static_cast<std::uint64_t>(ec.value()));
    std::filesystem::remove(temp, ec);
    return failed;
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
