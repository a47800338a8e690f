// tools/cli/pak.cpp - `untold pak`: Urho3D packages (docs/urho3d.md).
//
//   untold pak list FILE [--json] [-q] [-v]
//   untold pak extract FILE [NAME...] [-o DIR] [--max-total-bytes N] [--json] [-q] [-v]
//   untold pak create DIR -o OUT.pak [--compress] [--level N] [--no-trailing-size] [--json] [-q] [-v]
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <untold/source.hpp>
#include <untold/urho3d/urho3d.hpp>

#include "commands.hpp"

namespace untold::tools::cli {
namespace {

namespace u3 = untold::urho3d;
namespace fs = std::filesystem;

json base(const std::string& path) { return json{{"file", path}, {"format", "urho3d-package"}}; }

json invalid(json j, const error& e) {
  j["valid"] = false;
  j["error"] = error_json(e);
  return j;
}

/// The whole file, or nullopt (message with the system's reason printed).
std::optional<std::vector<std::byte>> read_all(const fs::path& path) {
  std::string message;
  json ignored;
  auto in = input::load(path.string(), message, ignored);
  if (!in) {
    complain(message);
    return std::nullopt;
  }
  return std::vector<std::byte>(in->bytes().begin(), in->bytes().end());
}

struct pak_args {
  std::string file;
  std::vector<std::string> names;
  std::string out_dir = ".";
  std::string source_dir;
  std::string output;
  bool compress = false;
  int level = 9;
  bool no_trailing_size = false;
  std::uint64_t max_total_bytes = 0;  // 0: the library's default (1 GiB)
};

void print_json(const json& j) { print(to_text(j)); }

int pak_list(const pak_args& a, const common_flags& flags) {
  auto bytes = read_all(a.file);
  if (!bytes) return exit_io;
  auto p = u3::open_package(*bytes);
  if (!p) {
    if (flags.json) print_json(invalid(base(a.file), p.error()));
    else complain(quote_path(a.file) + ": " + p.error().describe());
    return exit_invalid;
  }
  if (flags.json) {
    document_stream out(print);
    (void)find_format("urho3d-package")->dump(a.file, *bytes, out);  // valid: open_package accepted it above
    return exit_ok;
  }
  std::printf("%s: %s, %zu entries, %llu bytes uncompressed\n", escaped(a.file).c_str(),
              p->kind == u3::package_kind::ulz4 ? "ULZ4" : "UPAK", p->entries.size(),
              static_cast<unsigned long long>(p->total_uncompressed()));
  for (const u3::package_entry& e : p->entries)
    std::printf("%12u %12llu  %08x  %s\n", e.size, static_cast<unsigned long long>(e.stored_size), e.checksum,
                escaped(e.name).c_str());
  return exit_ok;
}

// ---- untold pak extract: check everything, write into a temporary
// directory, move into place, never through a symbolic link -------------

/// An open file descriptor, closed on scope exit (the library's, source.hpp).
using descriptor = untold::detail::posix_fd;

/// Splits an entry name (a safe relative path: U3D-PAK-NAME) at its last '/'.
std::pair<std::string, std::string> split_name(std::string_view name) {
  const std::size_t slash = name.rfind('/');
  if (slash == std::string_view::npos) return {"", std::string(name)};
  return {std::string(name.substr(0, slash)), std::string(name.substr(slash + 1))};
}

/// The directory `relative` ('/'-separated, may be empty) under the open
/// directory `root`, each component opened with O_NOFOLLOW (a symbolic link
/// is never followed: ELOOP) and, with `create`, made when absent. An
/// invalid descriptor and errno on failure; `failed` names the component.
descriptor open_tree(int root, std::string_view relative, bool create, std::string& failed) {
  descriptor dir(::fcntl(root, F_DUPFD_CLOEXEC, 0));
  std::size_t start = 0;
  while (dir.get() >= 0 && start < relative.size()) {
    const std::size_t slash = std::min(relative.find('/', start), relative.size());
    const std::string part(relative.substr(start, slash - start));
    failed = std::string(relative.substr(0, slash));
    constexpr int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int next = ::openat(dir.get(), part.c_str(), flags);
    if (next < 0 && errno == ENOENT && create && (::mkdirat(dir.get(), part.c_str(), 0777) == 0 || errno == EEXIST))
      next = ::openat(dir.get(), part.c_str(), flags);
    struct stat st {};
    if (next < 0 && errno == ENOTDIR && ::fstatat(dir.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode))
      errno = ELOOP;  // O_DIRECTORY reports a link as "not a directory": say what it is
    const int failure = errno;
    dir = descriptor(next);  // closes the parent
    errno = failure;
    start = slash + 1;
  }
  return dir;
}

/// "'out/a/b': is a symbolic link (not followed)" for a failed open_tree or leaf.
std::string refusal(const fs::path& out_dir, const std::string& where, int os_error) {
  const std::string path = (out_dir / where).string();
  if (os_error == ELOOP) return quote_path(path) + ": is a symbolic link (pak extract never follows one)";
  return quote_path(path) + ": " + std::strerror(os_error);
}

/// The output directory may hold each wanted entry: every existing
/// component of its directory is a directory (not a symbolic link), the
/// file itself absent or a regular file. Nothing is written. Empty: fine.
std::string check_targets(int out, const fs::path& out_dir, std::span<const u3::package_entry* const> entries) {
  for (const u3::package_entry* e : entries) {
    const auto [parent, leaf] = split_name(e->name);
    std::string failed;
    descriptor dir = open_tree(out, parent, false, failed);
    if (dir.get() < 0) {
      const int os_error = errno;
      if (os_error == ENOENT) continue;  // made when the entry moves in
      return refusal(out_dir, failed, os_error);
    }
    struct stat st {};
    if (::fstatat(dir.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      const int os_error = errno;
      if (os_error == ENOENT) continue;
      return refusal(out_dir, std::string(e->name), os_error);
    }
    if (S_ISLNK(st.st_mode)) return refusal(out_dir, std::string(e->name), ELOOP);
    if (!S_ISREG(st.st_mode)) return refusal(out_dir, std::string(e->name), S_ISDIR(st.st_mode) ? EISDIR : EEXIST);
  }
  return {};
}

/// Writes `data` as the new file `leaf` in `dir` (O_EXCL, O_NOFOLLOW);
/// false with errno on failure.
bool write_new_file(int dir, const std::string& leaf, byte_span data) {
  const int fd = ::openat(dir, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  for (std::size_t done = 0; done < data.size();) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int failure = n < 0 ? errno : EIO;
      ::close(fd);
      errno = failure;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return ::close(fd) == 0;  // a deferred write error shows here
}

int pak_extract(const pak_args& a, const common_flags& flags) {
  auto bytes = read_all(a.file);
  if (!bytes) return exit_io;
  json report = base(a.file);
  const auto fail = [&](const error& e) {
    if (flags.json) print_json(invalid(report, e));
    else complain(quote_path(a.file) + ": " + e.describe());
    return exit_invalid;
  };
  const auto io_fail = [&](const std::string& message) {
    complain(message);
    return exit_io;
  };
  // The limits `validate` applies; --max-total-bytes raises them on purpose.
  untold::limits lim;
  if (a.max_total_bytes != 0) {
    lim.max_total_bytes = a.max_total_bytes;
    lim.max_chunk_bytes = std::max(lim.max_chunk_bytes, a.max_total_bytes);
    lim.memory_floor = std::max(lim.memory_floor, a.max_total_bytes);  // one entry is held at a time
  }
  // 1. The whole package, before anything is written: structure and names,
  // every entry's blocks and checksum, the package checksum, the limits.
  untold::budget budget(lim, bytes->size());
  auto p = u3::open_package(*bytes, {.limits = lim, .deep_checks = true, .budget = &budget});
  if (!p) return fail(p.error());
  std::vector<const u3::package_entry*> wanted;
  if (a.names.empty()) {
    for (const u3::package_entry& e : p->entries) wanted.push_back(&e);
  } else {
    for (const std::string& n : a.names) {
      const u3::package_entry* e = p->find(n);
      if (e == nullptr) return fail(make_error(errc::invalid_argument).at_field("NAME").with_subject(n));
      if (std::find(wanted.begin(), wanted.end(), e) == wanted.end()) wanted.push_back(e);
    }
  }
  if (auto s = u3::check_extract_paths(wanted); !s) return fail(s.error());

  // 2. The output directory (the user's path is followed; nothing below it is).
  const fs::path out_dir(a.out_dir);
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return io_fail("cannot create " + quote_path(out_dir.string()) + ": " + ec.message());
  descriptor out(::open(out_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (const int os_error = errno; out.get() < 0)
    return io_fail("cannot open " + quote_path(out_dir.string()) + ": " + std::strerror(os_error));
  if (std::string problem = check_targets(out.get(), out_dir, wanted); !problem.empty())
    return io_fail("cannot extract into " + problem);

  // 3. Every entry into a fresh temporary directory inside the output one:
  // a failure leaves the output directory as it was.
  std::string pattern = (out_dir / ".untold-extract-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    const int os_error = errno;
    return io_fail("cannot create a temporary directory in " + quote_path(out_dir.string()) + ": " +
                   std::strerror(os_error));
  }
  const fs::path temp(pattern);
  struct cleanup {
    fs::path dir;
    ~cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);  // does not follow symbolic links
    }
  } remove_temp{temp};
  descriptor staging(::open(temp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (const int os_error = errno; staging.get() < 0)
    return io_fail("cannot open " + quote_path(temp.string()) + ": " + std::strerror(os_error));
  // One buffer for the largest entry wanted (the deep checks bounded each by
  // the limits), reused for every entry: nothing is zero-filled per entry.
  std::size_t largest = 0;
  for (const u3::package_entry* e : wanted) largest = std::max<std::size_t>(largest, e->size);
  std::vector<std::byte> buffer(largest);
  json extracted = json::array();
  for (const u3::package_entry* e : wanted) {
    const mutable_byte_span data = mutable_byte_span(buffer).first(e->size);
    if (auto s = u3::extract_entry_into(*p, *e, data, lim); !s) return fail(s.error());  // verified above: not expected
    const auto [parent, leaf] = split_name(e->name);
    std::string failed;
    descriptor dir = open_tree(staging.get(), parent, true, failed);
    if (dir.get() < 0 || !write_new_file(dir.get(), leaf, data)) {
      const int os_error = errno;
      return io_fail("cannot write " + quote_path((temp / std::string(e->name)).string()) + ": " +
                     std::strerror(os_error));
    }
    extracted.push_back(json{{"name", std::string(e->name)}, {"path", (out_dir / std::string(e->name)).string()},
                             {"size", data.size()}});
  }
  // 4. Move each file into place: directories opened without following a
  // link, the file renamed over a regular file of the same name.
  for (const u3::package_entry* e : wanted) {
    const auto [parent, leaf] = split_name(e->name);
    std::string failed;
    descriptor to = open_tree(out.get(), parent, true, failed);
    if (to.get() < 0) {
      const int os_error = errno;
      return io_fail("cannot extract into " + refusal(out_dir, failed, os_error));
    }
    descriptor from = open_tree(staging.get(), parent, false, failed);
    if (from.get() < 0 || ::renameat(from.get(), leaf.c_str(), to.get(), leaf.c_str()) != 0) {
      const int os_error = errno;
      return io_fail("cannot move " + quote_path((out_dir / std::string(e->name)).string()) + " into place: " +
                     std::strerror(os_error));
    }
    const std::string target = (out_dir / std::string(e->name)).string();
    if (flags.verbose) complain("extracted " + quote_path(target));
    if (!flags.quiet && !flags.json) std::printf("%s\n", escaped(target).c_str());
  }
  if (flags.json) {
    report["valid"] = true;
    report["extracted"] = std::move(extracted);
    print_json(report);
  }
  return exit_ok;
}

int pak_create(const pak_args& a, const common_flags& flags) {
  std::error_code ec;
  if (!fs::is_directory(a.source_dir, ec)) {
    complain("cannot read " + quote_path(a.source_dir) + ": " +
                  (ec ? ec.message() : std::string(fs::exists(a.source_dir) ? "Not a directory" : "No such file or directory")));
    return exit_io;
  }
  std::vector<std::string> names;
  for (auto it = fs::recursive_directory_iterator(a.source_dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file()) names.push_back(fs::relative(it->path(), a.source_dir).generic_string());
  if (ec) {
    complain("cannot list " + quote_path(a.source_dir) + ": " + ec.message());
    return exit_io;
  }
  std::sort(names.begin(), names.end());  // deterministic order, whatever the file system
  std::vector<std::vector<std::byte>> contents;
  contents.reserve(names.size());
  for (const std::string& n : names) {
    auto bytes = read_all(fs::path(a.source_dir) / n);
    if (!bytes) return exit_io;
    contents.push_back(std::move(*bytes));
  }
  std::vector<u3::package_input> inputs;
  for (std::size_t i = 0; i < names.size(); ++i) inputs.push_back({names[i], contents[i]});
  auto pak = u3::write_package(inputs, {.compress = a.compress, .level = a.level, .trailing_size = !a.no_trailing_size});
  if (!pak) {
    if (flags.json) print_json(invalid(base(a.output), pak.error()));
    else complain(pak.error().describe());
    return exit_invalid;
  }
  if (auto failed = write_output(a.output, *pak)) {
    complain(failed->message);
    return exit_io;
  }
  if (flags.json) {
    json j = base(a.output);
    j["valid"] = true;
    j["entries"] = names.size();
    j["bytes"] = pak->size();
    j["compressed"] = a.compress;
    print_json(j);
  } else if (!flags.quiet) {
    std::printf("%s: %zu entries, %zu bytes\n", escaped(a.output).c_str(), names.size(), pak->size());
  }
  return exit_ok;
}

}  // namespace

void add_pak_command(CLI::App& app, context& ctx) {
  auto args = std::make_shared<pak_args>();
  CLI::App* pak = app.add_subcommand("pak", "List, extract or create Urho3D packages (.pak: UPAK, ULZ4)");
  pak->require_subcommand(1, 1);

  CLI::App* list = pak->add_subcommand("list", "List a package's entries (size, stored size, SDBM checksum, name)");
  list->add_option("FILE", args->file, "the .pak")->required();
  add_common_flags(*list, ctx.flags, "print the package as a JSON object");
  list->callback([args, &ctx] { ctx.exit_code = pak_list(*args, ctx.flags); });

  CLI::App* extract = pak->add_subcommand("extract", "Extract entries (all, or the named ones), checking checksums");
  extract->add_option("FILE", args->file, "the .pak")->required();
  extract->add_option("NAME", args->names, "entry names (default: every entry)");
  extract->add_option("-o,--output", args->out_dir, "directory to extract into (default: .)");
  extract->add_option("--max-total-bytes", args->max_total_bytes,
                      "allow the entries to decode to this many bytes in total (default 1 GiB, as validate; "
                      "also lifts the per-entry cap)")
      ->check(CLI::PositiveNumber);
  add_common_flags(*extract, ctx.flags, "print {file, extracted: [{name, path, size}]} as JSON");
  extract->callback([args, &ctx] { ctx.exit_code = pak_extract(*args, ctx.flags); });

  CLI::App* create = pak->add_subcommand("create", "Pack a directory (entries sorted by path)");
  create->add_option("DIR", args->source_dir, "the directory to pack")->required();
  create->add_option("-o,--output", args->output, "the .pak to write")->required();
  create->add_flag("--compress", args->compress, "ULZ4: LZ4HC blocks of 32 KiB");
  create->add_option("--level", args->level, "LZ4HC level (default 9, like Urho3D's PackageTool)")->check(CLI::Range(1, 12));
  create->add_flag("--no-trailing-size", args->no_trailing_size, "do not append the package size");
  add_common_flags(*create, ctx.flags, "print {file, entries, bytes, compressed} as JSON");
  create->callback([args, &ctx] { ctx.exit_code = pak_create(*args, ctx.flags); });
}

}  // namespace untold::tools::cli
