// Opening and validating generated scenes (issue #8), each number next to a
// baseline measured in the same run:
//
//   open_metadata_*/N     untold::open of an in-memory file with N meshes and
//                         16 MiB of geometry; x_memcpy_prefix = open time /
//                         time to memcpy the metadata prefix (every byte
//                         before VERTEX_DATA) once.
//   open_file_warm_*/MB   open_file (mmap + open + unmap) of 1000 meshes with
//                         1 MiB or 1 GiB of geometry on disk, page cache warm;
//                         vs_1mb = time / the same benchmark's 1 MiB time;
//                         mmap_1gib_span: each file mapped into a 1 GiB span
//                         (the kernel's cost of the mapping's size alone).
//   open_*_cold/MB        the same after posix_fadvise(POSIX_FADV_DONTNEED) of
//                         the file before each iteration (untimed), i.e. read
//                         from the device; vs_warm = cold / warm time,
//                         vs_read = time / a pread of the whole file (warm
//                         or cold like the benchmark: the physical limit for
//                         anything that reads every byte); resident_500ms_after
//                         = fraction of the file in the page cache 500 ms after
//                         one more cold open (background readahead it caused).
//   validate_*/MB         deep checks and content hash of a scene with 256
//                         MiB of geometry (and 1 GiB with UNTOLD_BENCH_1GIB=1);
//                         vs_memcpy = throughput / memcpy of the same bytes.
//   range_bench/load_all_*/MB  streamed_asset::open + load_all with deep
//                         checks, through file_range_source::open(path)
//                         (`default`: the file mapped, chunks lent in place)
//                         or file_range_source::open(path, file_access::pread)
//                         (`pread`: every chunk read into a fresh buffer),
//                         against
//                         range_bench/deep_open_file_*: open_file of the same
//                         file with deep checks (the same rules, the same hash
//                         mode); vs_deep_open = time / that open's time. Warm
//                         page cache, wall time; `nohash`: verify_hash = false.
//
//   untold_bench --benchmark_filter='open_|validate_|range_'
//
// Files live in $UNTOLD_BENCH_DIR (default /tmp/untold-bench), written on
// first use (the 1 GiB one needs about 1.1 GB of disk, and 3.4 GB of memory
// for the ~20 s it takes to generate, once).
#include "bench_common.hpp"

#include <sys/mman.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace {

using namespace untold_bench;
using untold::byte_span;

const untold::open_options no_hash{.verify_hash = false};

// ---- metadata scaling (in memory) -------------------------------------------------

constexpr std::uint64_t metadata_geometry_mb = 16;

// Without block digests, deliberately: the "hash" rows measure the
// whole-file contentHash path (the default files: `open_default` below).
scene_spec metadata_scene(std::uint32_t meshes) {
  scene_spec spec = scene_mb(meshes, metadata_geometry_mb);
  spec.block_digests = false;
  return spec;
}

/// Bytes before the first geometry chunk: header, table, strings, records.
std::size_t metadata_prefix(byte_span file) {
  auto a = untold::open(file, no_hash);
  std::uint64_t end = untold::header_size;
  for (const untold::chunk_entry& c : a->chunks())
    if (untold::is_metadata_chunk(c.chunk_type)) end = std::max(end, c.file_offset + c.compressed_size);
  return static_cast<std::size_t>(end);
}

void open_metadata_memcpy_prefix(benchmark::State& state) {
  const auto meshes = static_cast<std::uint32_t>(state.range(0));
  const auto& file = untold_scene(metadata_scene(meshes));
  const std::size_t prefix = metadata_prefix(file);
  memcpy_baseline(state, "prefix/" + std::to_string(meshes), {byte_span(file).first(prefix)});
  state.counters["metadata_kib"] = static_cast<double>(prefix) / 1024.0;
}

void open_metadata(benchmark::State& state, bool verify_hash) {
  const auto meshes = static_cast<std::uint32_t>(state.range(0));
  const auto& file = untold_scene(metadata_scene(meshes));
  const untold::open_options options{.verify_hash = verify_hash};
  const double s = cpu_loop(state, [&] {
    auto a = untold::open(file, options);
    if (!a) state.SkipWithError("open failed");
    benchmark::DoNotOptimize(a);
  });
  time_ratio(state, "x_memcpy_prefix", "prefix/" + std::to_string(meshes), s);
  state.counters["ns_per_mesh"] = 1e9 * s / static_cast<double>(state.iterations()) / meshes;
  state.counters["file_mb"] = static_cast<double>(file.size()) / (1 << 20);
}

void mesh_counts(benchmark::internal::Benchmark* b) {
  b->ArgName("meshes")->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
}
BENCHMARK(open_metadata_memcpy_prefix)->Apply(mesh_counts);
BENCHMARK_CAPTURE(open_metadata, nohash, false)->Apply(mesh_counts);
BENCHMARK_CAPTURE(open_metadata, hash, true)->Apply(mesh_counts);

// ---- the same metadata over 1 MiB and 1 GiB of geometry, on disk ------------------

constexpr std::uint32_t file_meshes = 1000;

// Written without block digests, deliberately: the `_hash` rows measure the
// whole-file contentHash path (what a lazy open does for such files); the
// default files' open is the integrity section's `open_default`.
std::filesystem::path file_for(benchmark::State& state) {
  scene_spec spec = scene_mb(file_meshes, static_cast<std::uint64_t>(state.range(0)));
  spec.block_digests = false;
  return untold_scene_file(spec);
}

// The ways in, each returning whether it opened.
bool open_mapped(const std::filesystem::path& path, const untold::open_options& options) {
  auto a = untold::open_file(path, options);
  benchmark::DoNotOptimize(a);
  return a.has_value();
}
// mmap without untold::mapped_file's posix_madvise(WILLNEED): pages come in on demand.
bool open_mapped_no_willneed(const std::filesystem::path& path, const untold::open_options& options) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  const auto size = static_cast<std::size_t>(std::filesystem::file_size(path));
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return false;
  auto a = untold::open(byte_span(static_cast<const std::byte*>(p), size), options);
  const bool ok = a.has_value();
  benchmark::DoNotOptimize(a);
  a = untold::asset{};  // drop the views before the mapping goes
  ::munmap(p, size);
  return ok;
}
// As open_mapped_no_willneed, but the file is mapped at the start of a
// 2 MiB-aligned address span of at least 1 GiB (the rest PROT_NONE), as the
// kernel places the mapping of a 1 GiB file. On the 1 MiB file this is the
// same untold work as mmap_no_willneed with only the span changed: what the
// size of a mapping costs the kernel (page-table setup and teardown).
bool open_mapped_in_1gib_span(const std::filesystem::path& path, const untold::open_options& options) {
  constexpr std::size_t align = std::size_t{2} << 20;
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  const auto size = static_cast<std::size_t>(std::filesystem::file_size(path));
  const std::size_t span = std::max(size, std::size_t{1} << 30) + align;
  void* reserved = ::mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) {
    ::close(fd);
    return false;
  }
  const auto start = (reinterpret_cast<std::uintptr_t>(reserved) + align - 1) & ~std::uintptr_t{align - 1};
  void* p = ::mmap(reinterpret_cast<void*>(start), size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
  ::close(fd);
  bool ok = false;
  if (p != MAP_FAILED) {
    auto a = untold::open(byte_span(static_cast<const std::byte*>(p), size), options);
    ok = a.has_value();
    benchmark::DoNotOptimize(a);
  }
  ::munmap(reserved, span);
  return ok;
}
// Header, table and metadata by pread (the default source maps the file too,
// but reads by pread): the geometry is never read.
bool open_streamed(const std::filesystem::path& path, const untold::open_options& options) {
  auto source = untold::file_range_source::open(path);
  if (!source) return false;
  auto a = untold::streamed_asset::open(*source, {.open = options});
  benchmark::DoNotOptimize(a);
  return a.has_value();
}
// The physical limit for anything that reads every byte: pread of the whole file.
bool read_whole(const std::filesystem::path& path, const untold::open_options&) {
  auto bytes = untold::read_file(path);
  benchmark::DoNotOptimize(bytes);
  return bytes.has_value();
}

using open_fn = bool (*)(const std::filesystem::path&, const untold::open_options&);

/// The fraction of `path`'s pages in the page cache (mincore).
double resident_fraction(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  const auto size = static_cast<std::size_t>(std::filesystem::file_size(path));
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return -1;
  std::vector<unsigned char> pages((size + 4095) / 4096);
  std::size_t in = 0;
  if (::mincore(p, size, pages.data()) == 0)
    for (const unsigned char r : pages) in += r & 1;
  ::munmap(p, size);
  return static_cast<double>(in) / static_cast<double>(pages.size());
}

void open_file_bench(benchmark::State& state, const char* key, open_fn fn, bool verify_hash, bool cold) {
  const std::filesystem::path path = file_for(state);
  const untold::open_options options{.verify_hash = verify_hash};
  const std::string mb = std::to_string(state.range(0));
  if (cold) {  // state, once, that dropping works here
    drop_from_page_cache(path);
    state.counters["resident_after_drop"] = resident_fraction(path);
  } else {
    (void)fn(path, options);  // warm the page cache
  }
  bool ok = true;
  const double s = wall_loop(
      state, [&] { if (cold) drop_from_page_cache(path); }, [&] { ok = fn(path, options) && ok; });
  if (!ok) state.SkipWithError("open failed");
  if (cold && fn != read_whole) {  // what the open made the kernel read in the background
    drop_from_page_cache(path);
    (void)fn(path, options);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    state.counters["resident_500ms_after"] = resident_fraction(path);
  }
  const std::string name = std::string(key) + (verify_hash ? "_hash" : ""), temperature = cold ? "cold/" : "warm/";
  if (cold) {
    time_ratio(state, "vs_warm", name + "/warm/" + mb, s);
  } else {
    set_baseline(state, name + "/warm/" + mb, s);
    if (std::string(key) != "read") time_ratio(state, "vs_1mb", name + "/warm/1", s);
    if (std::string(key) == "mmap_1gib_span") time_ratio(state, "vs_plain_mapping", "mmap_no_willneed/warm/" + mb, s);
  }
  if (std::string(key) == "read")
    set_baseline(state, "read/" + temperature + mb, s);
  else
    time_ratio(state, "vs_read", "read/" + temperature + mb, s);
  state.counters["file_mb"] = static_cast<double>(std::filesystem::file_size(path)) / (1 << 20);
}

void file_sizes(benchmark::internal::Benchmark* b) { b->ArgName("geometry_mb")->Arg(1)->Arg(1024)->UseManualTime(); }

// Warm: the same 1000-mesh metadata over 1 MiB and 1 GiB of geometry.
BENCHMARK_CAPTURE(open_file_bench, read_whole_warm, "read", read_whole, false, false)->Apply(file_sizes);
BENCHMARK_CAPTURE(open_file_bench, file_warm, "file", open_mapped, false, false)->Apply(file_sizes);
BENCHMARK_CAPTURE(open_file_bench, file_warm_hash, "file", open_mapped, true, false)->Apply(file_sizes);
BENCHMARK_CAPTURE(open_file_bench, mmap_no_willneed_warm, "mmap_no_willneed", open_mapped_no_willneed, false, false)
    ->Apply(file_sizes);
BENCHMARK_CAPTURE(open_file_bench, mmap_1gib_span_warm, "mmap_1gib_span", open_mapped_in_1gib_span, false, false)
    ->Apply(file_sizes);
BENCHMARK_CAPTURE(open_file_bench, streamed_warm, "streamed", open_streamed, false, false)->Apply(file_sizes);
// Cold: the file dropped from the page cache before each iteration.
BENCHMARK_CAPTURE(open_file_bench, read_whole_cold, "read", read_whole, false, true)->Apply(file_sizes);
BENCHMARK_CAPTURE(open_file_bench, file_cold, "file", open_mapped, false, true)->Apply(file_sizes);
BENCHMARK_CAPTURE(open_file_bench, file_cold_hash, "file", open_mapped, true, true)->Apply(file_sizes);
BENCHMARK_CAPTURE(open_file_bench, mmap_no_willneed_cold, "mmap_no_willneed", open_mapped_no_willneed, false, true)
    ->Apply(file_sizes);
BENCHMARK_CAPTURE(open_file_bench, streamed_cold, "streamed", open_streamed, false, true)->Apply(file_sizes);

// ---- integrity: default options with and without block digests -------------------

// open_file with default options (integrity::lazy) on the same scene written
// without and with the untold.integrity chunk. Without, the open hashes every
// byte (the contentHash); with, the metadata and the chunk's top part only.
// `verify_all` adds verifying every block afterwards (what a lazy open's
// accesses cost in total, once). Warm page cache, wall time.
void open_default(benchmark::State& state, bool digests, bool verify_all) {
  scene_spec spec = scene_mb(file_meshes, static_cast<std::uint64_t>(state.range(0)));
  if (!digests) spec.block_digests = false;  // the labelled no-digest row; the others: writer defaults
  const std::filesystem::path path = untold_scene_file(spec);
  const std::string mb = std::to_string(state.range(0));
  const auto run = [&] {
    auto a = untold::open_file(path);
    const bool ok = a && (!verify_all || untold::verify_all(a->asset));
    benchmark::DoNotOptimize(a);
    return ok;
  };
  (void)run();  // warm the page cache
  bool ok = true;
  const double s = wall_loop(state, [] {}, [&] { ok = run() && ok; });
  if (!ok) state.SkipWithError("open failed");
  const std::string key = std::string("default_") + (digests ? "digests" : "plain") + (verify_all ? "_verify_all/" : "/");
  set_baseline(state, key + mb, s);
  time_ratio(state, "vs_1mb", key + "1", s);
  if (digests) time_ratio(state, "vs_no_digests", "default_plain/" + mb, s);
  state.counters["file_mb"] = static_cast<double>(std::filesystem::file_size(path)) / (1 << 20);
}
BENCHMARK_CAPTURE(open_default, plain, false, false)->Apply(file_sizes);
BENCHMARK_CAPTURE(open_default, digests, true, false)->Apply(file_sizes);
BENCHMARK_CAPTURE(open_default, digests_verify_all, true, true)->Apply(file_sizes);

// ---- validation throughput (in memory) --------------------------------------------

/// Geometry sizes (MiB) of the in-memory validation and range benchmarks:
/// 256, and 1024 when UNTOLD_BENCH_1GIB is set (the 1 GiB figure; it
/// takes a few GB of memory and about a minute more).
void deep_sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("geometry_mb")->Arg(256);
  if (const char* big = std::getenv("UNTOLD_BENCH_1GIB"); big && *big && *big != '0') b->Arg(1024);
}

const untold::asset& validate_asset(std::uint64_t mb) {
  static std::map<std::uint64_t, untold::asset> assets;
  auto& a = assets[mb];
  if (a.chunks().empty()) {
    auto opened = untold::open(untold_scene(scene_mb(file_meshes, mb)), no_hash);
    if (!opened) std::abort();
    a = std::move(*opened);
  }
  return a;
}
std::size_t geometry_bytes(const untold::asset& a) {
  return a.payload(untold::chunk_type::vertex_data).size() + a.payload(untold::chunk_type::index_data).size();
}

void validate_memcpy(benchmark::State& state) {
  const auto& a = validate_asset(static_cast<std::uint64_t>(state.range(0)));
  memcpy_baseline(state, "validate/memcpy/" + std::to_string(state.range(0)),
                  {a.payload(untold::chunk_type::vertex_data), a.payload(untold::chunk_type::index_data)});
}
// R-INDEX-VALUE, R-FINITE, R-BOUNDS over every vertex and index.
void validate_deep(benchmark::State& state) {
  const auto& a = validate_asset(static_cast<std::uint64_t>(state.range(0)));
  const double s = cpu_loop(state, [&] {
    const auto st = untold::validate_deep(a);
    if (!st) state.SkipWithError("deep checks failed");
    benchmark::DoNotOptimize(st);
  });
  speed_ratio(state, "vs_memcpy", "validate/memcpy/" + std::to_string(state.range(0)), s);
  set_bytes(state, geometry_bytes(a));
}
// R-HASH: SHA-256 of every stored chunk (the whole file, in effect).
void validate_hash(benchmark::State& state) {
  const auto mb = static_cast<std::uint64_t>(state.range(0));
  const auto& file = untold_scene(scene_mb(file_meshes, mb));
  const auto& a = validate_asset(mb);
  const double s = cpu_loop(state, [&] {
    const auto st = untold::verify_content_hash(a.header(), a.chunks(), file);
    if (!st) state.SkipWithError("hash failed");
    benchmark::DoNotOptimize(st);
  });
  speed_ratio(state, "vs_memcpy", "validate/memcpy/" + std::to_string(mb), s,
              static_cast<double>(file.size()) / static_cast<double>(geometry_bytes(a)));
  set_bytes(state, file.size());
}
BENCHMARK(validate_memcpy)->Apply(deep_sizes);
BENCHMARK(validate_deep)->Apply(deep_sizes);
BENCHMARK(validate_hash)->Apply(deep_sizes);

// ---- byte-range load_all vs a whole-file deep open (on disk, warm) ----------------

// open_file with deep checks: the baseline of range_load_all.
bool open_deep(const std::filesystem::path& path, const untold::open_options& options) {
  auto a = untold::open_file(path, options);
  benchmark::DoNotOptimize(a);
  return a.has_value();
}
// Every byte through a file_range_source opened with `access`: open (header,
// table, metadata), then load_all.
template <untold::file_access access>
bool load_all_file(const std::filesystem::path& path, const untold::open_options& options) {
  auto source = untold::file_range_source::open(path, access);
  if (!source) return false;
  auto s = untold::streamed_asset::open(*source, {.open = options});
  const bool ok = s && s->load_all();
  benchmark::DoNotOptimize(s);
  return ok;
}
// The default: the file mapped, chunks lent in place.
bool load_all_default(const std::filesystem::path& path, const untold::open_options& options) {
  return load_all_file<untold::file_access::mapped>(path, options);
}
// Explicit pread: each chunk read into a fresh buffer.
bool load_all_pread(const std::filesystem::path& path, const untold::open_options& options) {
  return load_all_file<untold::file_access::pread>(path, options);
}

void range_bench(benchmark::State& state, open_fn fn, bool verify_hash) {
  const std::string mb = std::to_string(state.range(0));
  const std::filesystem::path path = untold_scene_file(scene_mb(file_meshes, static_cast<std::uint64_t>(state.range(0))));
  const untold::open_options options{.deep_checks = true, .verify_hash = verify_hash};
  (void)fn(path, options);  // warm the page cache
  bool ok = true;
  const double s = wall_loop(state, [] {}, [&] { ok = fn(path, options) && ok; });
  if (!ok) state.SkipWithError("open or load failed");
  const std::string key = std::string("range/deep_open/") + (verify_hash ? "hash/" : "nohash/") + mb;
  if (fn == open_deep)
    set_baseline(state, key, s);
  else
    time_ratio(state, "vs_deep_open", key, s);
  set_bytes(state, std::filesystem::file_size(path));
}
void range_sizes(benchmark::internal::Benchmark* b) { deep_sizes(b); b->UseManualTime(); }
BENCHMARK_CAPTURE(range_bench, deep_open_file_hash, open_deep, true)->Apply(range_sizes);
BENCHMARK_CAPTURE(range_bench, load_all_default_hash, load_all_default, true)->Apply(range_sizes);
BENCHMARK_CAPTURE(range_bench, load_all_pread_hash, load_all_pread, true)->Apply(range_sizes);
BENCHMARK_CAPTURE(range_bench, deep_open_file_nohash, open_deep, false)->Apply(range_sizes);
BENCHMARK_CAPTURE(range_bench, load_all_default_nohash, load_all_default, false)->Apply(range_sizes);
BENCHMARK_CAPTURE(range_bench, load_all_pread_nohash, load_all_pread, false)->Apply(range_sizes);

}  // namespace
