// Exhaustive single-byte mutations of small valid files: every byte of the
// golden file, of small writer outputs (compressed chunks, raw and plugin
// chunks, edge indices, a hashed file) and of a file with every extension
// table is set to 0x00, 0xFF, b^0x01, b^0x80, b+1 and b-1. Each mutant is
// either rejected with a rule id (R-... or E-...) or, if accepted, fully
// traversable (fuzz/traverse.hpp, shared with the fuzz targets), with and
// without deep checks; deep checks never accept a mutant the default open
// rejects.
#include "../support.hpp"

#include "../../fuzz/traverse.hpp"

#include <array>
#include <map>
#include <set>

using test::bytes;

namespace {

struct tally {
  std::size_t mutants = 0, accepted = 0;
  std::set<std::string> rules;
};

/// Opens one mutant; returns false (with a message) on a broken property.
bool check_mutant(const bytes& file, tally& t, std::string& problem) {
  ++t.mutants;
  bool accepted_by_default = false;
  for (const bool deep : {false, true}) {
    auto a = untold::open(file, {.deep_checks = deep});
    if (!a) {
      const std::string id(a.error().rule_id());
      if (!(id.starts_with("R-") || id.starts_with("E-"))) {
        problem = "rejection without a rule id: " + a.error().describe();
        return false;
      }
      t.rules.insert(id);
      continue;
    }
    if (!deep) {
      accepted_by_default = true;
      ++t.accepted;
    } else if (!accepted_by_default) {
      problem = "deep checks accepted a mutant the default open rejects";
      return false;
    }
    problem = untold_fuzz::traverse(*a, deep);
    if (!problem.empty()) return false;
  }
  return true;
}

void mutate_every_byte(const std::string& name, const bytes& original) {
  REQUIRE_MESSAGE(untold::open(original, {.deep_checks = true}).has_value(), name << " must be valid");
  tally t;
  bytes file = original;
  for (std::size_t at = 0; at < file.size(); ++at) {
    const auto b = static_cast<std::uint8_t>(original[at]);
    const std::array<std::uint8_t, 6> values = {0x00, 0xFF, static_cast<std::uint8_t>(b ^ 0x01),
                                                static_cast<std::uint8_t>(b ^ 0x80), static_cast<std::uint8_t>(b + 1),
                                                static_cast<std::uint8_t>(b - 1)};
    std::set<std::uint8_t> seen;
    for (const std::uint8_t v : values) {
      if (v == b || !seen.insert(v).second) continue;
      file[at] = std::byte{v};
      std::string problem;
      if (!check_mutant(file, t, problem))
        FAIL(name << ": byte " << at << " = 0x" << std::hex << int{v} << std::dec << ": " << problem);
    }
    file[at] = original[at];
  }
  std::string rules;
  for (const auto& r : t.rules) rules += r + " ";
  MESSAGE(name << ": " << t.mutants << " mutants, " << t.accepted << " accepted; rejected by " << rules);
  CHECK(t.mutants >= 3 * original.size());  // >= 3 distinct values per byte
  CHECK(t.rules.size() >= 5);  // the mutants reach many different rules
}

/// Two entities, two quads (one with edge indices, one uint32), a textured
/// material: small enough to mutate exhaustively.
bytes small_scene(untold::write_options options, bool raw_chunks = false) {
  static const bytes a = test::raw_vertices({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}});
  static const bytes b = test::raw_vertices({{0, 0, 1}, {2, 0, 1}, {0, 2, 1}});
  static const std::vector<std::uint32_t> quad = {0, 1, 2, 1, 3, 2}, tri = {0, 1, 2};
  untold::builder w;
  const auto tex = w.add_texture({.name = "albedo", .uri = "T/a.png", .format = untold::texture_format::rgba8});
  const auto mat = w.add_material({.name = "m", .base_color_texture = tex});
  const auto root = w.add_entity({.name = "root"});
  const auto child = w.add_entity({.name = "child", .parent = root});
  w.add_mesh({.entity = child, .name = "quad", .material = mat, .vertices = a, .indices = quad,
              .edge_indices = std::span(quad).first(2)});
  w.add_mesh({.entity = root, .vertices = b, .indices = tri, .index_type = untold::index_type::uint32});
  if (raw_chunks) {
    const std::array<std::byte, 3> payload = {std::byte{1}, std::byte{2}, std::byte{3}};
    w.add_raw_chunk(0x100, payload);
    w.add_plugin_chunk("org.untold.test", 1, 2, payload);
  }
  auto file = w.finish(options);
  REQUIRE_MESSAGE(file.has_value(), file.error().describe());
  return std::move(*file);
}

untold::write_options compressed(untold::compression metadata, untold::compression data) {
  untold::write_options w{.content_hash = false};
  w.compression.metadata = {metadata, 0};
  w.compression.data = {data, 0};
  return w;
}

std::size_t compressed_chunks(const bytes& file) {
  auto a = untold::open(file);
  REQUIRE(a.has_value());
  std::size_t n = 0;
  for (const auto& c : a->chunks()) n += c.compression_type != 0 ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("mutation: every single-byte change of the golden file is rejected with a rule id or traversable") {
  mutate_every_byte("golden", test::read_binary(UNTOLD_TEST_DATA_DIR "/minimal_v1.untold"));
}

// One test case per file, so ctest runs them in parallel.
TEST_CASE("mutation: every single-byte change of a writer output with raw and plugin chunks") {
  mutate_every_byte("plain+raw", small_scene({.content_hash = false}, true));
}

TEST_CASE("mutation: every single-byte change of a writer output with lz4 metadata and zstd data") {
  const bytes f = small_scene(compressed(untold::compression::lz4, untold::compression::zstd));
  REQUIRE(compressed_chunks(f) >= 2);
  mutate_every_byte("lz4 metadata, zstd data", f);
}

TEST_CASE("mutation: every single-byte change of a writer output with zstd metadata, lz4 data and raw chunks") {
  const bytes f = small_scene(compressed(untold::compression::zstd, untold::compression::lz4), true);
  REQUIRE(compressed_chunks(f) >= 2);
  mutate_every_byte("zstd metadata, lz4 data", f);
}

TEST_CASE("mutation: every single-byte change of a hashed writer output") {
  mutate_every_byte("hashed", small_scene({}));
}

TEST_CASE("mutation: every single-byte change of a file with every extension table") {
  // fuzz/make_corpus.cpp writes this seed: skeleton, skin, animation, light,
  // camera, colour management, LUT.
  mutate_every_byte("extensions", test::read_binary(UNTOLD_TEST_DATA_DIR "/../../fuzz/corpus/fuzz_open/seed-extensions.untold"));
}
