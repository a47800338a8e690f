// untold/source.hpp - where file bytes come from.
//
//   mapped_file        the whole file as one read-only byte_span (mmap /
//                      MapViewOfFile); the fast path for local files.
//   range_source       an interface for "give me bytes [offset, offset+n)",
//                      so a reader can fetch only the ranges it needs (a
//                      metadata prefix, then single chunks) from a file, a
//                      network cache or memory; a source holding the file in
//                      memory also lends views (no copy).
//   memory_range_source / file_range_source   its two stock implementations
//                      (file_range_source maps the file and lends views by
//                      default; file_access::pread reads instead).
//   read_file          the whole file into a vector.
//
// I/O errors carry the OS error number (errno / GetLastError) in
// error.context.value with context.field naming its origin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "bytes.hpp"
#include "error.hpp"

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#define UNTOLD_DETAIL_UNDEF_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#define UNTOLD_DETAIL_UNDEF_NOMINMAX
#endif
#include <windows.h>
#ifdef UNTOLD_DETAIL_UNDEF_LEAN_AND_MEAN
#undef WIN32_LEAN_AND_MEAN
#undef UNTOLD_DETAIL_UNDEF_LEAN_AND_MEAN
#endif
#ifdef UNTOLD_DETAIL_UNDEF_NOMINMAX
#undef NOMINMAX
#undef UNTOLD_DETAIL_UNDEF_NOMINMAX
#endif
#else
#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#endif

namespace untold {

namespace detail {

/// Whether a file size is addressable in this process (always true on 64-bit
/// targets; written so compilers do not flag an always-false comparison).
[[nodiscard]] constexpr bool fits_in_size_t(std::uint64_t v) noexcept {
  if constexpr (sizeof(std::size_t) < sizeof(std::uint64_t)) {
    return v <= std::numeric_limits<std::size_t>::max();
  } else {
    (void)v;
    return true;
  }
}

[[nodiscard]] inline error source_error(errc code, const char* field, std::uint64_t value) noexcept {
  error_context ctx;
  ctx.field = field;
  ctx.value = value;
  ctx.has_value = true;
  return make_error(code, ctx);
}

#if defined(_WIN32)
[[nodiscard]] inline error last_os_error(errc code) noexcept {
  return source_error(code, "GetLastError", static_cast<std::uint64_t>(::GetLastError()));
}

/// Owns a HANDLE; closes it on scope exit.
class win_handle {
 public:
  explicit win_handle(HANDLE h = nullptr) noexcept : h_(h) {}
  win_handle(win_handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  win_handle& operator=(win_handle&& o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  win_handle(const win_handle&) = delete;
  win_handle& operator=(const win_handle&) = delete;
  ~win_handle() {
    if (h_ != nullptr && h_ != INVALID_HANDLE_VALUE) ::CloseHandle(h_);
  }
  [[nodiscard]] HANDLE get() const noexcept { return h_; }

 private:
  HANDLE h_;
};

/// Opens an existing file for reading and returns it with its size; rejects
/// empty files. Directories fail in CreateFileW (no BACKUP_SEMANTICS flag).
[[nodiscard]] inline result<std::pair<win_handle, std::uint64_t>> open_readable(const std::filesystem::path& path,
                                                                              DWORD flags) noexcept {
  win_handle file(::CreateFileW(path.c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, flags, nullptr));
  if (file.get() == INVALID_HANDLE_VALUE) return last_os_error(errc::io_open_failed);
  if (::GetFileType(file.get()) != FILE_TYPE_DISK) return source_error(errc::io_open_failed, "GetFileType", 0);
  LARGE_INTEGER size{};
  if (!::GetFileSizeEx(file.get(), &size)) return last_os_error(errc::io_open_failed);
  if (size.QuadPart <= 0) return make_error(errc::io_empty_file);
  return std::pair<win_handle, std::uint64_t>(std::move(file), static_cast<std::uint64_t>(size.QuadPart));
}
#else
[[nodiscard]] inline error last_os_error(errc code) noexcept {
  return source_error(code, "errno", static_cast<std::uint64_t>(errno));
}

/// Owns a file descriptor; closes it on scope exit.
class posix_fd {
 public:
  explicit posix_fd(int fd = -1) noexcept : fd_(fd) {}
  posix_fd(posix_fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  posix_fd& operator=(posix_fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  posix_fd(const posix_fd&) = delete;
  posix_fd& operator=(const posix_fd&) = delete;
  ~posix_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const noexcept { return fd_; }

 private:
  int fd_;
};

/// Opens an existing regular file read-only and returns it with its size;
/// rejects directories and other non-regular files (io_open_failed) and
/// empty files (io_empty_file).
[[nodiscard]] inline result<std::pair<posix_fd, std::uint64_t>> open_readable(
    const std::filesystem::path& path) noexcept {
  int flags = O_RDONLY;
#ifdef O_CLOEXEC
  flags |= O_CLOEXEC;  // never leak the descriptor into a child process
#endif
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return last_os_error(errc::io_open_failed);
  posix_fd file(fd);
  struct stat st {};
  if (::fstat(file.get(), &st) != 0) return last_os_error(errc::io_open_failed);
  // open(2) succeeds on a directory with O_RDONLY; report it like open would.
  if (S_ISDIR(st.st_mode)) return source_error(errc::io_open_failed, "errno", EISDIR);
  // FIFOs and devices have no meaningful size to map or range-read.
  if (!S_ISREG(st.st_mode)) return source_error(errc::io_open_failed, "st_mode", static_cast<std::uint64_t>(st.st_mode));
  if (st.st_size <= 0) return make_error(errc::io_empty_file);
  return std::pair<posix_fd, std::uint64_t>(std::move(file), static_cast<std::uint64_t>(st.st_size));
}
#endif

}  // namespace detail

/// How mapped_file::open hints the OS about reading the file.
enum class read_ahead : std::uint8_t {
  on_demand,   // pages come in as they are touched (the default: open cost flat in file size)
  whole_file,  // read everything ahead (POSIX_MADV_WILLNEED / FILE_FLAG_SEQUENTIAL_SCAN)
};

/// A whole file mapped read-only. RAII, move-only.
///
/// The mapping reflects the file on disk: if another process truncates the
/// file while it is mapped, touching the lost pages raises SIGBUS (POSIX) or
/// an access violation (Windows); use file_range_source::open(path,
/// file_access::pread) where that matters.
class mapped_file {
 public:
  /// Maps `path` read-only. `hint` = read_ahead::whole_file asks the OS to
  /// read the whole file ahead (right when every byte is about to be used,
  /// e.g. to verify the content hash); on_demand (the default) leaves paging
  /// to the access pattern, so the cost of open does not grow with the file.
  /// Errors: io_open_failed (missing, unreadable, a directory or not a regular
  /// file, mapping failed; context.value = errno / GetLastError),
  /// io_empty_file (size 0). A file too short to be .untold still maps: that
  /// is the reader's R-TRUNC-HEADER. Safe with any path.
  [[nodiscard]] static result<mapped_file> open(const std::filesystem::path& path,
                                                read_ahead hint = read_ahead::on_demand) noexcept {
#if defined(_WIN32)
    auto opened = detail::open_readable(
        path, hint == read_ahead::whole_file ? FILE_ATTRIBUTE_NORMAL | FILE_FLAG_SEQUENTIAL_SCAN : FILE_ATTRIBUTE_NORMAL);
#else
    auto opened = detail::open_readable(path);
#endif
    if (!opened) return opened.error();
    // The descriptor closes when `opened` dies; the mapping stays valid.
    return map(opened->first, opened->second, hint);
  }

  mapped_file(mapped_file&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  mapped_file& operator=(mapped_file&& o) noexcept {
    if (this != &o) {
      unmap();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;
  ~mapped_file() { unmap(); }

  /// The file's bytes; valid while this object lives. Empty when moved-from.
  [[nodiscard]] byte_span bytes() const noexcept { return {data_, size_}; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  friend class file_range_source;  // maps the file it opened, never a second open of the path

#if defined(_WIN32)
  using handle_type = detail::win_handle;
#else
  using handle_type = detail::posix_fd;
#endif

  mapped_file() noexcept = default;
  mapped_file(const std::byte* data, std::size_t size) noexcept : data_(data), size_(size) {}

  // Maps all `size` bytes of the open regular file `file` read-only (errors
  // as open). The mapping outlives `file`.
  [[nodiscard]] static result<mapped_file> map(const handle_type& file, std::uint64_t size, read_ahead hint) noexcept {
    if (!detail::fits_in_size_t(size)) return detail::source_error(errc::io_open_failed, "size", size);
#if defined(_WIN32)
    (void)hint;  // FILE_FLAG_SEQUENTIAL_SCAN was given when the file was opened
    // Size 0/0 maps the whole file. The mapping handle may close once the
    // view exists: the view keeps the mapping (and the file) alive.
    const detail::win_handle mapping(::CreateFileMappingW(file.get(), nullptr, PAGE_READONLY, 0, 0, nullptr));
    if (mapping.get() == nullptr) return detail::last_os_error(errc::io_open_failed);
    const void* view = ::MapViewOfFile(mapping.get(), FILE_MAP_READ, 0, 0, 0);
    if (view == nullptr) return detail::last_os_error(errc::io_open_failed);
    return mapped_file(static_cast<const std::byte*>(view), static_cast<std::size_t>(size));
#else
    void* p = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, file.get(), 0);
    if (p == MAP_FAILED) return detail::last_os_error(errc::io_open_failed);
    // Only a hint: failure changes nothing about correctness.
    if (hint == read_ahead::whole_file) (void)::posix_madvise(p, static_cast<std::size_t>(size), POSIX_MADV_WILLNEED);
    return mapped_file(static_cast<const std::byte*>(p), static_cast<std::size_t>(size));
#endif
  }

  void unmap() noexcept {
    if (data_ == nullptr) return;
#if defined(_WIN32)
    ::UnmapViewOfFile(data_);
#else
    ::munmap(const_cast<std::byte*>(data_), size_);
#endif
    data_ = nullptr;
    size_ = 0;
  }

  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Random-access byte source: the reader asks for exact ranges and never
/// assumes the whole file is in memory.
class range_source {
 public:
  virtual ~range_source() = default;

  /// Total size in bytes (fixed for the source's lifetime).
  [[nodiscard]] virtual std::uint64_t size() const = 0;

  /// Fills all of `out` with bytes [offset, offset + out.size()). A range
  /// that does not lie inside [0, size()) fails with io_read_failed and reads
  /// nothing. Implementations check the range overflow-safely, so any
  /// offset from an untrusted file is fine.
  [[nodiscard]] virtual status read(std::uint64_t offset, mutable_byte_span out) = 0;

  /// Whether view() lends bytes in place: true for a source that holds the
  /// whole file in memory (a buffer, a mapping). A reader then views chunks
  /// instead of copying them into fresh buffers (streamed_asset does).
  [[nodiscard]] virtual bool lends_views() const noexcept { return false; }

  /// Bytes [offset, offset + size) in place, without a copy; the span stays
  /// valid as long as the source (a mapped source: see mapped_file about a
  /// file truncated while mapped). A range outside [0, size()), or a source
  /// that does not lend views, fails with io_read_failed (context.field
  /// "offset" / "view"). Safe on untrusted offsets.
  [[nodiscard]] virtual result<byte_span> view(std::uint64_t offset, std::uint64_t size) {
    (void)size;
    return detail::source_error(errc::io_read_failed, "view", offset);
  }

 protected:
  range_source() = default;
  range_source(const range_source&) = default;
  range_source& operator=(const range_source&) = default;
  range_source(range_source&&) = default;
  range_source& operator=(range_source&&) = default;
};

namespace detail {
/// The io_read_failed error for a range outside a source of `size` bytes;
/// nullopt when [offset, offset + length) lies inside it.
[[nodiscard]] inline std::optional<error> check_read_range(std::uint64_t offset, std::uint64_t length,
                                                           std::uint64_t size) noexcept {
  if (checked_range(offset, length, 1, size)) return std::nullopt;
  return source_error(errc::io_read_failed, "offset", offset);
}
}  // namespace detail

/// A range_source over bytes already in memory (a buffer or a mapped_file);
/// lends views of them; counts what it serves (reads and views), so tests can
/// prove how much a reader fetched. The bytes must outlive this object.
class memory_range_source final : public range_source {
 public:
  explicit memory_range_source(byte_span bytes) noexcept : bytes_(bytes) {}

  [[nodiscard]] std::uint64_t size() const override { return bytes_.size(); }

  /// See range_source::read. Safe on untrusted offsets.
  [[nodiscard]] status read(std::uint64_t offset, mutable_byte_span out) override {
    if (auto e = detail::check_read_range(offset, out.size(), bytes_.size())) return *e;
    if (!out.empty()) std::memcpy(out.data(), bytes_.data() + offset, out.size());
    bytes_served_ += out.size();
    ++reads_;
    return {};
  }

  [[nodiscard]] bool lends_views() const noexcept override { return true; }

  /// See range_source::view. Safe on untrusted offsets.
  [[nodiscard]] result<byte_span> view(std::uint64_t offset, std::uint64_t size) override {
    if (auto e = detail::check_read_range(offset, size, bytes_.size())) return *e;
    bytes_served_ += size;
    ++reads_;
    return subspan(bytes_, {offset, size});
  }

  /// Bytes delivered by successful read() and view() calls.
  [[nodiscard]] std::uint64_t bytes_served() const noexcept { return bytes_served_; }
  /// Number of successful read() and view() calls.
  [[nodiscard]] std::uint64_t reads() const noexcept { return reads_; }
  void reset_counters() noexcept { bytes_served_ = reads_ = 0; }

 private:
  byte_span bytes_;
  std::uint64_t bytes_served_ = 0;
  std::uint64_t reads_ = 0;
};

/// How file_range_source reaches a file's bytes.
enum class file_access : std::uint8_t {
  /// Also map the file read-only (as open_file does) and lend views into
  /// the mapping: streamed_asset then loads chunks in place, at the cost of
  /// a whole-file open. read() still uses positional reads (no page fault
  /// reads a device's read-around window for a few bytes of metadata). Same
  /// caveat as mapped_file for the lent views: a file truncated by another
  /// process while mapped raises SIGBUS / an access violation when a lost
  /// page is touched. Without a mapping (the OS refused one) it is pread.
  mapped,
  /// Positional reads (pread / ReadFile with an OVERLAPPED offset) into the
  /// caller's buffers, never a mapping: a file truncated behind our back
  /// gives io_read_failed rather than a signal. Every range costs a copy
  /// into memory the reader allocates.
  pread,
};

/// A range_source over a local file: read() by positional reads (no shared
/// file position), so a file truncated behind our back gives io_read_failed;
/// by default also a mapping whose views it lends (file_access::mapped).
/// size() is the size at open(). RAII, move-only.
class file_range_source final : public range_source {
 public:
  /// Opens `path` for reading through `access`. Errors as mapped_file::open:
  /// io_open_failed (missing, unreadable, directory, not a regular file;
  /// context.value = errno / GetLastError), io_empty_file. A mapping the OS
  /// refuses is no error: the source reads with pread instead (is_mapped()
  /// tells). Safe with any path.
  [[nodiscard]] static result<file_range_source> open(const std::filesystem::path& path,
                                                      file_access access = file_access::mapped) noexcept {
#if defined(_WIN32)
    auto opened = detail::open_readable(path, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_RANDOM_ACCESS);
#else
    auto opened = detail::open_readable(path);
#endif
    if (!opened) return opened.error();
    file_range_source source(std::move(opened->first), opened->second);
    if (access == file_access::mapped) {
      if (auto mapping = mapped_file::map(source.file_, source.size_, read_ahead::on_demand))
        source.mapping_ = std::move(*mapping);
    }
    return source;
  }

  file_range_source(file_range_source&&) noexcept = default;
  file_range_source& operator=(file_range_source&&) noexcept = default;
  file_range_source(const file_range_source&) = delete;
  file_range_source& operator=(const file_range_source&) = delete;
  ~file_range_source() override = default;

  [[nodiscard]] std::uint64_t size() const override { return size_; }

  /// Whether the file is mapped (file_access::mapped and the OS agreed): then
  /// view() lends spans into the mapping.
  [[nodiscard]] bool is_mapped() const noexcept { return mapping_.size() != 0; }

  /// See range_source::read. Safe on untrusted offsets. Fails with
  /// io_read_failed (context.value = errno / GetLastError, or the offset when
  /// the file ended early).
  [[nodiscard]] status read(std::uint64_t offset, mutable_byte_span out) override {
    if (auto e = detail::check_read_range(offset, out.size(), size_)) return *e;
    UNTOLD_TRY(read_positional(offset, out));
    bytes_served_ += out.size();
    ++reads_;
    return {};
  }

  [[nodiscard]] bool lends_views() const noexcept override { return is_mapped(); }

  /// See range_source::view: a span into the mapping, with a hint to the OS
  /// that it is about to be read (POSIX_MADV_WILLNEED on just that range).
  /// Fails with io_read_failed (field "view") when not mapped. Safe on
  /// untrusted offsets.
  [[nodiscard]] result<byte_span> view(std::uint64_t offset, std::uint64_t size) override {
    if (!is_mapped()) return range_source::view(offset, size);
    if (auto e = detail::check_read_range(offset, size, size_)) return *e;
    const byte_span bytes = subspan(mapping_.bytes(), {offset, size});
#if !defined(_WIN32)
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    if (!bytes.empty() && page != 0) {
      const auto first = reinterpret_cast<std::uintptr_t>(bytes.data()) / page * page;
      const auto last = reinterpret_cast<std::uintptr_t>(bytes.data()) + bytes.size();
      // Only a hint: failure changes nothing about correctness.
      (void)::posix_madvise(reinterpret_cast<void*>(first), static_cast<std::size_t>(last - first),
                            POSIX_MADV_WILLNEED);
    }
#endif
    bytes_served_ += size;
    ++reads_;
    return bytes;
  }

  /// Bytes delivered by successful read() and view() calls.
  [[nodiscard]] std::uint64_t bytes_served() const noexcept { return bytes_served_; }
  /// Number of successful read() and view() calls.
  [[nodiscard]] std::uint64_t reads() const noexcept { return reads_; }

 private:
  using handle_type = mapped_file::handle_type;
  file_range_source(handle_type file, std::uint64_t size) noexcept : file_(std::move(file)), size_(size) {}

  // [offset, offset + out.size()) by positional reads; the range is checked.
  status read_positional(std::uint64_t offset, mutable_byte_span out) {
    std::byte* dst = out.data();
    std::size_t left = out.size();
    std::uint64_t pos = offset;
    // One OS call may return fewer bytes than asked (signals, 2 GiB caps):
    // loop until done; zero bytes means the file shrank since open().
    constexpr std::size_t max_call = std::size_t{1} << 30;
    while (left != 0) {
      const std::size_t want = left < max_call ? left : max_call;
#if defined(_WIN32)
      OVERLAPPED at{};
      at.Offset = static_cast<DWORD>(pos & 0xFFFFFFFFu);
      at.OffsetHigh = static_cast<DWORD>(pos >> 32);
      DWORD got = 0;
      if (!::ReadFile(file_.get(), dst, static_cast<DWORD>(want), &got, &at)) {
        if (::GetLastError() == ERROR_HANDLE_EOF) return detail::source_error(errc::io_read_failed, "offset", pos);
        return detail::last_os_error(errc::io_read_failed);
      }
      const std::size_t n = got;
#else
      // pos <= size_, which came from st_size, so it fits off_t.
      const ssize_t got = ::pread(file_.get(), dst, want, static_cast<off_t>(pos));
      if (got < 0) {
        if (errno == EINTR) continue;
        return detail::last_os_error(errc::io_read_failed);
      }
      const auto n = static_cast<std::size_t>(got);
#endif
      if (n == 0) return detail::source_error(errc::io_read_failed, "offset", pos);
      dst += n;
      left -= n;
      pos += n;
    }
    return {};
  }

  handle_type file_;
  mapped_file mapping_;  // empty with file_access::pread
  std::uint64_t size_ = 0;
  std::uint64_t bytes_served_ = 0;
  std::uint64_t reads_ = 0;
};

/// Reads the whole file at `path` into memory. Errors: as
/// file_range_source::open and read, plus limit_exceeded when the file is
/// larger than `max_size` bytes (checked before allocating; R-LIMITS).
/// Safe with any path.
[[nodiscard]] inline result<std::vector<std::byte>> read_file(
    const std::filesystem::path& path, std::uint64_t max_size = std::numeric_limits<std::uint64_t>::max()) {
  auto source = file_range_source::open(path, file_access::pread);  // one copy, straight into the vector
  if (!source) return source.error();
  const std::uint64_t size = source->size();
  if (size > max_size || !detail::fits_in_size_t(size))
    return detail::source_error(errc::limit_exceeded, "size", size);
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  UNTOLD_TRY(source->read(0, bytes));
  return bytes;
}

}  // namespace untold
