// untold/remote/disk_cache.hpp - the persistent download cache (POSIX).
//
//   auto cache = untold::remote::disk_cache::open({.directory = "/var/cache/game"});
//   if (auto hit = cache->lookup("https://cdn/x/t.untold")) use(hit->path, hit->etag);
//   cache->store("https://cdn/x/t.untold", bytes, {.etag = "\"abc\""});
//
// Layout under the cache directory (docs/remote.md):
//   <sha256(key)>.<ext>   an entry's bytes; key = the absolute URL string,
//                         ext = the URL's extension ("bin" when none)
//   <sha256(key)>.meta    its sidecar (JSON): key, etag, size, sha256, file, inode, ...
//   .tmp/                 downloads in progress: <hash>.<pid>.<n>.part
//   .lock                 the lock file (flock: shared for reads, exclusive
//                         for commits, eviction and clear)
//
// Crash safety: bytes are written to .tmp, fsynced, then renamed into place
// and the directory fsynced; the sidecar likewise, after the data. A sidecar
// names the inode and size of its data file, and lookup() accepts the pair
// only when both match, so a crash between the two renames or a
// half-finished eviction reads as a miss - never as a wrong or torn entry.
// Temp files of dead processes are removed when a cache is opened.
//
// Integrity: the sidecar also holds the SHA-256 of the data. A data file
// whose bytes no longer match it (a flipped bit on disk, a file edited in
// place) is a miss, counted by corrupt_entries(); the caller downloads it
// again, which replaces it. read() verifies every time (it reads the whole
// entry anyway); lookup() verifies an entry version (inode) the first time
// this cache object returns it, or every time with
// cache_options::verify = cache_verify::every_lookup; lookup_verified()
// always verifies (the downloader calls it before reusing an entry on a 304).
//
// LRU: an entry's last access is its data file's mtime, set explicitly (with
// nanoseconds, strictly increasing within a process) on every store and hit.
// When a store takes usage (all entry and sidecar bytes) over the budget,
// the least recently used entries are deleted until usage is at most
// `evict_to` of the budget; the entry just stored is kept.
//
// Thread and process safety: every operation takes the directory's flock on
// its own descriptor, so threads of one process and several processes
// sharing the directory serialise the same way. Data files are replaced only
// by rename, so an open descriptor always reads one whole version.
#pragma once

#if defined(_WIN32)
#error "untold::remote supports POSIX systems only"
#endif

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../bytes.hpp"
#include "../hash.hpp"
#include "../source.hpp"
#include "error.hpp"
#include "url.hpp"

namespace untold::remote {

/// When lookup() re-hashes an entry's data against its sidecar's SHA-256.
enum class cache_verify : std::uint8_t {
  once_per_entry,  // the first lookup of each entry version by this cache object
  every_lookup,    // every lookup (the whole file is read each time)
};

struct cache_options {
  std::filesystem::path directory;
  /// When lookup() re-hashes an entry (read() and lookup_verified() always do).
  cache_verify verify = cache_verify::once_per_entry;
  /// Usage above which store() evicts (default 500 MiB).
  std::uint64_t budget_bytes = std::uint64_t{500} * 1024 * 1024;
  /// Eviction stops once usage is at most this fraction of the budget.
  double evict_to = 0.75;
};

/// What a lookup or a store returns. `path` is the data file: open it soon,
/// since another thread or process may evict or replace it later (a
/// replacement is atomic, so an opened descriptor always reads one version).
struct cache_entry {
  std::filesystem::path path;
  std::string key;
  std::string etag;
  std::uint64_t size = 0;
  /// The whole resource's size for a byte-range entry, else == size.
  std::uint64_t resource_size = 0;
};

/// How store()/commit() names and describes an entry.
struct store_info {
  std::string etag{};
  /// Data file name: "<hash>.<extension>"; empty = the key's URL extension, or "bin".
  std::string extension{};
  /// 0 = the entry's own size.
  std::uint64_t resource_size = 0;
};

/// One entry as eviction sees it (for tools and tests).
struct cache_item {
  std::string key;  // empty for a data file no sidecar claims
  std::filesystem::path path;
  std::uint64_t bytes = 0;        // data + sidecar
  std::int64_t last_access = 0;   // ns since the epoch (data file mtime)
};

namespace detail {

[[nodiscard]] inline error os_error(const char* call, const std::filesystem::path& path, int err = errno) {
  return make_error(remote_errc::cache_io,
                    std::string(call) + " " + path.string() + ": " + std::error_code(err, std::generic_category()).message());
}

/// An owned descriptor (the core's RAII wrapper from source.hpp).
using unique_fd = untold::detail::posix_fd;

[[nodiscard]] inline int open_retry(const std::filesystem::path& path, int flags, mode_t mode = 0644) noexcept {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

[[nodiscard]] inline bool write_all(int fd, const void* data, std::size_t size) noexcept {
  const auto* p = static_cast<const char*>(data);
  while (size != 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

[[nodiscard]] inline bool fsync_path(const std::filesystem::path& dir) noexcept {
  const unique_fd fd(open_retry(dir, O_RDONLY | O_DIRECTORY));
  return fd.get() >= 0 && ::fsync(fd.get()) == 0;
}

/// flock() on a fresh descriptor of the lock file: conflicts between threads
/// (distinct open file descriptions) exactly as between processes.
class dir_lock {
 public:
  [[nodiscard]] static result<dir_lock> acquire(const std::filesystem::path& lock_file, bool exclusive) {
    unique_fd fd(open_retry(lock_file, O_RDWR | O_CREAT));
    if (fd.get() < 0) return os_error("open", lock_file);
    int rc = 0;
    do {
      rc = ::flock(fd.get(), exclusive ? LOCK_EX : LOCK_SH);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return os_error("flock", lock_file);
    return dir_lock(std::move(fd));
  }

 private:
  explicit dir_lock(unique_fd fd) noexcept : fd_(std::move(fd)) {}
  unique_fd fd_;  // closing the descriptor releases the lock
};

/// Strictly increasing wall-clock nanoseconds within this process, so that
/// accesses in a row order deterministically even on a coarse clock.
[[nodiscard]] inline std::int64_t access_stamp() noexcept {
  static std::atomic<std::int64_t> last{0};
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  const std::int64_t now = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  std::int64_t prev = last.load(std::memory_order_relaxed);
  std::int64_t next = 0;
  do {
    next = std::max(now, prev + 1);
  } while (!last.compare_exchange_weak(prev, next, std::memory_order_relaxed));
  return next;
}

inline bool set_last_access(const std::filesystem::path& path, std::int64_t stamp) noexcept {
  timespec times[2];
  times[0].tv_sec = static_cast<time_t>(stamp / 1'000'000'000);
  times[0].tv_nsec = static_cast<long>(stamp % 1'000'000'000);
  times[1] = times[0];
  return ::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0;
}

[[nodiscard]] inline std::int64_t mtime_ns(const struct stat& st) noexcept {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

[[nodiscard]] inline std::optional<std::string> read_small_file(const std::filesystem::path& path,
                                                                std::size_t max = 64 * 1024) {
  const unique_fd fd(open_retry(path, O_RDONLY));
  if (fd.get() < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max) return std::nullopt;
  }
  return text;
}

[[nodiscard]] inline bool is_hex_name(std::string_view stem) noexcept {
  if (stem.size() != 64) return false;
  return std::all_of(stem.begin(), stem.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

/// A parsed sidecar.
struct sidecar {
  std::string key, etag, file, sha256;
  std::uint64_t size = 0, resource_size = 0, inode = 0;
};

[[nodiscard]] inline std::optional<sidecar> parse_sidecar(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  sidecar s;
  auto str = [&j](const char* name, std::string& out) {
    const auto it = j.find(name);
    if (it == j.end() || !it->is_string()) return false;
    out = it->get<std::string>();
    return true;
  };
  auto num = [&j](const char* name, std::uint64_t& out) {
    const auto it = j.find(name);
    if (it == j.end() || !it->is_number_unsigned()) return false;
    out = it->get<std::uint64_t>();
    return true;
  };
  // A sidecar without a digest (an older cache) is not trusted: a miss.
  if (!str("key", s.key) || !str("etag", s.etag) || !str("file", s.file) || !num("size", s.size) ||
      !num("inode", s.inode) || !num("resource_size", s.resource_size) || !str("sha256", s.sha256) ||
      !is_hex_name(s.sha256))
    return std::nullopt;
  // The data file is "<hash>.<ext>" in the root: never anything else.
  if (s.file.size() < 66 || !is_hex_name(std::string_view(s.file).substr(0, 64)) || s.file[64] != '.' ||
      s.file.find_first_of("/\\") != std::string::npos || s.file.ends_with(".meta"))
    return std::nullopt;
  return s;
}

/// Lower-case hex SHA-256 of the first `size` bytes of `fd` (read with
/// pread: the file offset is untouched); nullopt when the file is shorter or
/// a read or the hash fails.
[[nodiscard]] inline std::optional<std::string> file_sha256(int fd, std::uint64_t size) {
  untold::sha256 h;
  std::vector<std::byte> buf(static_cast<std::size_t>(std::min<std::uint64_t>(size, 1 << 20)));
  std::uint64_t done = 0;
  while (done < size) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - done));
    const ssize_t n = ::pread(fd, buf.data(), want, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    h.update(byte_span(buf.data(), static_cast<std::size_t>(n)));
    done += static_cast<std::uint64_t>(n);
  }
  auto digest = h.finish();
  if (!digest) return std::nullopt;
  return to_hex(*digest);
}

/// Entries one cache object has verified, and the corrupt ones it found.
/// Shared by moved-from copies (the object is movable; this is not).
struct integrity_state {
  std::mutex mutex;
  std::set<std::string> verified;  // key + '\n' + inode + '\n' + sha256
  std::atomic<std::uint64_t> corrupt{0};
};

}  // namespace detail

/// A download in progress: a file under .tmp that becomes an entry on
/// disk_cache::commit() and disappears otherwise. Move-only.
class temp_file {
 public:
  temp_file(temp_file&& o) noexcept : fd_(std::move(o.fd_)), path_(std::exchange(o.path_, {})) {}
  temp_file& operator=(temp_file&& o) noexcept {
    if (this != &o) {
      discard();
      fd_ = std::move(o.fd_);
      path_ = std::exchange(o.path_, {});
    }
    return *this;
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() { discard(); }

  [[nodiscard]] int fd() const noexcept { return fd_.get(); }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  /// Appends bytes; false on an OS error.
  [[nodiscard]] bool write(byte_span bytes) noexcept { return detail::write_all(fd_.get(), bytes.data(), bytes.size()); }

  /// Empties the file (a retry starts over).
  [[nodiscard]] bool truncate() noexcept {
    return ::ftruncate(fd_.get(), 0) == 0 && ::lseek(fd_.get(), 0, SEEK_SET) == 0;
  }

  /// Closes and deletes the file (idempotent).
  void discard() noexcept {
    fd_ = detail::unique_fd{};  // closes
    if (!path_.empty()) ::unlink(path_.c_str());
    path_.clear();
  }

 private:
  friend class disk_cache;
  temp_file(detail::unique_fd fd, std::filesystem::path path) noexcept : fd_(std::move(fd)), path_(std::move(path)) {}
  detail::unique_fd fd_;
  std::filesystem::path path_;
};

class disk_cache {
 public:
  /// Creates the directory (and .tmp) when missing and removes temp files
  /// left by processes that no longer run (or older than a day).
  [[nodiscard]] static result<disk_cache> open(const cache_options& options) {
    if (options.directory.empty()) return make_error(remote_errc::cache_io, "empty cache directory");
    std::error_code ec;
    std::filesystem::create_directories(options.directory / ".tmp", ec);
    if (ec) return make_error(remote_errc::cache_io, "create " + options.directory.string() + ": " + ec.message());
    disk_cache cache(options);
    cache.integrity_ = std::make_unique<detail::integrity_state>();
    cache.root_ = std::filesystem::absolute(options.directory, ec);
    if (ec) return make_error(remote_errc::cache_io, ec.message());
    auto lock = cache.lock(true);
    if (!lock) return lock.error();
    cache.remove_stale_temps();
    return cache;
  }

  [[nodiscard]] const std::filesystem::path& directory() const noexcept { return root_; }
  [[nodiscard]] const cache_options& options() const noexcept { return options_; }

  /// Lower-case hex SHA-256 of the key string: the entry's file stem.
  [[nodiscard]] static std::string key_hash(std::string_view key) {
    return to_hex(sha256_portable_of(byte_span(reinterpret_cast<const std::byte*>(key.data()), key.size())));
  }

  /// The entry for `key` when present and consistent (sidecar and data
  /// agree, and the data's SHA-256 matches the sidecar when this lookup
  /// verifies: see cache_options::verify); marks it as just used. Any
  /// problem reads as a miss.
  [[nodiscard]] std::optional<cache_entry> lookup(std::string_view key) const {
    return lookup_and_touch(key, options_.verify == cache_verify::every_lookup ? check::always : check::once);
  }

  /// lookup() that always re-hashes the data (before reusing an entry that
  /// a 304 declared current, or when the caller wants certainty).
  [[nodiscard]] std::optional<cache_entry> lookup_verified(std::string_view key) const {
    return lookup_and_touch(key, check::always);
  }

  /// Entries this object found corrupt (data no longer matching the
  /// sidecar's SHA-256), each counted once per lookup or read that met it.
  [[nodiscard]] std::uint64_t corrupt_entries() const noexcept {
    return integrity_->corrupt.load(std::memory_order_relaxed);
  }

  /// lookup() and read the whole entry while the lock is held; the bytes
  /// are always checked against the sidecar's SHA-256 (a mismatch is a miss).
  [[nodiscard]] std::optional<std::vector<std::byte>> read(std::string_view key) const {
    auto lock = this->lock(false);
    if (!lock) return std::nullopt;
    std::string digest;
    auto entry = lookup_locked(key, check::never, &digest);
    if (!entry) return std::nullopt;
    const detail::unique_fd fd(detail::open_retry(entry->path, O_RDONLY));
    if (fd.get() < 0) return std::nullopt;
    std::vector<std::byte> bytes(static_cast<std::size_t>(entry->size));
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::pread(fd.get(), bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      done += static_cast<std::size_t>(n);
    }
    auto actual = sha256_of(bytes);
    if (!actual || to_hex(*actual) != digest) {
      integrity_->corrupt.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
    detail::set_last_access(entry->path, detail::access_stamp());
    return bytes;
  }

  /// A new temp file for `key` under .tmp.
  [[nodiscard]] result<temp_file> create_temp(std::string_view key) const {
    static std::atomic<std::uint64_t> counter{0};
    const std::filesystem::path path =
        root_ / ".tmp" /
        (key_hash(key).substr(0, 16) + "." + std::to_string(::getpid()) + "." + std::to_string(++counter) + ".part");
    detail::unique_fd fd(detail::open_retry(path, O_RDWR | O_CREAT | O_EXCL | O_TRUNC));
    if (fd.get() < 0) return detail::os_error("open", path);
    return temp_file(std::move(fd), path);
  }

  /// Makes `temp` the entry for `key`: fsync, rename into place, sidecar,
  /// directory fsync, then eviction if over budget (never this entry).
  [[nodiscard]] result<cache_entry> commit(temp_file&& temp, std::string_view key, const store_info& info) {
    temp_file data = std::move(temp);
    const std::string hash = key_hash(key);
    const std::string ext = info.extension.empty() ? url_extension(key) : info.extension;
    const std::string file = hash + "." + (ext.empty() || ext == "meta" || ext == "part" ? std::string("bin") : ext);
    struct stat st {};
    if (::fsync(data.fd()) != 0 || ::fstat(data.fd(), &st) != 0) return detail::os_error("fsync", data.path());
    const auto size = static_cast<std::uint64_t>(st.st_size);
    // The digest of what is on disk now (read back: the page cache has it).
    const auto digest = detail::file_sha256(data.fd(), size);
    if (!digest) return detail::os_error("read", data.path());

    nlohmann::json meta = {{"key", std::string(key)},
                           {"etag", info.etag},
                           {"file", file},
                           {"size", size},
                           {"sha256", *digest},
                           {"resource_size", info.resource_size != 0 ? info.resource_size : size},
                           {"inode", static_cast<std::uint64_t>(st.st_ino)},
                           {"stored", static_cast<std::uint64_t>(std::time(nullptr))}};
    const std::string text = meta.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    auto meta_temp = create_temp(key);
    if (!meta_temp) return meta_temp.error();
    if (!meta_temp->write(byte_span(reinterpret_cast<const std::byte*>(text.data()), text.size())) ||
        ::fsync(meta_temp->fd()) != 0)
      return detail::os_error("write", meta_temp->path());

    const std::filesystem::path dest = root_ / file;
    auto lock = this->lock(true);
    if (!lock) return lock.error();
    if (::rename(data.path().c_str(), dest.c_str()) != 0) return detail::os_error("rename", dest);
    data.path_.clear();  // now the entry
    detail::set_last_access(dest, detail::access_stamp());
    const std::filesystem::path meta_path = root_ / (hash + ".meta");
    if (::rename(meta_temp->path().c_str(), meta_path.c_str()) != 0) return detail::os_error("rename", meta_path);
    meta_temp->path_.clear();
    if (!detail::fsync_path(root_)) return detail::os_error("fsync", root_);
    evict_locked(options_.budget_bytes, hash);
    return cache_entry{dest, std::string(key), info.etag, size, info.resource_size != 0 ? info.resource_size : size};
  }

  /// create_temp + write + commit.
  [[nodiscard]] result<cache_entry> store(std::string_view key, byte_span bytes, const store_info& info = {}) {
    auto temp = create_temp(key);
    if (!temp) return temp.error();
    if (!temp->write(bytes)) return detail::os_error("write", temp->path());
    return commit(std::move(*temp), key, info);
  }

  /// Marks an entry as just used (a 304 revalidation).
  void touch(const cache_entry& entry) const {
    auto lock = this->lock(false);
    if (lock) detail::set_last_access(entry.path, detail::access_stamp());
  }

  /// Deletes the entry for `key` (sidecar first, then data).
  status remove(std::string_view key) {
    auto lock = this->lock(true);
    if (!lock) return lock.error();
    const std::string hash = key_hash(key);
    const std::filesystem::path meta_path = root_ / (hash + ".meta");
    auto text = detail::read_small_file(meta_path);
    ::unlink(meta_path.c_str());
    if (text) {
      if (auto s = detail::parse_sidecar(*text)) ::unlink((root_ / s->file).c_str());
    }
    return {};
  }

  /// Removes every entry (all files and directories but .lock and .tmp);
  /// downloads in progress still commit afterwards.
  status clear() {
    auto lock = this->lock(true);
    if (!lock) return lock.error();
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(root_, ec)) {
      const std::string name = e.path().filename().string();
      if (name == ".lock" || name == ".tmp") continue;
      std::filesystem::remove_all(e.path(), ec);
      if (ec) return make_error(remote_errc::cache_io, "remove " + e.path().string() + ": " + ec.message());
    }
    if (!detail::fsync_path(root_)) return detail::os_error("fsync", root_);
    return {};
  }

  /// Bytes of all entries and sidecars (temp files and .lock excluded).
  [[nodiscard]] std::uint64_t usage() const {
    auto lock = this->lock(false);
    if (!lock) return 0;
    std::uint64_t total = 0;
    for (const cache_item& item : scan_locked()) total += item.bytes;
    return total;
  }

  /// Every entry, least recently used first.
  [[nodiscard]] std::vector<cache_item> items() const {
    auto lock = this->lock(false);
    if (!lock) return {};
    return scan_locked();
  }

  /// Evicts least recently used entries until usage <= evict_to * budget,
  /// if usage exceeds the budget (store() does this by itself).
  status evict() {
    auto lock = this->lock(true);
    if (!lock) return lock.error();
    evict_locked(options_.budget_bytes, {});
    return {};
  }

 private:
  explicit disk_cache(cache_options options) : options_(std::move(options)) {}

  [[nodiscard]] result<detail::dir_lock> lock(bool exclusive) const {
    return detail::dir_lock::acquire(root_ / ".lock", exclusive);
  }

  enum class check : std::uint8_t { never, once, always };

  [[nodiscard]] std::optional<cache_entry> lookup_and_touch(std::string_view key, check mode) const {
    auto lock = this->lock(false);
    if (!lock) return std::nullopt;
    auto entry = lookup_locked(key, mode);
    if (entry) detail::set_last_access(entry->path, detail::access_stamp());
    return entry;
  }

  // The consistent entry for `key`. `mode` says whether to re-hash the data
  // (once: unless this object verified the same key, inode and digest
  // before); with never, *digest receives the sidecar's for the caller to check.
  [[nodiscard]] std::optional<cache_entry> lookup_locked(std::string_view key, check mode,
                                                         std::string* digest = nullptr) const {
    const std::string hash = key_hash(key);
    auto text = detail::read_small_file(root_ / (hash + ".meta"));
    if (!text) return std::nullopt;
    auto meta = detail::parse_sidecar(*text);
    if (!meta || meta->key != key) return std::nullopt;
    const std::filesystem::path path = root_ / meta->file;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    if (static_cast<std::uint64_t>(st.st_ino) != meta->inode || static_cast<std::uint64_t>(st.st_size) != meta->size)
      return std::nullopt;
    if (digest != nullptr) *digest = meta->sha256;
    if (mode != check::never) {
      const std::string id = meta->key + "\n" + std::to_string(meta->inode) + "\n" + meta->sha256;
      bool known = false;
      if (mode == check::once) {
        std::lock_guard guard(integrity_->mutex);
        known = integrity_->verified.count(id) != 0;
      }
      if (!known) {
        const detail::unique_fd fd(detail::open_retry(path, O_RDONLY));
        const auto actual = fd.get() >= 0 ? detail::file_sha256(fd.get(), meta->size) : std::nullopt;
        if (!actual) return std::nullopt;  // gone or unreadable: a plain miss
        if (*actual != meta->sha256) {
          integrity_->corrupt.fetch_add(1, std::memory_order_relaxed);
          return std::nullopt;
        }
        std::lock_guard guard(integrity_->mutex);
        integrity_->verified.insert(id);
      }
    }
    return cache_entry{path, meta->key, meta->etag, meta->size, meta->resource_size};
  }

  // Items: each sidecar with its data file (when the inode matches), stale
  // sidecars alone, data files no sidecar claims alone. Oldest first.
  [[nodiscard]] std::vector<cache_item> scan_locked() const {
    struct file_info {
      std::uint64_t size = 0, inode = 0;
      std::int64_t mtime = 0;
      bool claimed = false;
    };
    std::map<std::filesystem::path, file_info> files;
    std::vector<std::filesystem::path> metas;
    std::error_code ec;
    auto it = std::filesystem::recursive_directory_iterator(root_, ec);
    for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      const std::filesystem::path& p = it->path();
      const std::string name = p.filename().string();
      if (it.depth() == 0 && (name == ".lock" || name == ".tmp")) {
        if (it->is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
      struct stat st {};
      if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (it.depth() == 0 && name.size() == 69 && name.ends_with(".meta") && detail::is_hex_name(name.substr(0, 64)))
        metas.push_back(p);
      files[p] = {static_cast<std::uint64_t>(st.st_size), static_cast<std::uint64_t>(st.st_ino), detail::mtime_ns(st),
                  false};
    }
    std::vector<cache_item> items;
    for (const std::filesystem::path& meta_path : metas) {
      file_info& m = files[meta_path];
      m.claimed = true;
      cache_item item{{}, meta_path, m.size, m.mtime};
      auto text = detail::read_small_file(meta_path);
      auto meta = text ? detail::parse_sidecar(*text) : std::nullopt;
      if (meta) {
        item.key = meta->key;
        const auto data = files.find(root_ / meta->file);
        if (data != files.end() && !data->second.claimed && data->second.inode == meta->inode) {
          data->second.claimed = true;
          item.path = data->first;
          item.bytes += data->second.size;
          item.last_access = data->second.mtime;
        }
      }
      items.push_back(std::move(item));
    }
    for (const auto& [path, info] : files)
      if (!info.claimed) items.push_back({{}, path, info.size, info.mtime});
    std::stable_sort(items.begin(), items.end(),
                     [](const cache_item& a, const cache_item& b) { return a.last_access < b.last_access; });
    return items;
  }

  void evict_locked(std::uint64_t budget, const std::string& keep_hash) {
    std::vector<cache_item> items = scan_locked();
    std::uint64_t total = 0;
    for (const cache_item& item : items) total += item.bytes;
    if (total <= budget) return;
    const auto target = static_cast<std::uint64_t>(static_cast<double>(budget) * options_.evict_to);
    for (const cache_item& item : items) {
      if (total <= target) break;
      const std::string hash = item.key.empty() ? std::string() : key_hash(item.key);
      if (!keep_hash.empty() && hash == keep_hash) continue;
      if (!hash.empty()) ::unlink((root_ / (hash + ".meta")).c_str());  // sidecar first
      if (item.path.filename().string() != hash + ".meta") ::unlink(item.path.c_str());
      total -= std::min(total, item.bytes);
      // Directories left empty go too (best effort, never the root): stray
      // files in subdirectories, e.g. textures an older version stored by URI.
      for (std::filesystem::path dir = item.path.parent_path(); dir != root_ && dir.string().size() > root_.string().size();
           dir = dir.parent_path())
        if (::rmdir(dir.c_str()) != 0) break;
    }
    (void)detail::fsync_path(root_);  // best effort: eviction only deletes
  }

  void remove_stale_temps() {
    std::error_code ec;
    const auto now = std::filesystem::file_time_type::clock::now();
    for (const auto& e : std::filesystem::directory_iterator(root_ / ".tmp", ec)) {
      const std::string name = e.path().filename().string();
      // <hash16>.<pid>.<n>.part
      const std::size_t a = name.find('.');
      const std::size_t b = a == std::string::npos ? a : name.find('.', a + 1);
      bool stale = a == std::string::npos || b == std::string::npos;
      if (!stale) {
        const long pid = std::strtol(name.substr(a + 1, b - a - 1).c_str(), nullptr, 10);
        stale = pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
      }
      std::error_code tec;
      const auto written = std::filesystem::last_write_time(e.path(), tec);
      if (!tec && now - written > std::chrono::hours(24)) stale = true;
      if (stale) std::filesystem::remove(e.path(), tec);
    }
  }

  cache_options options_;
  std::filesystem::path root_;
  std::unique_ptr<detail::integrity_state> integrity_;
};

}  // namespace untold::remote
