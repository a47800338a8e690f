// The vectorised deep checks against a straightforward scalar reference
// (issue 19 item 4), simdjson style: the fast scans (detail::scan, 16-byte
// generic vectors) agree with the reference scans (detail::scan_reference,
// one element at a time) on random bytes, and on crafted files the deep
// rules report the same first offending element - same error, same index,
// same value, bound and subject - as the reference written out below.
#include "../support.hpp"

#include <untold/ranges.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>

using test::bytes;

namespace {

namespace detail = untold::detail;

constexpr float inf = std::numeric_limits<float>::infinity();

/// A float from every class: zeros, denormals, normals, huge, infinities, NaNs.
float random_float(std::mt19937& rng) {
  const auto bits = [&](std::uint32_t fixed, std::uint32_t random) {
    return std::bit_cast<float>(fixed | (static_cast<std::uint32_t>(rng()) & random));
  };
  switch (rng() % 12) {
    case 0: return bits(0x7FC00000u, 0x3FFFFFu);  // quiet NaN, any payload
    case 1: return bits(0xFF800001u, 0x3FFFFFu);  // negative signalling NaN
    case 2: return rng() % 2 ? inf : -inf;
    case 3: return rng() % 2 ? 0.0f : -0.0f;
    case 4: return bits(0, 0x807FFFFFu); // denormal
    case 5: return (rng() % 2 ? 1.0f : -1.0f) * std::numeric_limits<float>::max();
    default: return std::uniform_real_distribution<float>(-1000.0f, 1000.0f)(rng);
  }
}

/// Bytes where each float is normal most of the time and special now and then.
bytes random_positions(std::mt19937& rng, std::size_t size, unsigned special_per_1000) {
  bytes b(size);
  for (std::size_t i = 0; i + 4 <= size; i += 4) {
    const float f = rng() % 1000 < special_per_1000 ? random_float(rng)
                                                    : std::uniform_real_distribution<float>(-50.0f, 50.0f)(rng);
    untold::store_le_unchecked<float>(b.data() + i, f);
  }
  return b;
}

bool same(float a, float b) { return a == b || (a != a && b != b); }  // -0 == +0 (the documented difference)

template <class Key>
void check_scans_agree(const bytes& b, std::size_t phase, std::size_t stride, std::size_t count,
                       const typename Key::value& start) {
  auto fast = start, reference = start;
  detail::scan<Key>(fast, b.data() + phase, stride, count);
  detail::scan_reference<Key>(reference, b.data() + phase, stride, count);
  for (std::size_t k = 0; k < fast.lo.size(); ++k) {
    CHECK(same(fast.lo[k], reference.lo[k]));
    CHECK(same(fast.hi[k], reference.hi[k]));
  }
}

// ---- the reference: the deep rules of one mesh, written out plainly ---------------

struct finding {
  std::string rule = "ok";
  std::string field;
  std::uint64_t value = 0;
  std::string subject;
};

finding finding_of(const untold::error& e) {
  return {std::string(e.rule_id()), e.context.field ? e.context.field : "", e.context.value, std::string(e.subject())};
}

/// The first element of mesh `row` that breaks R-FINITE, R-BOUNDS or
/// R-INDEX-VALUE: bounds, then positions (non-finite before outside, per
/// coordinate), then indices, then edge indices.
finding reference_deep(const untold::asset& a, std::size_t row) {
  const untold::mesh_record m = a.meshes()[row];
  const auto finite = [](float f) { return f == f && f != inf && f != -inf; };
  float largest = 1.0f;
  for (int k = 0; k < 3; ++k) {
    if (!finite(m.local_bounds.min[k]) || !finite(m.local_bounds.max[k])) return {"R-FINITE", "localBounds", 0, ""};
    largest = std::max({largest, std::abs(m.local_bounds.min[k]), std::abs(m.local_bounds.max[k])});
  }
  const float slack = largest * 1e-5f;
  const auto vertices = a.vertices(m);
  for (std::size_t v = 0; v < vertices.size() / 32; ++v)
    for (int k = 0; k < 3; ++k) {
      const float c = untold::load_le_unchecked<float>(vertices.data() + 32 * v + 4 * k);
      if (!finite(c)) return {"R-FINITE", "position", v, ""};
      if (c < m.local_bounds.min[k] - slack || c > m.local_bounds.max[k] + slack) return {"R-BOUNDS", "position", v, ""};
    }
  const bool wide = m.index_type == static_cast<std::uint32_t>(untold::index_type::uint32);
  for (const auto& [bytes, field] : {std::pair{a.indices(m), "indices"}, std::pair{a.edge_indices(m), "edgeIndices"}})
    for (std::size_t i = 0; i < bytes.size() / (wide ? 4 : 2); ++i) {
      const std::uint32_t value = wide ? untold::load_le_unchecked<std::uint32_t>(bytes.data() + 4 * i)
                                       : untold::load_le_unchecked<std::uint16_t>(bytes.data() + 2 * i);
      if (value >= m.vertex_count) return {"R-INDEX-VALUE", field, value, "index " + std::to_string(i)};
    }
  return {};
}

void check_same(const finding& got, const finding& want) {
  CHECK(got.rule == want.rule);
  CHECK(got.field == want.field);
  CHECK(got.value == want.value);
  CHECK(got.subject == want.subject);
}

// ---- crafted files ----------------------------------------------------------------

/// Mesh 0: 1,600 vertices, uint16 indices and edge indices; mesh 1: 67,600
/// vertices, uint32 indices and edge indices; mesh 2 draws mesh 0's bytes
/// (instancing: meshes that share bytes take validate_deep's range queries).
/// Unhashed, so bytes can be patched.
bytes deep_scene() {
  untold::builder b;
  const test::grid small = test::make_grid(40, 0.5f, 0.25f), large = test::make_grid(260, -3.0f, 0.5f);
  const auto root = b.add_entity({.name = "root"});
  const auto first = b.add_mesh({.entity = root, .name = "small", .vertices = small.vertices, .indices = small.indices,
                                 .edge_indices = std::span(small.indices).first(600)});
  b.add_mesh({.entity = root, .name = "large", .vertices = large.vertices, .indices = large.indices,
              .edge_indices = std::span(large.indices).first(999)});
  b.add_mesh({.entity = root, .name = "instance", .geometry_of = first});
  auto file = b.finish({.content_hash = false});
  REQUIRE_MESSAGE(file, file.error().describe());
  return std::move(*file);
}

const untold::open_options no_deep{.verify_hash = false}, deep{.deep_checks = true, .verify_hash = false};

/// Byte offset in `f` of byte `offset` of the payload of chunk `type`.
std::size_t payload_at(const bytes& f, untold::chunk_type type, std::uint64_t offset) {
  return test::chunk_payload_offset(f, static_cast<std::uint32_t>(type)) + static_cast<std::size_t>(offset);
}

/// Every way the deep rules see `f` agrees with the reference: untold::open
/// with deep checks (the first bad mesh), validate_mesh_deep on each mesh's
/// spans and streamed_asset::load_mesh with deep checks.
void check_against_reference(const bytes& f) {
  auto plain = untold::open(f, no_deep);
  REQUIRE_MESSAGE(plain, plain.error().describe());
  finding first;
  for (std::size_t row = 0; row < plain->meshes().size(); ++row) {
    const finding want = reference_deep(*plain, row);
    if (first.rule == "ok") first = want;
    const untold::mesh_record m = plain->meshes()[row];
    const auto mesh = untold::validate_mesh_deep(*plain, row, plain->vertices(m), plain->indices(m),
                                                 plain->edge_indices(m));
    check_same(mesh ? finding{} : finding_of(mesh.error()), want);
    if (!mesh) {
      CHECK(mesh.error().context.record_index == row);
      if (want.rule == "R-INDEX-VALUE") {
        REQUIRE(mesh.error().context.has_limit);
        CHECK(mesh.error().context.limit == m.vertex_count);
      }
    }
    untold::memory_range_source source(f);
    auto streamed = untold::streamed_asset::open(source, {.open = deep});
    REQUIRE(streamed);
    const auto loaded = streamed->load_mesh(static_cast<std::uint32_t>(row));
    check_same(loaded ? finding{} : finding_of(loaded.error()), want);
  }
  const auto whole = untold::open(f, deep);
  check_same(whole ? finding{} : finding_of(whole.error()), first);
}

}  // namespace

TEST_CASE("deep fast: position scans agree with the reference on random bytes") {
  std::mt19937 rng(19);
  for (const unsigned special : {0u, 1u, 30u, 400u})
    for (int trial = 0; trial < 150; ++trial) {
      const std::size_t count = rng() % 300, phase = rng() % 32, stride = trial % 3 == 0 ? 16 : 32;
      const bytes b = random_positions(rng, phase + count * stride + 16, special);
      CAPTURE(special);
      CAPTURE(count);
      CAPTURE(phase);
      auto start = detail::position_key::value::none();
      if (trial % 4 == 1) start = detail::position_key::read(b.data());  // merging into extrema that hold values
      check_scans_agree<detail::position_key>(b, phase, stride, count, start);
    }
}

TEST_CASE("deep fast: index scans agree with the reference on random bytes") {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t count = rng() % 200, phase = rng() % 16;
    bytes b(phase + 16 * count + 16);
    const std::uint32_t mask = trial % 2 ? 0xFFFFFFFFu : 0x3FFu;  // full range, or small values with ties
    for (auto& x : b) x = static_cast<std::byte>(rng() & mask);
    CAPTURE(count);
    CAPTURE(phase);
    auto start = detail::extrema<std::uint32_t, 1>::none();
    if (trial % 3 == 1) start = {{static_cast<std::uint32_t>(rng() & 0xFFFFu)}, {static_cast<std::uint32_t>(rng() & 0xFFFFu)}};
    check_scans_agree<detail::index_key<std::uint16_t>>(b, phase, 2, count, start);
    check_scans_agree<detail::index_key<std::uint32_t>>(b, phase, 4, count, start);
    check_scans_agree<detail::index_key<std::uint16_t, 4>>(b, phase, 8, count, start);  // joint indices
    check_scans_agree<detail::index_key<std::uint32_t>>(b, phase, 16, count, start);   // not packed
  }
  // Extremes: every value 0, every value the largest.
  for (const std::byte fill : {std::byte{0}, std::byte{0xFF}}) {
    const bytes b(4 * 100, fill);
    check_scans_agree<detail::index_key<std::uint16_t>>(b, 0, 2, 200, detail::extrema<std::uint32_t, 1>::none());
    check_scans_agree<detail::index_key<std::uint32_t>>(b, 0, 4, 100, detail::extrema<std::uint32_t, 1>::none());
  }
}

TEST_CASE("deep fast: a valid file passes both paths") {
  const bytes f = deep_scene();
  check_against_reference(f);
  CHECK(untold::open(f, deep));
}

TEST_CASE("deep fast: crafted positions report the reference's first offender") {
  const bytes clean = deep_scene();
  auto a = untold::open(clean, no_deep);
  REQUIRE(a);
  for (std::uint32_t row : {0u, 1u}) {
    const untold::mesh_record m = a->meshes()[row];
    const float slack = untold::bounds_tolerance(m.local_bounds);
    const std::uint32_t n = m.vertex_count;
    for (const std::uint32_t v : {0u, 1u, 2u, 3u, n / 2, n - 3, n - 2, n - 1})
      for (int axis = 0; axis < 3; ++axis)
        for (const float bad : {std::numeric_limits<float>::quiet_NaN(), inf, -inf,
                                m.local_bounds.max[axis] + 1.0f, m.local_bounds.min[axis] - 1.0f,
                                m.local_bounds.max[axis] + 2 * slack, m.local_bounds.max[axis] + slack / 2}) {
          CAPTURE(row);
          CAPTURE(v);
          CAPTURE(axis);
          CAPTURE(bad);
          bytes f = clean;
          test::put_f32(f, payload_at(f, untold::chunk_type::vertex_data, m.vertex_data_offset + 32 * v + 4 * axis),
                        bad);
          check_against_reference(f);
        }
  }
}

TEST_CASE("deep fast: crafted indices report the reference's first offender, value and bound") {
  const bytes clean = deep_scene();
  auto a = untold::open(clean, no_deep);
  REQUIRE(a);
  for (std::uint32_t row : {0u, 1u}) {
    const untold::mesh_record m = a->meshes()[row];
    const bool wide = m.index_type == static_cast<std::uint32_t>(untold::index_type::uint32);
    const std::uint32_t isize = wide ? 4 : 2;
    const std::uint64_t largest = wide ? 0xFFFFFFFFu : 0xFFFFu;
    for (const bool edges : {false, true}) {
      const std::uint64_t count = edges ? m.edge_index_count() : m.index_count;
      const std::uint64_t base = edges ? m.edge_index_offset() : m.index_data_offset;
      const auto type = edges ? untold::chunk_type::edge_index_data : untold::chunk_type::index_data;
      for (const std::uint64_t i : {std::uint64_t{0}, std::uint64_t{7}, std::uint64_t{8}, count / 2, count - 9,
                                    count - 2, count - 1})
        for (const std::uint64_t value : {std::uint64_t{m.vertex_count}, std::uint64_t{m.vertex_count} + 1, largest}) {
          CAPTURE(row);
          CAPTURE(edges);
          CAPTURE(i);
          CAPTURE(value);
          bytes f = clean;
          const std::size_t at = payload_at(f, type, base + isize * i);
          if (wide)
            test::put_u32(f, at, static_cast<std::uint32_t>(value));
          else
            untold::store_le_unchecked<std::uint16_t>(f.data() + at, static_cast<std::uint16_t>(value));
          check_against_reference(f);
        }
    }
  }
}

TEST_CASE("deep fast: several offenders: the first in rule order and element order wins") {
  const bytes clean = deep_scene();
  auto a = untold::open(clean, no_deep);
  REQUIRE(a);
  std::mt19937 rng(2026);
  for (int trial = 0; trial < 60; ++trial) {
    bytes f = clean;
    const std::uint32_t row = rng() % 2;
    const untold::mesh_record m = a->meshes()[row];
    const bool wide = m.index_type == static_cast<std::uint32_t>(untold::index_type::uint32);
    for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k) {
      switch (rng() % 3) {
        case 0: {  // a position
          const std::uint32_t v = rng() % m.vertex_count, axis = rng() % 3;
          test::put_f32(f, payload_at(f, untold::chunk_type::vertex_data, m.vertex_data_offset + 32 * v + 4 * axis),
                        rng() % 2 ? random_float(rng) : m.local_bounds.max[axis] * 2 + 1);
          break;
        }
        case 1:
        case 2: {  // an index or an edge index
          const bool edges = rng() % 3 == 2;
          const std::uint64_t count = edges ? m.edge_index_count() : m.index_count;
          const std::uint64_t at = (edges ? m.edge_index_offset() : m.index_data_offset) + (wide ? 4 : 2) * (rng() % count);
          const auto type = edges ? untold::chunk_type::edge_index_data : untold::chunk_type::index_data;
          const std::uint32_t value = m.vertex_count + rng() % 100;
          if (wide)
            test::put_u32(f, payload_at(f, type, at), value);
          else
            untold::store_le_unchecked<std::uint16_t>(f.data() + payload_at(f, type, at), static_cast<std::uint16_t>(value));
          break;
        }
      }
    }
    CAPTURE(trial);
    check_against_reference(f);
  }
}
