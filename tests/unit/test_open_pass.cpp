// The whole-file open's pass (detail/open_pass.hpp): with integrity::full or
// deep checks, untold::open verifies the remaining block digests (and the
// contentHash) and runs the deep checks block by block, through
// open_options::executor. It must accept and reject exactly what the stages
// run one after the other accept and reject, with the same first error,
// whatever executor runs the jobs and in whatever order.
#include "../support.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <untold/thread_pool.hpp>

using test::bytes;

namespace {

/// The serial reference: the stages of untold::open one after the other,
/// every chunk verified as it loads, as open did before the pass existed.
untold::result<untold::asset> serial_open(untold::byte_span file, const untold::open_options& options) {
  using untold::asset_loader;
  auto a = asset_loader::from_directory(file, file.size(), options);
  if (!a) return a.error();
  const auto content_hash = asset_loader::attach_integrity(*a, file, options);
  if (!content_hash) return content_hash.error();
  const bool every_byte = options.deep_checks || options.effective_integrity() == untold::integrity::full;
  if (*content_hash) UNTOLD_TRY(untold::verify_content_hash(a->header(), a->chunks(), file));
  for (std::uint32_t row = 0; row < a->chunks().size(); ++row) {
    const untold::chunk_entry& c = a->chunks()[row];
    UNTOLD_TRY(asset_loader::load_payload(*a, row, untold::subspan(file, {c.file_offset, c.compressed_size})));
    if (every_byte && untold::detail::integrity_access::is_deferred(*a, row))
      UNTOLD_TRY(untold::detail::integrity_access::verify_stored(*a, row, 0, a->payload(row)));
  }
  UNTOLD_TRY(asset_loader::validate_metadata(*a));
  if (options.deep_checks) UNTOLD_TRY(asset_loader::validate_all_deep(*a));
  return a;
}

/// An executor that records its batches and runs each batch's jobs on two
/// threads in an order unlike the serial one (odd indices first, backwards).
struct counting_executor {
  std::atomic<int> batches{0};
  std::atomic<std::size_t> jobs{0};

  static void run(void* self, std::size_t count, untold::job_function job, void* context) {
    auto& e = *static_cast<counting_executor*>(self);
    ++e.batches;
    e.jobs += count;
    std::thread other([&] {
      for (std::size_t i = count; i-- > 0;)
        if (i % 2 == 1) job(context, i);
    });
    for (std::size_t i = 0; i < count; i += 2) job(context, i);
    other.join();
  }
  untold::executor executor() { return {&counting_executor::run, this, 2}; }
};

std::string outcome(const untold::result<untold::asset>& a) { return a ? std::string("accepted") : a.error().describe(); }

/// open with and without executors gives serial_open's outcome, error text included.
void check_same_as_serial(const bytes& f, untold::open_options options) {
  const std::string expected = outcome(serial_open(f, options));
  CHECK(outcome(untold::open(f, options)) == expected);
  counting_executor counting;
  options.executor = counting.executor();
  CHECK(outcome(untold::open(f, options)) == expected);
}

const untold::open_options pass_options[] = {
    {.deep_checks = true, .integrity = untold::integrity::strict},  // the contentHash too, always
    {.deep_checks = true, .integrity = untold::integrity::full},    // a version 3 chunk: no contentHash pass
    {.deep_checks = true},  // lazy: every block digest, no contentHash when they are current
    {.deep_checks = true, .integrity = untold::integrity::none},
    {.integrity = untold::integrity::full},
};

bytes with_digests(bool content_hash, bool compressed = false,
                   untold::vertex_layout layout = untold::vertex_layout::pbr_static_v1) {
  untold::write_options options;
  options.block_digests = true;
  options.vertex_layout = layout;
  if (compressed) options.compression.data = {untold::compression::lz4, 0};
  return test::write_scene(content_hash, options);
}

}  // namespace

TEST_CASE("open pass: every single-byte change gives the serial stages' first error") {
  struct variant {
    const char* name;
    bytes file;
    bool mutate;  // the others are checked unchanged (keeps the test fast under sanitizers)
  };
  const variant variants[] = {
      {"digests + contentHash", with_digests(true), true},
      {"digests, no contentHash", with_digests(false), false},
      {"digests, lz4 geometry", with_digests(false, true), false},
      {"contentHash only", test::write_scene(true, {.block_digests = false}), false},
      {"nothing to verify (deep rules only)", test::write_scene(false), true},
      {"PBR_QUANT_V1 (no position pieces), digests + contentHash",
       with_digests(true, false, untold::vertex_layout::pbr_quant_v1), true},
  };
  for (const variant& v : variants) {
    CAPTURE(v.name);
    for (const untold::open_options& o : pass_options) check_same_as_serial(v.file, o);
    if (!v.mutate) continue;
    // Bytes every 1021 in the first 8 KiB (header, table, digests, metadata)
    // and 10 across the file (geometry), flipped to a value that breaks
    // floats and indices alike.
    const std::size_t stride = v.file.size() / 11 | 1;
    for (std::size_t at = 3; at < v.file.size(); at += at < 8192 ? 1021 : stride) {
      CAPTURE(at);
      bytes f = v.file;
      f[at] ^= std::byte{0xC1};
      for (const untold::open_options& o : pass_options) check_same_as_serial(f, o);
    }
  }
}

TEST_CASE("open pass: several corrupt blocks and a bad record report the serial first error") {
  const bytes good = with_digests(true);
  auto probe = untold::open(good);
  REQUIRE(probe.has_value());
  const untold::chunk_entry vertex = probe->chunks()[*probe->find_chunk(untold::chunk_type::vertex_data)];
  const untold::chunk_entry index = probe->chunks()[*probe->find_chunk(untold::chunk_type::index_data)];
  REQUIRE(vertex.compressed_size > 3 * untold::default_digest_block_size);
  bytes f = good;
  // Blocks 2 and 0 of VERTEX_DATA, the last of INDEX_DATA: the lowest block
  // of the lowest row is reported, whichever job finds its block first.
  f[vertex.file_offset + 2 * untold::default_digest_block_size + 5] ^= std::byte{1};
  f[vertex.file_offset + 7] ^= std::byte{1};
  f[index.file_offset + index.compressed_size - 1] ^= std::byte{1};
  for (const untold::open_options& o : pass_options) {
    check_same_as_serial(f, o);
    if (o.integrity == untold::integrity::none) continue;
    const auto a = untold::open(f, o);
    REQUIRE_FALSE(a.has_value());
    if (o.integrity == untold::integrity::strict) {  // the contentHash comes first
      CHECK(a.error().rule_id() == std::string_view("R-HASH"));
      continue;
    }
    CHECK(a.error().context.field == std::string_view("block"));
    CHECK(a.error().context.value == 0);
  }
  // A metadata error comes after the blocks of the rows before it.
  bytes g = f;
  const std::size_t mesh = test::record_offset(g, 3, 0, 104);
  test::put_u64(g, mesh + 32, 0xFFFFFFFFFFFFFFE0ull);  // R-VERTEX-RANGE
  for (const untold::open_options& o : pass_options) check_same_as_serial(g, o);
}

TEST_CASE("open pass: meshes sharing their bytes are checked once per shared span, with the same results") {
  // Every mesh made to use the first mesh's vertices and indices: one shared
  // span per chunk, scanned once in the pass (the nested spans that fall
  // back to range extrema: tests/unit/test_adversarial.cpp).
  bytes f = test::write_scene(false);
  auto a = untold::open(f);
  REQUIRE(a.has_value());
  const std::size_t first = test::record_offset(f, 3, 0, 104);
  for (std::size_t row = 1; row < a->meshes().size(); ++row) {
    const std::size_t m = test::record_offset(f, 3, row, 104);
    for (const std::size_t field : {16, 20, 32, 40, 48, 56}) {  // counts, offsets, sizes
      if (field < 32)
        test::put_u32(f, m + field, test::get_u32(f, first + field));
      else
        test::put_u64(f, m + field, test::get_u64(f, first + field));
    }
    test::put_u32(f, m + 12, test::get_u32(f, first + 12));  // indexType
    for (std::size_t b = 80; b < 104; ++b) f[m + b] = f[first + b];  // localBounds
  }
  for (const untold::open_options& o : pass_options) check_same_as_serial(f, o);
  REQUIRE(untold::open(f, {.deep_checks = true}).has_value());
  // A position out of every mesh's bounds: each reports it (the first mesh first).
  const auto vertex_at = test::chunk_payload_offset(f, 6) + test::get_u64(f, first + 32);
  test::put_f32(f, vertex_at, 1e30f);
  for (const untold::open_options& o : pass_options) check_same_as_serial(f, o);
  CHECK(test::rejection(f, {.deep_checks = true}) == "R-BOUNDS");
}

TEST_CASE("open pass: the executor runs the pass, and only when open reads every byte") {
  const bytes f = with_digests(true);
  counting_executor counting;
  for (const auto mode : {untold::integrity::full, untold::integrity::strict}) {
    CAPTURE(static_cast<int>(mode));
    // One batch, a job per two blocks; with `strict` one more for the
    // contentHash, which `full` leaves to the blocks of a version 3 chunk.
    auto a = untold::open(f, {.deep_checks = true, .integrity = mode, .executor = counting.executor()});
    REQUIRE(a.has_value());
    CHECK(counting.batches == 1);
    std::size_t blocks = 0;
    for (const untold::chunk_type t : {untold::chunk_type::vertex_data, untold::chunk_type::index_data,
                                       untold::chunk_type::edge_index_data})
      blocks += (untold::digest_block_count(a->payload(t).size(), untold::default_digest_block_size) + 1) / 2;
    CHECK(counting.jobs == blocks + (mode == untold::integrity::strict ? 1 : 0));
    CHECK(untold::verify_all(*a).has_value());
    counting.batches = 0;
    counting.jobs = 0;
  }
  auto lazy = untold::open(f, {.executor = counting.executor()});  // the default: no pass
  REQUIRE(lazy.has_value());
  CHECK(counting.batches == 0);
}

TEST_CASE("open pass: thread_pool gives the serial result, a busy pool runs a batch on its caller") {
  const bytes good = with_digests(true);
  bytes bad = good;
  auto probe = untold::open(good);
  REQUIRE(probe.has_value());
  bad[probe->chunks()[*probe->find_chunk(untold::chunk_type::index_data)].file_offset + 3] ^= std::byte{4};
  untold::thread_pool pool(2);
  CHECK(pool.threads() == 2);
  for (const bytes* f : {&good, static_cast<const bytes*>(&bad)}) {
    const untold::open_options serial{.deep_checks = true, .integrity = untold::integrity::full};
    untold::open_options parallel = serial;
    parallel.executor = pool.executor();
    const std::string expected = outcome(serial_open(*f, serial));
    // Four threads share the pool: batches that find it busy run inline.
    std::vector<std::string> got(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < got.size(); ++t)
      threads.emplace_back([&, t] { got[t] = outcome(untold::open(*f, parallel)); });
    for (std::thread& t : threads) t.join();
    for (const std::string& g : got) CHECK(g == expected);
  }
  // A pool of one thread runs every job on the caller.
  untold::thread_pool single(1);
  std::vector<std::thread::id> ran_on(100);
  auto record = [&](std::size_t i) noexcept { ran_on[i] = std::this_thread::get_id(); };
  untold::run_jobs(single.executor(), ran_on.size(), record);
  CHECK(std::all_of(ran_on.begin(), ran_on.end(), [](std::thread::id id) { return id == std::this_thread::get_id(); }));
  // Every job of a batch runs exactly once.
  std::vector<std::atomic<int>> runs(1000);
  auto count = [&](std::size_t i) noexcept { ++runs[i]; };
  untold::run_jobs(pool.executor(), runs.size(), count);
  CHECK(std::all_of(runs.begin(), runs.end(), [](const std::atomic<int>& r) { return r == 1; }));
}
