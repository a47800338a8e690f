// tools/pipeline/files.cpp - see files.hpp.
#include "files.hpp"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <system_error>

#include <untold/io.hpp>

#include "inspect.hpp"

namespace untold::tools {

std::string quote_path(const std::string& path) {
  if (path == "-") return "standard input";
  std::string quoted = "'";  // appended: "'" + std::string(...) trips GCC 12's -Wrestrict at -O3
  quoted.append(escaped(path)).append("'");
  return quoted;
}

std::string system_reason(std::uint64_t os_error) {
  return std::system_category().message(static_cast<int>(os_error));
}

namespace {

/// The message of a failed write_file(_with) to `path`: the system's reason
/// when the error carries an OS error number, else the error itself.
write_failure failure(const char* verb, const std::filesystem::path& path, const error& e) {
  const std::string reason = e.context.has_value ? system_reason(e.context.value) : e.describe();
  return {e, std::string(verb) + " " + quote_path(path.string()) + ": " + reason};
}

/// errno after a failed C library call (EIO when it left none), as an error's value.
std::uint64_t last_errno() { return static_cast<std::uint64_t>(untold::detail::failed_call_errno()); }

}  // namespace

std::optional<write_failure> write_output(const std::filesystem::path& path, byte_span bytes) {
  if (const status s = write_file(path, bytes); !s) return failure("cannot write", path, s.error());
  return std::nullopt;
}

std::optional<write_failure> copy_output(const std::filesystem::path& from, const std::filesystem::path& to) {
  errno = 0;
  std::FILE* in = std::fopen(from.string().c_str(), "rb");
  if (in == nullptr)
    return failure("cannot read", from, untold::detail::source_error(errc::io_open_failed, "errno", last_errno()));
  bool read_failed = false;
  const status s = write_file_with(to, [&](auto&& sink) -> status {
    std::byte chunk[1 << 16];
    for (;;) {
      errno = 0;
      const std::size_t n = std::fread(chunk, 1, sizeof chunk, in);
      if (n != 0 && !sink(byte_span(chunk, n))) return make_error(errc::io_write_failed);  // carries errno in its place
      if (n == sizeof chunk) continue;
      if (std::ferror(in) == 0) return {};
      read_failed = true;
      return untold::detail::source_error(errc::io_read_failed, "errno", last_errno());
    }
  });
  std::fclose(in);
  if (!s) return read_failed ? failure("cannot read", from, s.error()) : failure("cannot write", to, s.error());
  return std::nullopt;
}

std::optional<std::vector<std::byte>> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return std::nullopt;
  in.seekg(0);
  std::vector<std::byte> out(static_cast<std::size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(out.data()), size)) return std::nullopt;
  return out;
}

}  // namespace untold::tools
