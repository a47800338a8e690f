// Adversarial inputs: worst cases for the validation work (it must stay
// linear in the file size, proven by counting the work, never by timing) and
// regressions for what fuzzing and the range-arithmetic audit found
// (SECURITY.md). Each regression also has an input in fuzz/corpus/.
#include "../support.hpp"

#include "../../fuzz/regressions.hpp"

#include <untold/compression.hpp>
#include <untold/validate.hpp>

using test::bytes;
namespace regress = untold_fuzz::regress;

namespace {

constexpr std::size_t entity_record_size = 136;

/// Validation work (untold::detail::validation_work) of one open.
std::uint64_t work_of(const bytes& f, const untold::open_options& options, std::string& outcome) {
  const std::uint64_t before = untold::detail::validation_work;
  outcome = test::rejection(f, options);
  return untold::detail::validation_work - before;
}

}  // namespace

TEST_CASE("adversarial: deep checks of meshes that all share every vertex and index are linear in the file size") {
  // Regression (fuzz/corpus/fuzz_open/regress-overlapping-meshes): the deep
  // checks scanned every mesh's vertex and index ranges, n meshes x n.
  std::uint64_t previous = 0;
  for (const std::uint32_t n : {4000u, 8000u}) {
    const bytes f = regress::overlapping_meshes(n);
    std::string outcome;
    const std::uint64_t work = work_of(f, {.deep_checks = true}, outcome);
    REQUIRE(outcome == "accepted");
    // Scanning every mesh's range would read n * n vertices (16M at n = 4000);
    // the range queries read a few hundred elements per mesh at most.
    CHECK(work < 2 * f.size());
    CHECK(work < std::uint64_t{n} * n / 10);
    if (previous != 0) CHECK(work < 2.5 * previous);  // doubling n about doubles the work
    previous = work;
  }
  // The same file with one vertex out of its bounds is still found, with the
  // first bad mesh and vertex.
  bytes f = regress::overlapping_meshes(4000);
  const std::size_t vertex_data = test::chunk_payload_offset(f, 6);
  test::put_f32(f, vertex_data + 32 * 1234, 8.0f);  // x = 8 > max.x = 7
  auto a = untold::open(f, {.deep_checks = true});
  REQUIRE_FALSE(a.has_value());
  CHECK(a.error().rule_id() == "R-BOUNDS");
  CHECK(a.error().context.record_index == 0);
  CHECK(a.error().context.value == 1234);
  // ... and so is one index out of range, in every mesh's range.
  f = regress::overlapping_meshes(4000);
  const std::size_t index_data = test::chunk_payload_offset(f, 7);
  test::put_u32(f, index_data + 4 * 3000, 0xFFFFFFFFu);
  a = untold::open(f, {.deep_checks = true});
  REQUIRE_FALSE(a.has_value());
  CHECK(a.error().rule_id() == "R-INDEX-VALUE");
  CHECK(a.error().context.record_index == 0);
  CHECK(a.error().context.value == 0xFFFFu);  // the offending uint16 index
  CHECK(a.error().subject() == "index 6000");  // at 4 * 3000 bytes
}

TEST_CASE("adversarial: identical mesh spans are scanned once by the open pass, nested ones fall back to range extrema") {
  const std::uint32_t n = 4000;
  std::string outcome;
  // Every mesh uses the same vertices and indices: one span each, read once
  // in the pass (detail/open_pass.hpp), plus a few steps per mesh record.
  const bytes shared = regress::overlapping_meshes(n);
  const std::uint64_t shared_work = work_of(shared, {.deep_checks = true}, outcome);
  REQUIRE(outcome == "accepted");
  CHECK(shared_work < 16 * std::uint64_t{n});
  // Mesh i now uses the first n - i vertices: n distinct spans adding up to
  // n^2 / 2 vertices, more than the chunk, so they are left to the range
  // extrema after the pass (validate_deep), still linear.
  bytes nested = shared;
  const std::size_t table = test::chunk_payload_offset(nested, 3);
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto at = untold::mutable_byte_span(nested).subspan(table + std::size_t{i} * 104, 104);
    auto m = untold::codec<untold::mesh_record>::decode(at);
    m.vertex_count = n - i;
    m.vertex_data_size_bytes = std::uint64_t{n - i} * 32;
    untold::codec<untold::mesh_record>::encode(m, at);
  }
  const std::uint64_t nested_work = work_of(nested, {.deep_checks = true}, outcome);
  REQUIRE(outcome == "accepted");
  CHECK(nested_work < 2 * nested.size());
  CHECK(nested_work < std::uint64_t{n} * n / 10);
  // The last vertex lies in mesh 0's span only: found there, by both ways.
  test::put_f32(nested, test::chunk_payload_offset(nested, 6) + 32 * std::size_t{n - 1}, 8.0f);
  bytes shared_bad = shared;
  test::put_f32(shared_bad, test::chunk_payload_offset(shared_bad, 6) + 32 * std::size_t{n - 1}, 8.0f);
  for (const bytes* f : {&nested, &shared_bad}) {
    const auto a = untold::open(*f, {.deep_checks = true});
    REQUIRE_FALSE(a.has_value());
    CHECK(a.error().rule_id() == "R-BOUNDS");
    CHECK(a.error().context.record_index == 0);
    CHECK(a.error().context.value == n - 1);
  }
}

TEST_CASE("adversarial: deep checks of skins that all share one mesh and its joint data are linear") {
  // Regression (fuzz/corpus/fuzz_open/regress-overlapping-skins): the joint
  // index check scanned every skin's range, n skins x n vertices.
  const std::uint32_t n = 4000;
  bytes f = regress::overlapping_skins(n);
  REQUIRE_FALSE(f.empty());
  std::string outcome;
  const std::uint64_t work = work_of(f, {.deep_checks = true}, outcome);
  REQUIRE(outcome == "accepted");
  CHECK(work < 2 * f.size());
  CHECK(work < std::uint64_t{n} * n / 10);
  // A joint index past the palette, in the shared data, is still found.
  const auto skin = regress::get_chunk(f, regress::row_of(f, untold::chunk_type::skin_table));
  const auto first = untold::codec<untold::skin_record>::decode(untold::byte_span(f).subspan(skin.file_offset, 48));
  const std::size_t joints = test::chunk_payload_offset(f, 16);
  test::put_u32(f, joints + first.joint_index_data_offset + 8 * 777, 5);  // vertex 777, joint 5 >= jointCount 1
  auto a = untold::open(f, {.deep_checks = true});
  REQUIRE_FALSE(a.has_value());
  CHECK(a.error().rule_id() == "R-EXT-RANGES");
  CHECK(a.error().context.record_index == 0);
  CHECK(a.error().context.value == 777);
}

TEST_CASE("adversarial: a parent chain through every entity costs linear work") {
  for (const std::uint32_t n : {20000u, 40000u}) {
    untold::builder b;
    for (std::uint32_t i = 0; i < n; ++i) b.add_entity({.parent = i == 0 ? untold::none : i - 1});
    auto f = b.finish({.content_hash = false});
    REQUIRE(f.has_value());
    std::string outcome;
    const std::uint64_t work = work_of(*f, {}, outcome);
    CHECK(outcome == "accepted");
    CHECK(work <= 2 * std::uint64_t{n} + 64);  // each entity is walked once, then marked once
  }
  // A cycle through all of them is found with the same work.
  untold::builder b;
  const std::uint32_t n = 20000;
  for (std::uint32_t i = 0; i < n; ++i) b.add_entity({.parent = i == 0 ? untold::none : i - 1});
  auto f = b.finish({.content_hash = false});
  REQUIRE(f.has_value());
  test::put_u32(*f, test::record_offset(*f, 2, 0, entity_record_size) + 4, n - 1);  // root's parent = last
  std::string outcome;
  CHECK(work_of(*f, {}, outcome) <= 2 * std::uint64_t{n} + 64);
  CHECK(outcome == "R-ENTITY-PARENT");
}

TEST_CASE("adversarial: many references into one long string cost one pass over the string table") {
  const std::uint32_t n = 20000;
  const std::string long_name(100000, 'x');
  untold::builder b;
  b.add_entity({.name = long_name});
  for (std::uint32_t i = 1; i < n; ++i) b.add_entity({});
  auto f = b.finish({.content_hash = false});
  REQUIRE(f.has_value());
  // Every entity names a different suffix of the long string: checking each
  // reference by walking to its NUL would read n x 100000 / 2 bytes.
  for (std::uint32_t i = 0; i < n; ++i)
    test::put_u32(*f, test::record_offset(*f, 2, i, entity_record_size) + 8, i * 5);
  std::string outcome;
  const std::uint64_t work = work_of(*f, {}, outcome);
  CHECK(outcome == "accepted");
  // One pass over the string table, plus the entity walk.
  CHECK(work <= long_name.size() + 1 + 2 * std::uint64_t{n});
}

TEST_CASE("adversarial: a lifted per-chunk limit cannot wrap the total-bytes limit") {
  // Regression (fuzz/corpus/fuzz_open/regress-total-limit-wrap): with
  // max_chunk_bytes = UINT64_MAX the running total of uncompressed sizes
  // could wrap past max_total_bytes, and the reader then tried to allocate
  // an 18-exabyte chunk.
  const bytes f = regress::total_limit_wrap();
  untold::open_options lifted;
  lifted.limits.max_chunk_bytes = ~std::uint64_t{0};
  lifted.limits.max_total_bytes = 1 << 20;
  CHECK(test::rejection(f, lifted) == "R-LIMITS");
}

TEST_CASE("adversarial: an uncompressed size the stored bytes cannot produce is rejected before allocation") {
  // Regression (fuzz/corpus/fuzz_open/regress-{lz4,zstd}-declares-1gib): a
  // tiny compressed chunk declaring 1 GiB (the default per-chunk limit) made
  // open allocate and zero 1 GiB before the decoder failed.
  for (const auto method : {untold::compression::lz4, untold::compression::zstd}) {
    const bytes f = regress::declares_1gib(method);
    const auto c = regress::get_chunk(f, regress::row_of(f, untold::chunk_type::string_table));
    REQUIRE(c.compression_type == static_cast<std::uint32_t>(method));
    const untold::byte_span stored(f.data() + c.file_offset, c.compressed_size);
    CHECK(untold::max_decoded_size(method, stored) < 64 * 1024);
    // The default limits refuse 1 GiB at the table now (limits.hpp: 256 MiB
    // per chunk, 64x the file); a caller who lifts them still gets the
    // pre-allocation bound.
    CHECK(test::rejection(f) == "R-LIMITS");
    untold::open_options lifted;
    lifted.limits.max_chunk_bytes = lifted.limits.max_total_bytes = ~std::uint64_t{0};
    lifted.limits.max_expansion = ~std::uint32_t{0};
    CHECK(test::rejection(f, lifted) == "R-DECOMPRESS");
  }
  // The bound itself: never below what decodes, for any size of input.
  for (const std::size_t size : {0u, 1u, 100u, 5000u, 70000u}) {
    const bytes raw(size, std::byte{'u'});
    for (const auto method : {untold::compression::none, untold::compression::lz4, untold::compression::zstd}) {
      auto packed = untold::compress(method, 0, raw);
      REQUIRE(packed.has_value());
      CHECK(untold::max_decoded_size(method, *packed) >= size);
    }
  }
}

TEST_CASE("adversarial: records(first, count) addresses records, not bytes") {
  // Regression (found by fuzz_open's traversal): records<R>(first, count)
  // treated `first` as a byte offset.
  const bytes f = test::write_scene();
  auto a = untold::open(f);
  REQUIRE(a.has_value());
  const auto entities = a->entities();
  for (std::uint32_t i = 0; i < entities.size(); ++i) {
    const auto one = a->records<untold::entity_record>(i, 1);
    REQUIRE(one.size() == 1);
    CHECK(one[0] == entities[i]);
  }
  CHECK(a->records<untold::entity_record>(entities.size(), 1).empty());
  CHECK(a->records<untold::entity_record>(~std::uint64_t{0}, 1).empty());
  CHECK(a->records<untold::entity_record>(1, ~std::uint64_t{0}).empty());
}

TEST_CASE("adversarial: the writer refuses world bounds that overflow float") {
  // Regression (fuzz/corpus/fuzz_roundtrip/regress-world-bounds-overflow):
  // finite transforms whose product overflows gave a file that the deep
  // checks reject (R-FINITE).
  const bytes v = test::raw_vertices({{3e38f, 0, 0}});
  untold::mat4 scale = untold::identity_matrix;
  scale[0] = 10.0f;
  untold::builder b;
  const auto e = b.add_entity({.local_transform = scale});
  b.add_mesh({.entity = e, .vertices = v});
  auto f = b.finish();
  REQUIRE_FALSE(f.has_value());
  CHECK(f.error().rule_id() == "E-INVALID-ARGUMENT");
  CHECK(std::string(f.error().context.field) == "worldBounds");
}
