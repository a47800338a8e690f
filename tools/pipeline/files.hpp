// tools/pipeline/files.hpp - the files the tools write, and how a message
// names a file. Every output file (cook, tiles, build, recompress, pak, udm
// convert, stream-sim's plot) goes through write_output, which is the
// library's atomic untold::write_file with the path and the system's reason
// in its message.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <untold/bytes.hpp>
#include <untold/error.hpp>

namespace untold::tools {

/// "'path'" for messages, the path escaped (a file name may hold a newline
/// or ESC); "standard input" for "-".
[[nodiscard]] std::string quote_path(const std::string& path);

/// The system's reason for an OS error number ("No such file or directory").
[[nodiscard]] std::string system_reason(std::uint64_t os_error);

/// A failed write: the library's error (E-IO-OPEN, E-IO-READ or E-IO-WRITE,
/// the OS error number in context.value when there is one) and the sentence
/// for people, "cannot write 'PATH': <the system's reason>".
struct write_failure {
  error cause;
  std::string message;
};

/// Writes `bytes` to `path` with untold::write_file: a temporary file beside
/// it, flushed to the disk and closed, then renamed over `path`; on any
/// failure the temporary file is removed and `path` left as it was.
/// nullopt on success.
[[nodiscard]] std::optional<write_failure> write_output(const std::filesystem::path& path, byte_span bytes);

/// Copies the file `from` to `to` the same way, streamed (never whole in
/// memory). A read failure is "cannot read 'FROM': <reason>".
[[nodiscard]] std::optional<write_failure> copy_output(const std::filesystem::path& from,
                                                       const std::filesystem::path& to);

/// A whole file's bytes; nullopt when it cannot be opened or read.
[[nodiscard]] std::optional<std::vector<std::byte>> read_file_bytes(const std::filesystem::path& path);

}  // namespace untold::tools
