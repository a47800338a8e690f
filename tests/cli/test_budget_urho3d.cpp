// The Urho3D budget tests (issue 27, SECURITY.md "The budget"): `info
// --json`, `validate --deep`, `dump`, `cook`, `convert` and `pak extract` on generated .mdl,
// .ani and .pak inputs at 1x, 10x and 100x, each run measured by the tool's
// heap meter. Every bound is "peak heap <= k x input + C" and "output <= k x
// input + C" with the constants stated below; a stage that is quadratic in
// its input, or that allocates what a count declares, exceeds them at 10x or
// 100x. The shapes include the audit's adversarial ones, scaled: a morph
// listing one vertex over and over in a model of many geometries (item 1),
// bone chains past the depth limit and wide skeletons at it (item 2), a
// vertex buffer of very many elements (item 5), ULZ4 blocks declaring more
// than they hold (item 9). No timing.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <untold/urho3d/animation.hpp>
#include <untold/urho3d/model.hpp>
#include <untold/urho3d/package.hpp>

#include "../urho3d/u3d_support.hpp"
#include "budget_support.hpp"

using namespace cli_test;
namespace u3 = untold::urho3d;

namespace {

using u3d_test::bytes;
using u3d_test::gen;

/// A bone record: name, parent, identity bind pose and offset matrix, no collision.
void bone(gen& g, std::string_view name, std::uint32_t parent) {
  g.cstr(name).u32(parent);
  for (float f : {0.f, 0.f, 0.f, 1.f, 0.f, 0.f, 0.f, 1.f, 1.f, 1.f}) g.f32(f);
  for (int k = 0; k < 12; ++k) g.f32(k % 5 == 0 ? 1.0f : 0.0f);
  g.u8(0);
}

/// A skinned, morphed UMD2 grid of 300 x k vertices (position, normal, uv,
/// blend weights and indices; 52 bytes each), a triangle list over them, 4
/// bones and a morph moving every second vertex.
bytes plain_model(std::uint32_t k) {
  const std::uint32_t n = 300 * k;
  gen g;
  g.str("UMD2").u32(1).u32(n).u32(5);
  for (std::uint32_t desc : {0x0003u, 0x0103u, 0x0402u, 0x0604u, 0x0705u}) g.u32(desc);
  g.u32(0).u32(n);
  for (std::uint32_t v = 0; v < n; ++v) {
    g.f32(static_cast<float>(v % 100)).f32(static_cast<float>(v / 100)).f32(0);
    g.f32(0).f32(0).f32(1).f32(static_cast<float>(v % 100) / 100).f32(static_cast<float>(v / 100) / 100);
    g.f32(0.5f).f32(0.5f).f32(0).f32(0).u8(static_cast<std::uint8_t>(v % 4)).u8(static_cast<std::uint8_t>((v + 1) % 4)).u8(0).u8(0);
  }
  const std::uint32_t triangles = n - 2;
  g.u32(1).u32(3 * triangles).u32(4);
  for (std::uint32_t t = 0; t < triangles; ++t) g.u32(t).u32(t + 1).u32(t + 2);
  g.u32(1).u32(0).u32(1).f32(0).u32(0).u32(0).u32(0).u32(0).u32(3 * triangles);
  g.u32(1).cstr("bulge").u32(1).u32(0).u32(1).u32(n / 2);
  for (std::uint32_t v = 0; v < n; v += 2) g.u32(v).f32(0).f32(0).f32(0.1f);
  g.u32(4);
  bone(g, "root", 0);
  for (std::uint32_t b = 1; b < 4; ++b) bone(g, "bone" + std::to_string(b), b - 1);
  g.f32(0).f32(0).f32(0).f32(100).f32(static_cast<float>(n / 100)).f32(0);
  return g.b;
}

/// Item 1: 100 x k geometries that all draw one triangle of a 3-vertex
/// buffer, and a morph that lists vertex 0 100 x k times.
bytes repeated_morph(std::uint32_t k) { return u3d_test::repeated_morph_model(100 * k, 100 * k); }

/// The start of a model of one triangle (3 positions, 3 indices, one
/// geometry, no morphs), up to the bone count.
void one_triangle(gen& g) {
  g.str("UMD2").u32(1).u32(3).u32(1).u32(0x0003).u32(0).u32(0);
  for (int v = 0; v < 3; ++v) g.f32(static_cast<float>(v)).f32(static_cast<float>(v % 2)).f32(0);
  g.u32(1).u32(3).u32(2).u16(0).u16(1).u16(2);
  g.u32(1).u32(0).u32(1).f32(0).u32(0).u32(0).u32(0).u32(0).u32(3);
  g.u32(0);
}

/// Item 2: a model of one triangle and `chains` bone chains of `depth`
/// bones each, named with `name_length` characters.
bytes skeleton_model(std::uint32_t chains, std::uint32_t depth, std::size_t name_length) {
  gen g;
  one_triangle(g);
  g.u32(chains * depth);
  for (std::uint32_t c = 0; c < chains; ++c)
    for (std::uint32_t d = 0; d < depth; ++d) {
      std::string name = std::to_string(c * depth + d);
      name.resize(std::max(name.size(), name_length), '_');
      bone(g, name, d == 0 ? c * depth : c * depth + d - 1);
    }
  g.f32(0).f32(0).f32(0).f32(1).f32(1).f32(0);
  return g.b;
}

/// Item 5: a vertex buffer without vertices that declares 4000 x k elements.
bytes many_elements_model(std::uint32_t k) {
  const std::uint32_t n = 4000 * k;
  gen g;
  g.str("UMD2").u32(1).u32(0).u32(n);
  for (std::uint32_t i = 0; i < n; ++i) g.u32(0x0401);  // FLOAT TEXCOORD
  g.u32(0).u32(0);
  g.u32(0).u32(0).u32(0).u32(0);
  for (int i = 0; i < 6; ++i) g.f32(0);
  return g.b;
}

/// 10 x k tracks named bone0... of 40 position+rotation+scale keyframes.
bytes plain_animation(std::uint32_t k) {
  gen g;
  g.str("UANI").cstr("Walk").f32(1).u32(10 * k);
  for (std::uint32_t t = 0; t < 10 * k; ++t) {
    g.cstr("bone" + std::to_string(t)).u8(7).u32(40);
    for (int key = 0; key < 40; ++key) {
      g.f32(static_cast<float>(key) / 40).f32(0).f32(static_cast<float>(key)).f32(0);
      g.f32(1).f32(0).f32(0).f32(0).f32(1).f32(1).f32(1);
    }
  }
  return g.b;
}

/// The model an animation of 10 x k tracks drives: a root and 10 x k bones.
bytes animated_model(std::uint32_t k) {
  gen g;
  one_triangle(g);
  g.u32(10 * k);
  for (std::uint32_t b = 0; b < 10 * k; ++b) bone(g, "bone" + std::to_string(b), 0);
  g.f32(0).f32(0).f32(0).f32(1).f32(1).f32(0);
  return g.b;
}

/// 8 x k entries of 2 KB of text (ULZ4: LZ4HC blocks; UPAK: stored).
bytes text_package(std::uint32_t k, bool compress) {
  std::vector<std::string> names;
  std::vector<bytes> contents;
  for (std::uint32_t i = 0; i < 8 * k; ++i) {
    std::string text;
    for (int line = 0; text.size() < 2048; ++line)
      text += "<attribute name=\"Entry " + std::to_string(i) + "\" value=\"" + std::to_string(line * 7919 % 1000) + "\" />\n";
    names.push_back("Data/" + std::to_string(i % 7) + "/file" + std::to_string(i) + ".xml");
    contents.emplace_back(reinterpret_cast<const std::byte*>(text.data()),
                          reinterpret_cast<const std::byte*>(text.data()) + text.size());
  }
  std::vector<u3::package_input> in;
  for (std::size_t i = 0; i < names.size(); ++i) in.push_back({names[i], contents[i]});
  auto pak = u3::write_package(in, {.compress = compress});
  REQUIRE_MESSAGE(pak.has_value(), pak.error().describe());
  return *pak;
}

/// Item 9: 4 x k ULZ4 entries, each declaring 16 MiB in 256 blocks of one
/// garbage byte (refused by the structure walk, unallocated; the reader
/// used to zero-fill each entry before decoding it).
bytes block_bomb_package(std::uint32_t k) {
  const std::uint32_t entries = 4 * k, blocks = 256;
  gen g;
  g.str("ULZ4").u32(entries).u32(0);
  std::vector<std::size_t> offsets;
  for (std::uint32_t e = 0; e < entries; ++e) {
    g.cstr("bomb" + std::to_string(e));
    offsets.push_back(g.b.size());
    g.u32(0).u32(blocks * 65535).u32(0);
  }
  for (std::uint32_t e = 0; e < entries; ++e) {
    u3d_test::put_u32(g.b, offsets[e], static_cast<std::uint32_t>(g.size()));
    for (std::uint32_t b = 0; b < blocks; ++b) g.u16(65535).u16(1).u8(0x5A);
  }
  return g.b;
}

/// Writes `make(k)` for k = 1, 10, 100 under `dir` and runs `command(file)`
/// on each (outputs: files or directories the command writes), expecting
/// the exit codes `exits` (one per size). Checks the bound at every size.
void at_three_sizes(const std::string& name, const std::function<bytes(std::uint32_t)>& make,
                    const std::function<std::string(const fs::path&, const fs::path&)>& command,
                    const budget_bound& bound, std::array<int, 3> exits = {0, 0, 0}) {
  const fs::path dir = scratch("budget_u3d_" + name);
  const std::uint32_t scales[3] = {1, 10, 100};
  for (std::size_t size = 0; size < 3; ++size) {
    const std::uint32_t k = scales[size];
    const int expected_exit = exits[size];
    CAPTURE(name);
    CAPTURE(k);
    const bytes input = make(k);
    const fs::path file = dir / (name + std::to_string(k) + ".bin");
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(input.data()),
                                               static_cast<std::streamsize>(input.size()));
    const fs::path out = dir / ("out" + std::to_string(k));
    const measured_run m = run_untold_measured(command(file, out), {out});
    CHECK_MESSAGE(m.run.exit_code == expected_exit, m.run.err);
    check_within(m, input.size(), bound);
  }
}

std::string info(const fs::path& f, const fs::path&) { return "info --json " + quoted(f); }
std::string validate(const fs::path& f, const fs::path&) { return "validate --deep --json " + quoted(f); }
std::string dump_json(const fs::path& f, const fs::path&) { return "dump --json " + quoted(f); }
std::string dump_text(const fs::path& f, const fs::path&) { return "dump " + quoted(f); }
std::string convert_glb(const fs::path& f, const fs::path& out) {
  return "convert -q -p " + quoted(f) + " " + quoted(out / "model.glb");
}
std::string convert_mdl(const fs::path& f, const fs::path& out) {
  return "convert -q -p " + quoted(f) + " " + quoted(out / "model.mdl");
}
std::string extract(const fs::path& f, const fs::path& out) { return "pak extract -q " + quoted(f) + " -o " + quoted(out); }


}  // namespace

// Reading and printing: what the reader holds (about 2 x the file for
// element lists, views for the data) plus a summary of at most 16 items per
// list; the output is constant for a summary.
TEST_CASE("budget: urho3d info --json (.mdl, .ani, .pak)") {
  const budget_bound bound{.heap_per_input_byte = 4, .heap_constant = 2 * MiB, .output_per_input_byte = 0,
                           .output_constant = 16384};
  at_three_sizes("info_plain", plain_model, info, bound);
  at_three_sizes("info_elements", many_elements_model, info, bound);  // item 5
  at_three_sizes("info_morph", repeated_morph, info, bound);
  at_three_sizes("info_ani", plain_animation, info, bound);
  at_three_sizes("info_ulz4", [](std::uint32_t k) { return text_package(k, true); }, info, bound);
}

// Dumping: every item is printed (the output grows with the counts), but
// streamed one list item at a time, so the heap stays what the reader
// holds; item 5's million-element model used to take 250 x its size.
TEST_CASE("budget: urho3d dump, JSON and text (.mdl, .ani, .pak)") {
  const budget_bound bound{.heap_per_input_byte = 4, .heap_constant = 2 * MiB, .output_per_input_byte = 40,
                           .output_constant = 16384};
  for (const auto& command : {dump_json, dump_text}) {
    at_three_sizes("dump_plain", plain_model, command, bound);
    at_three_sizes("dump_elements", many_elements_model, command, bound);  // item 5
    at_three_sizes("dump_morph", repeated_morph, command, bound);
    at_three_sizes("dump_chain", [](std::uint32_t k) { return skeleton_model(1, 100 * k, 8); }, command, bound,
                   {0, 1, 1});
    at_three_sizes("dump_ani", plain_animation, command, bound);
    at_three_sizes("dump_ulz4", [](std::uint32_t k) { return text_package(k, true); }, command, bound);
  }
}

// Validation: the reader's records (views for the data; the densest
// records, a vertex element list, take about 2 x the file) and, for
// packages, the file and one decoded entry at a time. The output is one
// line or one small JSON object.
TEST_CASE("budget: urho3d validate --deep (.mdl, .ani, .pak)") {
  const budget_bound bound{.heap_per_input_byte = 4, .heap_constant = 2 * MiB, .output_per_input_byte = 0,
                           .output_constant = 4096};
  at_three_sizes("validate_plain", plain_model, validate, bound);
  at_three_sizes("validate_elements", many_elements_model, validate, bound);
  at_three_sizes("validate_morph", repeated_morph, validate, bound);
  // Item 2: one chain of 100 x k bones; past 256 levels it is R-LIMITS.
  at_three_sizes("validate_chain", [](std::uint32_t k) { return skeleton_model(1, 100 * k, 8); }, validate, bound,
                 {0, 1, 1});
  at_three_sizes("validate_ani", plain_animation, validate, bound);
  at_three_sizes("validate_upak", [](std::uint32_t k) { return text_package(k, false); }, validate, bound);
  at_three_sizes("validate_ulz4", [](std::uint32_t k) { return text_package(k, true); }, validate, bound);
  at_three_sizes("validate_bomb", block_bomb_package, validate, bound, {1, 1, 1});  // item 9
}

// Cook: the scene (dense vertex streams, a mesh and a material per
// geometry, dense morph deltas per mesh, joint paths), the writer's tables
// and the output file. The scene is charged to the input's budget (64 x
// input + 64 MiB); the densest shape here, a 48-byte geometry with its
// morph entry becoming a mesh, a material, a morph target and their
// records, takes about 58 x its bytes.
TEST_CASE("budget: urho3d cook (.mdl, .mdl + .ani)") {
  const budget_bound bound{.heap_per_input_byte = 64, .heap_constant = 8 * MiB, .output_per_input_byte = 16,
                           .output_constant = 64 * 1024};
  at_three_sizes("cook_plain", plain_model, cook_command, bound);
  at_three_sizes("cook_morph", repeated_morph, cook_command, bound);  // item 1
  // Item 2: one chain of 100 x k bones: past 256 levels it is R-LIMITS at the reader.
  at_three_sizes("cook_chain", [](std::uint32_t k) { return skeleton_model(1, 100 * k, 8); }, cook_command, bound, {0, 1, 1});
  // ... and k chains of 128 bones with 8-character names are written: their
  // joint paths (each repeats its ancestors' names) are charged first.
  at_three_sizes("cook_wide", [](std::uint32_t k) { return skeleton_model(k, 128, 8); }, cook_command, bound);
  // A model of 10 x k bones with an animation of 10 x k tracks (--animations).
  const fs::path dir = scratch("budget_u3d_cook_ani");
  for (std::uint32_t k : {1u, 10u, 100u}) {
    CAPTURE(k);
    const bytes model = animated_model(k), clip = plain_animation(k);
    const fs::path mdl = dir / ("m" + std::to_string(k) + ".mdl"), ani = dir / ("a" + std::to_string(k) + ".ani");
    std::ofstream(mdl, std::ios::binary).write(reinterpret_cast<const char*>(model.data()), static_cast<std::streamsize>(model.size()));
    std::ofstream(ani, std::ios::binary).write(reinterpret_cast<const char*>(clip.data()), static_cast<std::streamsize>(clip.size()));
    const fs::path out = dir / ("out" + std::to_string(k) + ".untold");
    const measured_run m =
        run_untold_measured("cook -q " + quoted(mdl) + " --animations " + quoted(ani) + " -o " + quoted(out), {out});
    CHECK_MESSAGE(m.run.exit_code == 0, m.run.err);
    check_within(m, model.size() + clip.size(), bound);
  }
}

// Extraction: the package (read into memory) and one decoded entry at a
// time; the files written are the entries (about 6 x the ULZ4 here: text;
// LZ4 allows up to 256 x, within --max-total-bytes).
// Converting: the importer's scene and the writer's files, as cook (the
// .glb holds floats where the .mdl may hold them too; the .mdl writer
// reads its output back before it is written).
TEST_CASE("budget: urho3d convert to .glb and .mdl (.mdl, .mdl with repeated morph vertices)") {
  const budget_bound bound{.heap_per_input_byte = 64, .heap_constant = 8 * MiB, .output_per_input_byte = 16,
                           .output_constant = 64 * 1024};
  for (const auto& command : {convert_glb, convert_mdl}) {
    at_three_sizes("convert_plain", plain_model, command, bound);
    at_three_sizes("convert_chain", [](std::uint32_t k) { return skeleton_model(1, 100 * k, 8); }, command, bound,
                   {0, 1, 1});  // item 2: past 256 levels it is R-LIMITS
  }
  at_three_sizes("convert_morph_mdl", repeated_morph, convert_mdl, bound);  // item 1's shape: 47 x at 100x
  // Item 1's morph, listing one vertex over and over in a model of many
  // 3-vertex geometries, becomes a glTF mesh, material, node and sparse
  // morph target per geometry: a document of ~11 objects per 48 input bytes,
  // each costing TinyGLTF ~2 KB of structs and JSON tree while written
  // (measured: 346 x heap at 10x, 17 x output). The writer charges its
  // estimate of the document to the budget before making it: at 100x it is
  // refused (R-LIMITS) with 35 x heap instead of taking 455 x.
  const budget_bound dense_document{.heap_per_input_byte = 400, .heap_constant = 8 * MiB, .output_per_input_byte = 24,
                                    .output_constant = 64 * 1024};
  at_three_sizes("convert_morph_glb", repeated_morph, convert_glb, dense_document, {0, 0, 1});
}

TEST_CASE("budget: urho3d pak extract (UPAK, ULZ4)") {
  const budget_bound bound{.heap_per_input_byte = 4, .heap_constant = 2 * MiB, .output_per_input_byte = 8,
                           .output_constant = 4096};
  at_three_sizes("extract_upak", [](std::uint32_t k) { return text_package(k, false); }, extract, bound);
  at_three_sizes("extract_ulz4", [](std::uint32_t k) { return text_package(k, true); }, extract, bound);
  at_three_sizes("extract_bomb", block_bomb_package, extract, bound, {1, 1, 1});
}
