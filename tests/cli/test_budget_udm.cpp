// Pragma UDM in the CLI under hostile input (issue 27): every command that
// reads UDM (binary, ASCII, PMDL models) stays within the input's budget,
// names the rule it refuses a file by, and never writes a file the reader
// rejects. The budget tests run each command on generated inputs at three
// sizes (1x, 10x, 100x) and bound peak heap and output by
// "k x input + C" (budget_support.hpp), with no timing.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <untold/compression.hpp>
#include <untold/udm/udm.hpp>

#include "budget_support.hpp"

using namespace cli_test;
using json = nlohmann::json;
namespace u = untold::udm;

namespace {

using bytes = std::vector<std::byte>;

void write_file(const fs::path& p, const void* data, std::size_t size) {
  std::ofstream f(p, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  REQUIRE(f.good());
}
void write_file(const fs::path& p, const bytes& b) { write_file(p, b.data(), b.size()); }
void write_file(const fs::path& p, std::string_view s) { write_file(p, s.data(), s.size()); }

/// A PMDL model: one mesh group with one sub-mesh of `vertices` vertices (a
/// triangle fan), weights on `bones` bones (flat), a clip with two channels.
/// `edit` may change the sub-mesh's assetData (after it is built).
u::property pmdl(std::uint32_t vertices, std::uint32_t bones,
                 const std::function<void(u::property& sub_mesh, u::property& data)>& edit = {}) {
  const u::struct_layout vl{{u::type::vector3, u::type::vector2, u::type::vector3, u::type::vector4},
                            {"pos", "uv", "n", "t"}};
  const u::struct_layout wl{{u::type::vector4i, u::type::vector4}, {"id", "w"}};
  std::vector<std::byte> verts(std::size_t{vertices} * vl.size()), weights(std::size_t{vertices} * wl.size());
  for (std::uint32_t i = 0; i < vertices; ++i) {
    std::byte* v = verts.data() + std::size_t{i} * vl.size();
    u::store_value(v, u::vec3{static_cast<float>(i % 97), static_cast<float>(i / 97), static_cast<float>((i * 7) % 13)});
    u::store_value(v + 12, u::vec2{static_cast<float>(i % 97) / 97, static_cast<float>(i % 89) / 89});
    u::store_value(v + 20, u::vec3{0, 0, 1});
    u::store_value(v + 32, u::vec4{1, 0, 0, 1});
    std::byte* w = weights.data() + std::size_t{i} * wl.size();
    u::store_value(w, u::vec4i{static_cast<std::int32_t>(i % bones), static_cast<std::int32_t>((i + 1) % bones), -1, -1});
    u::store_value(w + 16, u::vec4{0.5f, 0.5f, 0, 0});
  }
  std::vector<std::uint32_t> indices;
  for (std::uint32_t i = 1; i + 1 < vertices; ++i) indices.insert(indices.end(), {0, i, i + 1});
  u::property sub = u::make_element();
  sub.add("vertices", u::compress_array(u::make_struct_array(vl, vertices, verts)).value());
  sub.add("indices", u::compress_array(u::make_array<std::uint32_t>(indices)).value());
  sub.add("vertexWeights", u::make_struct_array(wl, vertices, weights));
  sub.add("geometryType", u::make_string("Triangles"));
  u::property mesh = u::make_element();
  mesh.add("subMeshes", u::make_array_of(u::type::element, {u::make_asset("PMESH", 1, std::move(sub))}));
  u::property group = u::make_element();
  group.add("meshes", u::make_array_of(u::type::element, {std::move(mesh)}));
  u::property groups = u::make_element();
  groups.add("body", std::move(group));
  u::property bone_list = u::make_element();
  for (std::uint32_t b = 0; b < bones; ++b) {
    u::property bone = u::make_element();
    bone.add("index", u::make_value(b));
    bone.add("pose", u::make_value(u::scaled_transform{{static_cast<float>(b), 0, 0}, {0, 0, 0, 1}, {1, 1, 1}}));
    bone_list.add("bone" + std::to_string(b), std::move(bone));
  }
  u::property skeleton = u::make_element();
  skeleton.add("bones", std::move(bone_list));
  auto channel = [](std::string path, u::property values) {
    u::property c = u::make_element();
    c.add("targetPath", u::make_string(std::move(path)));
    c.add("times", u::make_array<float>(std::vector<float>{0.0f, 1.0f}));
    c.add("values", std::move(values));
    return c;
  };
  std::vector<u::property> channels;
  channels.push_back(channel("bone/bone0/position", u::make_array<u::vec3>(std::vector<u::vec3>{{0, 0, 0}, {1, 0, 0}})));
  channels.push_back(channel("bone/bone0/rotation", u::make_array<u::quat>(std::vector<u::quat>{{0, 0, 0, 1}, {0, 1, 0, 0}})));
  u::property clip = u::make_element();
  clip.add("duration", u::make_value(1.0f));
  clip.add("channels", u::make_array_of(u::type::element, std::move(channels)));
  u::property animations = u::make_element();
  animations.add("wave", u::make_asset("PANI", 1, std::move(clip)));
  u::property data = u::make_element();
  data.add("materials", u::make_array_of(u::type::string, {u::make_string("skin")}));
  data.add("skeleton", u::make_asset("PSKEL", 1, std::move(skeleton)));
  data.add("animations", std::move(animations));
  data.add("meshGroups", std::move(groups));
  if (edit) {
    u::property& first = *data.find("meshGroups")->find("body")->find("meshes")->items[0].find("subMeshes")->items[0].find("assetData");
    edit(first, data);
  }
  return u::make_asset("PMDL", 1, std::move(data));
}

/// A structure-heavy UDM document of `elements` elements (about 150 bytes
/// each: values of several types, a float array, a struct array) and one
/// ArrayLz4 of poorly compressible integers.
u::property structured(std::uint32_t elements) {
  const u::struct_layout layout{{u::type::vector3, u::type::float32}, {"pos", "w"}};
  u::property data = u::make_element();
  for (std::uint32_t k = 0; k < elements; ++k) {
    u::property e = u::make_element();
    e.add("f", u::make_value(static_cast<float>(k) / 3));
    e.add("v", u::make_value(u::vec3{static_cast<float>(k), 1.5f, -2}));
    e.add("name", u::make_string("element " + std::to_string(k)));
    e.add("list", u::make_array<float>(std::vector<float>{1, 2, 3, 4, 5, 6, 7, static_cast<float>(k)}));
    e.add("points", u::make_struct_array(layout, 2, std::vector<std::byte>(2 * layout.size(), std::byte{0x3F})));
    data.add("e" + std::to_string(k), std::move(e));
  }
  std::vector<std::uint32_t> noise(std::size_t{elements} * 8);
  for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<std::uint32_t>(i * 2654435761u);
  data.add("noise", u::compress_array(u::make_array<std::uint32_t>(noise)).value());
  return u::make_asset("TEST", 1, std::move(data));
}

/// One command at the three sizes: `make(scale)` writes the input and
/// returns its path; `args(in, out)` is the command line.
struct budget_case {
  std::string label;
  std::function<std::string(const fs::path& in, const fs::path& out)> args;
  budget_bound bound;
};

void run_at_three_sizes(const std::string& name, const std::function<fs::path(const fs::path& dir, std::uint32_t scale)>& make,
                        const std::vector<budget_case>& cases) {
  const fs::path dir = scratch(name);
  for (const std::uint32_t scale : {1u, 10u, 100u}) {
    const fs::path in = make(dir, scale);
    const std::uint64_t n = fs::file_size(in);
    for (const budget_case& c : cases) {
      const fs::path out = dir / ("out_" + std::to_string(scale));
      fs::remove_all(out);
      CAPTURE(c.label);
      CAPTURE(scale);
      const measured_run m = run_untold_measured(c.args(in, out), {out});
      CHECK_MESSAGE(m.run.exit_code == 0, m.run.err);
      check_within(m, n, c.bound);
    }
  }
}

std::string args_of(const std::string& command, const fs::path& in) { return command + " " + quoted(in); }


}  // namespace

// ---- the audit's files ------------------------------------------------------------------------

TEST_CASE("udm: a Nil array of 16M items and 16M structs of Nil members are refused before the work") {
  // Audit: the 60-byte file made dump take 1.37 GB; the struct one ran past
  // 30 s in dump and `udm convert --to ascii`.
  const fs::path dir = scratch("udm_zero_size_items");
  u::property nils;
  nils.kind = u::type::array;
  nils.value_type = u::type::nil;
  nils.count = (1u << 24) - 1;
  u::property structs = u::make_struct_array({{u::type::nil, u::type::nil, u::type::nil}, {"a", "b", "c"}}, (1u << 24) - 1, {});
  for (const auto& named : std::vector<std::pair<std::string, u::property>>{{"nils", nils}, {"structs", structs}}) {
    const std::string& name = named.first;  // CAPTURE's lambda cannot capture a structured binding (clang 14)
    const u::property& value = named.second;
    CAPTURE(name);
    u::property data = u::make_element();
    data.add("x", value);
    const fs::path in = dir / (name + ".udm_b");
    write_file(in, u::write_binary(u::make_asset("T", 1, std::move(data)), {.verify = false}).value());
    CHECK(fs::file_size(in) < 200);
    for (const std::string command : {"dump", "dump --json", "info --json", "validate"}) {
      CAPTURE(command);
      const measured_run m = run_untold_measured(args_of(command, in));
      CHECK(m.run.exit_code == 1);
      CHECK((m.run.out + m.run.err).find("UDM-LIMITS") != std::string::npos);
      CHECK(m.peak_heap < 4 * MiB);
      CHECK(m.output_bytes < 4096);
    }
    const fs::path out = dir / (name + ".udm");
    const measured_run m = run_untold_measured("udm convert " + quoted(in) + " " + quoted(out) + " --to ascii", {out});
    CHECK(m.run.exit_code == 1);
    CHECK(m.run.err.find("UDM-LIMITS") != std::string::npos);
    CHECK(!fs::exists(out));
    CHECK(m.peak_heap < 4 * MiB);
  }
}

TEST_CASE("udm convert: ASCII whose LZ4 data no reader accepts, empty text and NUL bytes are errors, nothing is written") {
  // Audit: each converted to a binary file our reader rejects (or to an
  // asset "nil"), exit 0.
  const fs::path dir = scratch("udm_convert_checked");
  const std::string header = "$string assetType \"T\"\n$uint32 assetVersion 1\n";
  struct bad_input {
    std::string name;
    std::string text;
    std::string rule;
  };
  const std::vector<bad_input> inputs = {
      {"huge_size", "\"assetData\"\n{\n$lz4 z [18446744073709551615][AAAA]\n}\n" + header, "UDM-LIMITS"},
      {"tera_size", "\"assetData\"\n{\n$lz4 z [1099511627776][AAAA]\n}\n" + header, "UDM-LIMITS"},
      {"bad_lz4", "\"assetData\"\n{\n$lz4 z [16][/////w==]\n}\n" + header, "UDM-LZ4"},
      {"empty", "", "UDM-ASCII-SYNTAX"},
      {"nul", std::string(1, '\0'), "UDM-ASCII-SYNTAX"},
      {"after_nul", "\"assetData\"\n{\n}\n" + header + std::string(1, '\0') + "garbage", "UDM-ASCII-SYNTAX"},
  };
  for (const bad_input& b : inputs) {
    CAPTURE(b.name);
    const fs::path in = dir / (b.name + ".udm"), out = dir / (b.name + ".udm_b");
    write_file(in, b.text);
    auto r = run_untold("udm convert " + quoted(in) + " " + quoted(out) + " --json");
    CHECK(r.exit_code == 1);
    CHECK(json::parse(r.out)["error"]["rule"] == b.rule);
    CHECK(!fs::exists(out));
    // validate agrees.
    CHECK(run_untold("validate " + quoted(in)).exit_code == 1);
  }
  // The good text converts both ways.
  const fs::path good = dir / "good.udm";
  write_file(good, "\"assetData\"\n{\n\t$float x 1\n}\n" + header);
  CHECK(run_untold("udm convert " + quoted(good) + " " + quoted(dir / "good.udm_b")).exit_code == 0);
  CHECK(run_untold("udm convert " + quoted(dir / "good.udm_b") + " " + quoted(dir / "back.udm")).exit_code == 0);
  CHECK(read_text(dir / "back.udm") == read_text(good));
}

TEST_CASE("PMDL: weights naming missing bones fail validate and cook with UDM-PMDL-JOINT, NaN values UDM-PMDL-FINITE") {
  const fs::path dir = scratch("udm_pmdl_rules");
  const auto weight_id = [](std::int32_t id) {
    return [id](u::property& sub, u::property&) {
      u::property& w = *sub.find("vertexWeights");
      u::store_value(w.bytes.data() + 3 * 32, u::vec4i{0, id, -1, -1});
    };
  };
  for (const std::int32_t id : {7, -5}) {
    CAPTURE(id);
    const fs::path in = dir / ("joint" + std::to_string(id) + ".pmdl_b");
    write_file(in, u::write_binary(pmdl(16, 2, weight_id(id))).value());
    auto v = run_untold("validate " + quoted(in));
    CHECK(v.exit_code == 1);
    CHECK(v.out.find("UDM-PMDL-JOINT") != std::string::npos);
    auto c = run_untold("cook " + quoted(in) + " -o " + quoted(dir / "x.untold"));
    CHECK(c.exit_code == 1);
    CHECK(c.err.find("UDM-PMDL-JOINT") != std::string::npos);
    CHECK(c.err.find("E-INVALID-ARGUMENT") == std::string::npos);
    CHECK(!fs::exists(dir / "x.untold"));
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<std::string, std::function<void(u::property&, u::property&)>>> non_finite = {
      {"position",
       [&](u::property& sub, u::property&) {
         u::property& v = *sub.find("vertices");
         v = u::decompress_array(v).value();
         u::store_value(v.bytes.data() + 5 * 48, nan);
       }},
      {"weight", [&](u::property& sub, u::property&) { u::store_value(sub.find("vertexWeights")->bytes.data() + 16, inf); }},
      {"pose",
       [&](u::property&, u::property& data) {
         *data.find("skeleton")->find("assetData")->find("bones")->find("bone1")->find("pose") =
             u::make_value(u::scaled_transform{{0, 0, 0}, {0, 0, nan, 1}, {1, 1, 1}});
       }},
  };
  for (const auto& entry : non_finite) {
    const std::string& what = entry.first;
    const auto& edit = entry.second;
    CAPTURE(what);
    const fs::path in = dir / ("nan_" + what + ".pmdl_b");
    write_file(in, u::write_binary(pmdl(16, 2, edit)).value());
    CHECK(run_untold("validate " + quoted(in)).exit_code == 0);  // a value rule: deep
    auto v = run_untold("validate --deep " + quoted(in));
    CHECK(v.exit_code == 1);
    CHECK(v.out.find("UDM-PMDL-FINITE") != std::string::npos);
    auto c = run_untold("cook " + quoted(in) + " -o " + quoted(dir / "y.untold"));
    CHECK(c.exit_code == 1);
    CHECK(c.err.find("UDM-PMDL-FINITE") != std::string::npos);
    CHECK(c.err.find("E-INVALID-ARGUMENT") == std::string::npos);
  }
  // The model itself is fine.
  const fs::path good = dir / "good.pmdl_b";
  write_file(good, u::write_binary(pmdl(16, 2)).value());
  CHECK(run_untold("validate --deep " + quoted(good)).exit_code == 0);
  auto cooked = run_untold("cook " + quoted(good) + " -o " + quoted(dir / "good.untold"));
  CHECK_MESSAGE(cooked.exit_code == 0, cooked.err);
}

// ---- budget tests: three sizes, stated bounds ----------------------------------------------------
// Bounds: peak heap <= k x input + 2 MiB and output <= k' x input + a few KiB,
// with k about twice what the runs measure at 100x (the inputs are 5-700 KB:
// a quadratic stage would break them at 10x or 100x). Every run is also
// within the budget's own caps (limits.hpp: 64 B per input byte + 64 MiB of
// memory, the same of output), which these inputs do not come near.

namespace {
constexpr std::uint64_t heap_constant = 2 * MiB;
budget_bound bound(double heap, double output, std::uint64_t output_constant = 4096) {
  return {heap, heap_constant, output, output_constant};
}
std::string convert_to(const char* form, const fs::path& in, const fs::path& out) {
  return "udm convert " + quoted(in) + " " + quoted(out) + " --to " + form;
}
std::string convert(const fs::path& in, const fs::path& out, const char* name) {
  return "convert -q -p " + quoted(in) + " " + quoted(out / name);
}
}  // namespace

TEST_CASE("budget: binary UDM under info, dump, validate and udm convert") {
  const auto make = [](const fs::path& dir, std::uint32_t scale) {
    const fs::path in = dir / ("doc" + std::to_string(scale) + ".udm_b");
    write_file(in, u::write_binary(structured(25 * scale)).value());
    return in;
  };
  // Measured at 100x (496 KB): info 6x, dump 37x heap and 10x (JSON) / 6x
  // (text) output, convert 19x heap and 1.6x output.
  run_at_three_sizes(
      "budget_udm_binary", make,
      {{"info --json", [](const fs::path& in, const fs::path&) { return args_of("info --json", in); }, bound(12, 1)},
       {"validate --deep", [](const fs::path& in, const fs::path&) { return args_of("validate --deep", in); }, bound(12, 0)},
       {"dump --json", [](const fs::path& in, const fs::path&) { return args_of("dump --json", in); }, bound(80, 24, 64 * 1024)},
       {"dump", [](const fs::path& in, const fs::path&) { return args_of("dump", in); }, bound(80, 16, 64 * 1024)},
       {"udm convert --to ascii", [](const fs::path& in, const fs::path& out) { return convert_to("ascii", in, out); },
        bound(40, 4)}});
}

TEST_CASE("budget: UDM ASCII under info, dump, validate and udm convert") {
  const auto make = [](const fs::path& dir, std::uint32_t scale) {
    const fs::path in = dir / ("doc" + std::to_string(scale) + ".udm");
    write_file(in, u::write_ascii(structured(20 * scale)).value());
    return in;
  };
  // Measured at 100x (635 KB): info and validate 7.4x, dump 24x heap and
  // 6.5x output, convert 10.6x heap and 0.6x output.
  run_at_three_sizes(
      "budget_udm_ascii", make,
      {{"info --json", [](const fs::path& in, const fs::path&) { return args_of("info --json", in); }, bound(16, 1)},
       {"validate", [](const fs::path& in, const fs::path&) { return args_of("validate", in); }, bound(16, 0)},
       {"dump --json", [](const fs::path& in, const fs::path&) { return args_of("dump --json", in); }, bound(48, 16, 64 * 1024)},
       {"udm convert --to binary", [](const fs::path& in, const fs::path& out) { return convert_to("binary", in, out); },
        bound(24, 2)}});
}

TEST_CASE("budget: PMDL models under info, validate --deep, dump, cook and udm convert") {
  // Measured at 100x (554 KB binary, 725 KB text): info 1.8x, validate
  // --deep 3.4x, dump 83x heap and 36x output (every vertex member on a
  // line), cook 5.2x heap and 1.2x output, convert 5.7x / 4.2x heap.
  run_at_three_sizes(
      "budget_pmdl",
      [](const fs::path& dir, std::uint32_t scale) {
        const fs::path in = dir / ("model" + std::to_string(scale) + ".pmdl_b");
        write_file(in, u::write_binary(pmdl(100 * scale, 4 * scale)).value());
        return in;
      },
      {{"info --json", [](const fs::path& in, const fs::path&) { return args_of("info --json", in); }, bound(4, 1)},
       {"validate --deep", [](const fs::path& in, const fs::path&) { return args_of("validate --deep", in); }, bound(8, 0)},
       {"dump --json", [](const fs::path& in, const fs::path&) { return args_of("dump --json", in); },
        bound(160, 72, 256 * 1024)},
       {"cook", [](const fs::path& in, const fs::path& out) { return cook_command(in, out); }, bound(12, 3, 16 * 1024)},
       {"convert to .glb", [](const fs::path& in, const fs::path& out) { return convert(in, out, "model.glb"); },
        bound(24, 6, 64 * 1024)},
       {"convert to .pmdl_b", [](const fs::path& in, const fs::path& out) { return convert(in, out, "model.pmdl_b"); },
        bound(24, 6, 64 * 1024)},
       {"udm convert --to ascii", [](const fs::path& in, const fs::path& out) { return convert_to("ascii", in, out); },
        bound(12, 3)}});
  // Urho3D refuses a skin palette of more than 256 bones (the 100x model
  // above has 400): the .mdl target's inputs keep 16 bones at every size.
  run_at_three_sizes(
      "budget_pmdl_to_mdl",
      [](const fs::path& dir, std::uint32_t scale) {
        const fs::path in = dir / ("model" + std::to_string(scale) + ".pmdl_b");
        write_file(in, u::write_binary(pmdl(100 * scale, 16)).value());
        return in;
      },
      {{"convert to .mdl", [](const fs::path& in, const fs::path& out) { return convert(in, out, "model.mdl"); },
        bound(24, 6, 64 * 1024)}});
  run_at_three_sizes(
      "budget_pmdl_ascii",
      [](const fs::path& dir, std::uint32_t scale) {
        const fs::path in = dir / ("model" + std::to_string(scale) + ".pmdl");
        write_file(in, u::write_ascii(pmdl(100 * scale, 4 * scale)).value());
        return in;
      },
      {{"udm convert --to binary", [](const fs::path& in, const fs::path& out) { return convert_to("binary", in, out); },
        bound(10, 1)},
       {"cook", [](const fs::path& in, const fs::path& out) { return cook_command(in, out); }, bound(10, 2, 16 * 1024)}});
}
