// The PMDL writer (convert::to_pmdl): PMDL -> scene -> PMDL -> scene keeps
// vertices, indices, weights, skeleton, clips, materials and names on every
// sample file and on a built skinned model; the bytes are deterministic and
// equal a committed golden file; indices are 16-bit where they fit; units
// invert the importer's scaling exactly; what PMDL cannot hold is reported.
//
// Regenerate the golden file (only after a deliberate change of the writer) with
//   UNTOLD_WRITE_GOLDEN=1 ./untold_udm_tests -tc='to_pmdl: deterministic*'
#include "udm_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>

#include <untold/convert/to_pmdl.hpp>
#include <untold/udm/pmdl.hpp>

using namespace untold;
using namespace udm_test;

namespace {

/// Writes `s`, requiring success. Its report goes to `report`.
bytes write(const convert::scene& s, convert::conversion_report& report) {
  auto out = convert::to_pmdl(s, {}, report);
  REQUIRE_MESSAGE(out, (out ? "" : out.error().describe()));
  return std::move(*out);
}

convert::scene import(const bytes& f) {
  auto s = u::import_pmdl(f);
  REQUIRE_MESSAGE(s, (s ? "" : s.error().describe()));
  return std::move(*s);
}

/// The skeleton joints a mesh's influences name (through its skin's
/// palette); a slot without weight names none (PMDL writes -1 there).
std::vector<std::array<std::uint32_t, 4>> influences(const convert::scene& s, const convert::mesh& m) {
  std::vector<std::array<std::uint32_t, 4>> out(m.joints.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    for (int k = 0; k < 4; ++k)
      out[i][k] = m.weights[i][k] == 0 ? convert::no_ref : s.skins[m.skin].joints[m.joints[i][k]];
  return out;
}

/// Parses `f` as the strict reader and pmdl_from_document do (both must
/// accept it) and hands the document and the model to `check`.
template <class Check>
void with_model(const bytes& f, Check&& check) {
  auto doc = u::open_document(f);
  REQUIRE_MESSAGE(doc, (doc ? "" : doc.error().describe()));
  auto model = u::pmdl_from_document(*doc);
  REQUIRE_MESSAGE(model, (model ? "" : model.error().describe()));
  check(*doc, *model);
}

bool mentions(const convert::conversion_report& r, std::string_view what) {
  return std::any_of(r.entries.begin(), r.entries.end(), [&](const convert::report_entry& e) { return e.what == what; });
}

/// `a` and `b` hold the same model: every stream exactly, clips with their
/// channels by (joint, path).
void check_same_model(const convert::scene& a, const convert::scene& b) {
  REQUIRE(a.meshes.size() == b.meshes.size());
  for (std::size_t i = 0; i < a.meshes.size(); ++i) {
    const convert::mesh& x = a.meshes[i];
    const convert::mesh& y = b.meshes[i];
    CAPTURE(x.name);
    CHECK(x.name == y.name);
    CHECK(x.primitive == y.primitive);
    CHECK(x.positions == y.positions);
    CHECK(x.normals == y.normals);
    CHECK(x.tangents == y.tangents);
    CHECK(x.uv0 == y.uv0);
    CHECK(x.uv1 == y.uv1);
    CHECK(x.extra_uvs == y.extra_uvs);
    CHECK(x.indices == y.indices);
    CHECK(x.material == y.material);
    CHECK(x.skin == y.skin);
    CHECK(x.weights == y.weights);
    CHECK(influences(a, x) == influences(b, y));
  }
  REQUIRE(a.nodes.size() == b.nodes.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    CHECK(a.nodes[i].name == b.nodes[i].name);
    CHECK(a.nodes[i].parent == b.nodes[i].parent);
    CHECK(a.nodes[i].meshes == b.nodes[i].meshes);
  }
  REQUIRE(a.materials.size() == b.materials.size());
  for (std::size_t i = 0; i < a.materials.size(); ++i) CHECK(a.materials[i].name == b.materials[i].name);
  REQUIRE(a.skeletons.size() == b.skeletons.size());
  for (std::size_t k = 0; k < a.skeletons.size(); ++k) {
    REQUIRE(a.skeletons[k].joints.size() == b.skeletons[k].joints.size());
    for (std::size_t j = 0; j < a.skeletons[k].joints.size(); ++j) {
      const convert::joint& x = a.skeletons[k].joints[j];
      const convert::joint& y = b.skeletons[k].joints[j];
      CHECK(x.name == y.name);
      CHECK(x.parent == y.parent);
      CHECK(x.rest.translation == y.rest.translation);
      CHECK(x.rest.rotation == y.rest.rotation);
      CHECK(x.rest.scale == y.rest.scale);
      CHECK(x.inverse_bind == y.inverse_bind);
    }
  }
  REQUIRE(a.skins.size() == b.skins.size());  // palettes may differ: influences() compares what they name
  REQUIRE(a.animations.size() == b.animations.size());
  for (std::size_t k = 0; k < a.animations.size(); ++k) {
    CHECK(a.animations[k].name == b.animations[k].name);
    CHECK(a.animations[k].duration == b.animations[k].duration);
    auto sorted = [](std::vector<convert::animation_channel> c) {
      std::sort(c.begin(), c.end(), [](const auto& l, const auto& r) {
        return std::pair(l.joint, l.path) < std::pair(r.joint, r.path);
      });
      return c;
    };
    const auto x = sorted(a.animations[k].channels), y = sorted(b.animations[k].channels);
    REQUIRE(x.size() == y.size());
    for (std::size_t c = 0; c < x.size(); ++c) {
      CHECK(x[c].joint == y[c].joint);
      CHECK(x[c].path == y[c].path);
      CHECK(x[c].times == y[c].times);
      CHECK(x[c].values == y[c].values);
    }
  }
}

bool reported(const convert::conversion_report& r, convert::report_entry::kind kind, std::string_view what,
              std::uint64_t count) {
  return std::any_of(r.entries.begin(), r.entries.end(),
                     [&](const convert::report_entry& e) { return e.severity == kind && e.what == what && e.count == count; });
}

/// One triangle (normals, uvs) under a node, one material: the golden scene.
convert::scene triangle_scene() {
  convert::scene s;
  convert::mesh m;
  m.name = "triangle";
  m.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  m.normals = {0, 0, 1, 0, 0, 1, 0, 0, 1};
  m.uv0 = {0, 0, 1, 0, 0, 1};
  m.indices = {0, 1, 2};
  m.material = 0;
  s.meshes.push_back(m);
  convert::material mat;
  mat.name = "white";
  s.materials.push_back(mat);
  s.nodes.push_back({"triangle", convert::no_ref, {}, {0}});
  return s;
}

}  // namespace

TEST_CASE("to_pmdl: PMDL -> scene -> PMDL -> scene keeps the model, on every sample file and a skinned model") {
  std::vector<std::pair<std::string, bytes>> inputs;
  for (const char* name : fixture_names) inputs.emplace_back(name, fixture(name));
  inputs.emplace_back("skinned", u::write_binary(skinned_model()).value());
  for (const auto& input : inputs) {
    const std::string& name = input.first;
    const bytes& file = input.second;
    CAPTURE(name);
    const convert::scene first = import(file);
    convert::conversion_report report;
    const bytes written = write(first, report);
    // What Pragma's loader needs: a PMDL whose parts the strict reader accepts.
    with_model(written, [&](const u::document& doc, const u::pmdl_model& model) {
      CHECK(doc.asset_type() == "PMDL");
      CHECK(model.sub_meshes.size() == first.meshes.size());
      for (const u::pmdl_sub_mesh& s : model.sub_meshes) CHECK(s.index_type == u::type::uint16);
    });
    const convert::scene second = import(written);
    check_same_model(first, second);
    // And again: the second scene writes the same bytes.
    convert::conversion_report again;
    CHECK(write(second, again) == written);
    CHECK(!mentions(report, "unit conversion"));
  }
}

TEST_CASE("to_pmdl: the skinned model's clip, weights and skeleton in Pragma's layout") {
  const convert::scene first = import(u::write_binary(skinned_model()).value());
  convert::conversion_report report;
  const bytes written = write(first, report);
  auto doc = u::open_document(written);
  REQUIRE(doc);
  // The clip as pragma::animation::Animation::Save writes it: one node set, channels by node and property.
  const u::property_view clip = doc->asset_data()["animations"]["wave"];
  CHECK(clip["assetType"].as_string().value() == "PANI");
  CHECK(clip["index"].as<std::uint32_t>().value() == 0);
  const u::property_view data = clip["assetData"];
  CHECK(data["fps"].as<std::uint8_t>().value() == 2);  // keys at 0 and 0.5 s
  CHECK(data["duration"].as<float>().value() == 0.5f);
  CHECK(data["nodes"][0]["type"].as_string().value() == "bone");
  const auto set = data["nodes"][0]["set"].as_array<std::uint16_t>().value();
  REQUIRE(set.size() == 2);
  CHECK(set[0] == 1);  // arm is joint 1, written as bone index 1
  CHECK(set[1] == 2);
  const u::property_view channels = data["channels"];
  CHECK(channels.kind() == u::type::array_lz4);
  REQUIRE(channels.size() == 2);
  CHECK(channels[0]["node"].as<std::uint16_t>().value() == 0);
  CHECK(channels[0]["property"].as_string().value() == "position");
  CHECK(channels[0]["values"].as_array<u::vec3>().value()[1].x == 40.0f);  // 1 m back in Pragma units
  CHECK(channels[1]["property"].as_string().value() == "rotation");
  // Bones nested as Pragma's Skeleton::Save writes them.
  const u::property_view root = doc->asset_data().find("skeleton/assetData/bones/root").value();
  CHECK(root["index"].as<std::uint32_t>().value() == 0);
  CHECK(root["children"]["arm"]["children"]["hand"]["index"].as<std::uint32_t>().value() == 2);
  CHECK(root["children"]["arm"]["pose"].as<u::scaled_transform>().value().translation.x == 40.0f);
  // Weights name bone indices; the unused slots are -1.
  auto model = u::pmdl_from_document(*doc);
  REQUIRE(model);
  const u::pmdl_sub_mesh& s = model->sub_meshes[0];
  REQUIRE(s.weights);
  const u::vec4i id = s.weights->get<u::vec4i>(1, s.weight_ids);
  // Vertex 1 of the source names file bones 1 ("hand") and 2 ("root"): joints 2 and 0, the bone indices written.
  CHECK(id.x == 2);
  CHECK(id.y == 0);
  CHECK(id.z == -1);
  CHECK(id.w == -1);
  CHECK(reported(report, convert::report_entry::kind::changed, "step channels", 1));
  // Every group is a base group; skins map material i to i.
  CHECK(doc->asset_data()["baseMeshGroups"].as_array<std::uint32_t>().value().size() == 2);
  CHECK(doc->asset_data()["skins"][0]["materials"].as_array<std::uint32_t>().value()[1] == 1);
}

TEST_CASE("to_pmdl: deterministic bytes, and the golden file") {
  const convert::scene s = triangle_scene();
  convert::conversion_report r1, r2;
  const bytes a = write(s, r1);
  const bytes b = write(s, r2);
  CHECK(a == b);
  const std::string golden = std::string(UNTOLD_TEST_DATA_DIR) + "/udm/golden/triangle.pmdl_b";
  if (std::getenv("UNTOLD_WRITE_GOLDEN") != nullptr)
    std::ofstream(golden, std::ios::binary).write(reinterpret_cast<const char*>(a.data()), static_cast<std::streamsize>(a.size()));
  CHECK(load(golden) == a);
  // The golden scene reads back: one group "triangle", material "white", a one-bone skeleton.
  const convert::scene back = import(a);
  REQUIRE(back.meshes.size() == 1);
  CHECK(back.meshes[0].name == "triangle/0/0");
  CHECK(back.meshes[0].positions == s.meshes[0].positions);
  CHECK(back.meshes[0].indices == s.meshes[0].indices);
  CHECK(back.materials[back.meshes[0].material].name == "white");
  REQUIRE(back.skeletons.size() == 1);
  CHECK(back.skeletons[0].joints[0].name == "root");
  CHECK(reported(r1, convert::report_entry::kind::info, "skeleton", 1));
  CHECK(reported(r1, convert::report_entry::kind::changed, "absent vertex streams", 1));  // tangents
}

TEST_CASE("to_pmdl: 16-bit indices where they fit, 32-bit beyond") {
  for (const std::uint32_t vertices : {65536u, 65537u}) {
    CAPTURE(vertices);
    convert::scene s;
    convert::mesh m;
    m.positions.resize(3 * std::size_t{vertices}, 0.0f);
    m.indices = {0, vertices - 2, vertices - 1};
    s.meshes.push_back(m);
    convert::conversion_report report;
    const bytes f = write(s, report);
    with_model(f, [&](const u::document&, const u::pmdl_model& model) {
      CHECK(model.sub_meshes[0].index_type == (vertices <= 65536 ? u::type::uint16 : u::type::uint32));
      CHECK(model.group_names[0] == "default");  // a mesh no node draws
    });
    CHECK(import(f).meshes[0].indices == m.indices);
  }
}

TEST_CASE("to_pmdl: metres to Pragma units invert the importer's scaling, values it never makes are within a step") {
  convert::scene s;
  convert::mesh m;
  std::uint32_t state = 12345;
  for (int i = 0; i < 3000; ++i) {
    state = state * 1664525u + 1013904223u;
    // Floats of every magnitude from 1e-3 to 1e3, both signs.
    const float f = std::ldexp(1.0f + static_cast<float>(state >> 9) / 8388608.0f, static_cast<int>(state % 20) - 10) *
                    (state & 1 ? -1.0f : 1.0f);
    m.positions.push_back(f);
  }
  s.meshes.push_back(m);
  convert::conversion_report report;
  const convert::scene first = import(write(s, report));
  // Values an import made come back exactly through another write.
  convert::conversion_report again;
  const convert::scene second = import(write(first, again));
  CHECK(second.meshes[0].positions == first.meshes[0].positions);
  CHECK(!mentions(again, "unit conversion"));
  // Arbitrary metres: within one float step, and reported.
  std::uint64_t moved = 0;
  for (std::size_t i = 0; i < m.positions.size(); ++i) {
    const float x = m.positions[i], y = first.meshes[0].positions[i];
    CHECK((y == x || y == std::nextafter(x, HUGE_VALF) || y == std::nextafter(x, -HUGE_VALF)));
    moved += y != x ? 1 : 0;
  }
  bool counted = false;
  for (const auto& e : report.entries) counted |= e.what == "unit conversion" && e.count >= moved;
  CHECK((moved == 0 || counted));
}

TEST_CASE("to_pmdl: what a PMDL cannot hold is reported, node transforms are baked") {
  convert::scene s = triangle_scene();
  s.nodes[0].local.translation = {1, 0, 0};
  s.meshes[0].colors.assign(12, 0.5f);
  s.meshes[0].morphs.push_back({"smile", 0, std::vector<float>(9, 0.1f), {}, {}});
  s.meshes[0].lods.push_back({10, {0, 1, 2}});
  s.materials[0].base_color = {1, 0, 0, 1};
  s.textures.push_back({});
  s.lights.push_back({});
  s.cameras.push_back({});
  s.meshes[0].primitive = convert::topology::triangle_strip;
  convert::conversion_report report;
  const convert::scene back = import(write(s, report));
  using k = convert::report_entry::kind;
  CHECK(reported(report, k::dropped, "vertex colours", 1));
  CHECK(reported(report, k::dropped, "morph targets", 1));
  CHECK(reported(report, k::dropped, "LOD levels", 1));
  CHECK(reported(report, k::dropped, "material parameters", 1));
  CHECK(reported(report, k::dropped, "textures", 1));
  CHECK(reported(report, k::dropped, "lights", 1));
  CHECK(reported(report, k::dropped, "cameras", 1));
  CHECK(reported(report, k::changed, "strips and fans", 1));
  CHECK(reported(report, k::changed, "node hierarchy", 1));
  // The node's translation is in the vertices (x + 1 m).
  CHECK(back.meshes[0].positions[0] == doctest::Approx(1.0f));
  CHECK(back.meshes[0].positions[3] == doctest::Approx(2.0f));
}

TEST_CASE("to_pmdl: keys are unique, at most 255 bytes, never empty, a bad unit is refused") {
  convert::scene s = triangle_scene();
  s.nodes.push_back({"triangle", convert::no_ref, {}, {0}});  // same name, draws the mesh again
  s.nodes.push_back({std::string(300, 'n'), convert::no_ref, {}, {0}});
  convert::skeleton sk;
  sk.joints.push_back({"", convert::no_ref, {}, identity_matrix});
  sk.joints.push_back({"b", 0, {}, identity_matrix});
  sk.joints.push_back({"b", 0, {}, identity_matrix});
  s.skeletons.push_back(sk);
  convert::conversion_report report;
  const bytes f = write(s, report);
  with_model(f, [](const u::document&, const u::pmdl_model& model) {
    REQUIRE(model.group_names.size() == 3);
    CHECK(model.group_names[1] == "triangle_1");
    CHECK(model.group_names[2].size() == 255);
    REQUIRE(model.bones.size() == 3);
    CHECK(model.bones[0].name == "bone0");
    CHECK(model.bones[1].name == "b");
    CHECK(model.bones[2].name == "b_1");
  });
  CHECK(reported(report, convert::report_entry::kind::changed, "names", 4));
  CHECK(reported(report, convert::report_entry::kind::changed, "instanced meshes", 2));

  convert::conversion_report unused;
  for (const float unit : {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()}) {
    auto out = convert::to_pmdl(s, {.metres_per_unit = unit}, unused);
    REQUIRE(!out);
    CHECK(out.error().code == errc::invalid_argument);
  }
}
