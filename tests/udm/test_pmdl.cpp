// PMDL models: extraction from the real fixtures and import into the neutral
// scene (counts, units, materials, report), plus a built skinned model with
// 32-bit indices, extra uv sets and a bone hierarchy, and the UDM-PMDL rules.
#include "udm_support.hpp"

#include <algorithm>
#include <functional>
#include <limits>

#include <untold/udm/pmdl.hpp>

using namespace untold;
using namespace udm_test;

namespace {

struct expected {
  const char* name;
  std::size_t sub_meshes;
  std::size_t vertices;  // of the first sub-mesh
  std::size_t indices;
};
// From the arrays' u32 count fields in the raw bytes (cube: 36 at offsets 0x835 and 0xac7).
constexpr expected fixtures[] = {{"cube", 1, 36, 36}, {"empty", 0, 0, 0}, {"error", 1, 300, 300}, {"rect_unlit", 1, 36, 36}};

}  // namespace

TEST_CASE("fixtures: extraction and import with the source's vertex and index counts") {
  for (const expected& e : fixtures) {
    const std::string name = e.name;
    CAPTURE(name);
    const bytes f = fixture(e.name);
    auto doc = u::open_document(f);
    REQUIRE(doc);
    auto model = u::pmdl_from_document(*doc);
    REQUIRE_MESSAGE(model, (model ? "" : model.error().describe()));
    REQUIRE(model->sub_meshes.size() == e.sub_meshes);
    auto scene = u::import_pmdl(f);
    REQUIRE_MESSAGE(scene, (scene ? "" : scene.error().describe()));
    CHECK(static_cast<bool>(convert::validate_model(*scene)));
    REQUIRE(scene->meshes.size() == e.sub_meshes);
    if (e.sub_meshes == 0) continue;
    const u::pmdl_sub_mesh& s = model->sub_meshes[0];
    CHECK(s.vertex_count() == e.vertices);
    CHECK(s.index_count == e.indices);
    CHECK(s.index_type == u::type::uint16);
    const convert::mesh& m = scene->meshes[0];
    CHECK(m.vertex_count() == e.vertices);
    CHECK(m.indices.size() == e.indices);
    CHECK(m.normals.size() == 3 * e.vertices);
    CHECK(m.tangents.size() == 4 * e.vertices);
    CHECK(m.uv0.size() == 2 * e.vertices);
    // Units: Pragma units x 0.025 = metres (the cube's -1..1 units = -0.025..0.025 m).
    for (std::size_t i = 0; i < e.vertices; ++i) {
      const u::vec3 src = s.vertices.get<u::vec3>(i, s.position);
      CHECK(m.positions[3 * i] == src.x * 0.025f);
      CHECK(m.positions[3 * i + 1] == src.y * 0.025f);
      CHECK(m.positions[3 * i + 2] == src.z * 0.025f);
    }
    if (std::string_view(e.name) == "cube")
      for (float p : m.positions) CHECK(std::fabs(p) == doctest::Approx(0.025f));
    for (std::size_t i = 0; i < e.vertices; ++i) CHECK(std::fabs(m.tangents[4 * i + 3]) == 1.0f);
    // Indices equal the source's, widened.
    for (std::size_t i = 0; i < e.indices; ++i) CHECK(m.indices[i] == s.index(i));
    // Materials by name, placeholder PBR, and the report says so.
    REQUIRE(m.material != convert::no_ref);
    CHECK(scene->materials[m.material].name == std::string(model->materials[0]));
    CHECK(scene->report.lost_anything());  // collision meshes, mass, eye offset ...
    bool reported_materials = false, reported_mass = false;
    for (const auto& r : scene->report.entries) {
      if (r.what == "materials" && r.severity == convert::report_entry::kind::info) reported_materials = true;
      if (r.what == "model property 'mass'" && r.severity == convert::report_entry::kind::dropped) reported_mass = true;
    }
    CHECK(reported_materials);
    CHECK(reported_mass);
    // One node per mesh group under the root.
    CHECK(scene->nodes.size() == 1 + model->group_names.size());
    CHECK(scene->skeletons.size() == 1);  // the fixtures have a one-bone skeleton
  }
}

TEST_CASE("a skinned model: bones in parent order, weights, skin palette, uint32 indices, uv sets") {
  const bytes f = u::write_binary(skinned_model()).value();
  auto doc = u::open_document(f);
  REQUIRE(doc);
  auto model = u::pmdl_from_document(*doc);
  REQUIRE(model);
  REQUIRE(model->bones.size() == 3);
  CHECK(model->bones[0].name == "root");
  CHECK(model->bones[1].name == "arm");
  CHECK(model->bones[1].parent == 0);
  CHECK(model->bones[2].parent == 1);
  CHECK(model->sub_meshes[0].index_type == u::type::uint32);
  auto scene = u::import_pmdl(*doc);
  REQUIRE_MESSAGE(scene, (scene ? "" : scene.error().describe()));
  REQUIRE(scene->meshes.size() == 2);
  const convert::mesh& m = scene->meshes[0];
  CHECK(m.indices == std::vector<std::uint32_t>{0, 1, 2, 2, 1, 3});
  CHECK(m.positions[3] == doctest::Approx(1.0f));  // 40 units = 1 m
  CHECK(m.uv1.size() == 8);
  CHECK(m.extra_uvs.size() == 1);
  REQUIRE(m.skin == 0);
  REQUIRE(m.joints.size() == 4);
  // File bone index 2 is "root" (joint 0), 0 is "arm" (joint 1), 1 is "hand" (joint 2).
  const convert::skin& sk = scene->skins[0];
  CHECK(sk.joints == std::vector<std::uint32_t>{1, 2, 0});
  CHECK(m.joints[1][0] == 1);
  CHECK(m.joints[1][1] == 2);
  CHECK(m.weights[1][0] == 0.75f);
  CHECK(m.weights[1][2] == 0.0f);  // -1: unused slot
  const convert::skeleton& skel = scene->skeletons[0];
  CHECK(skel.joints[2].rest.translation[0] == doctest::Approx(1.0f));
  // hand is at 2 m along x in skeleton space: its inverse bind moves it back.
  CHECK(skel.joints[2].inverse_bind[12] == doctest::Approx(-2.0f));
  // Materials through the skin table: group "head" uses skin material 1 -> material 0.
  CHECK(scene->materials[scene->meshes[0].material].name == "metal");
  CHECK(scene->materials[scene->meshes[1].material].name == "skin");
  // The clip: two channels mapped (positions in metres), the flex channel reported.
  REQUIRE(scene->animations.size() == 1);
  const convert::animation& anim = scene->animations[0];
  CHECK(anim.name == "wave");
  CHECK(anim.duration == 0.5f);
  REQUIRE(anim.channels.size() == 2);
  CHECK(anim.channels[0].joint == 1);
  CHECK(anim.channels[0].path == convert::anim_path::translation);
  CHECK(anim.channels[0].values[3] == doctest::Approx(1.0f));
  CHECK(anim.channels[1].path == convert::anim_path::rotation);
  CHECK(anim.channels[1].interp == convert::interpolation::step);
  CHECK(anim.channels[1].values[5] == 1.0f);  // second key: x, y = 1, z, w
  bool reported = false;
  for (const auto& r : scene->report.entries)
    if (r.what == "animation channels" && r.count == 1) reported = true;
  CHECK(reported);
  CHECK(static_cast<bool>(convert::validate_model(*scene)));
}

TEST_CASE("UDM-PMDL: models a loader cannot use") {
  // Not a model.
  const bytes other = asset_file({});
  auto doc = u::open_document(other);
  REQUIRE(doc);
  CHECK(u::pmdl_from_document(*doc).error().code == errc::udm_pmdl);
  auto with = [](auto edit) {
    u::property tree = skinned_model();
    edit(*tree.find("assetData"));
    return u::write_binary(tree).value();
  };
  auto sub_data = [](u::property& data) -> u::property& {
    return *data.find("meshGroups")->find("body")->find("meshes")->items[0].find("subMeshes")->items[0].find("assetData");
  };
  // An index past the vertices.
  const bytes bad_index = with([&](u::property& d) {
    *sub_data(d).find("indices") = u::make_array<std::uint32_t>(std::vector<std::uint32_t>{0, 1, 4});
  });
  auto e1 = u::import_pmdl(bad_index);
  REQUIRE(!e1);
  CHECK(e1.error().code == errc::udm_pmdl);
  CHECK(std::string(e1.error().context.field) == "indices");
  // A triangle list that is not a multiple of 3.
  const bytes ragged = with([&](u::property& d) {
    *sub_data(d).find("indices") = u::make_array<std::uint16_t>(std::vector<std::uint16_t>{0, 1});
  });
  CHECK(u::import_pmdl(ragged).error().code == errc::udm_pmdl);
  // Vertices without a position member.
  const bytes no_pos = with([&](u::property& d) {
    u::property& v = *sub_data(d).find("vertices");
    v.layout.names[0] = "p";
  });
  CHECK(u::import_pmdl(no_pos).error().code == errc::udm_pmdl);
  // Two bones with the same index.
  const bytes dup_bone = with([&](u::property& d) {
    u::property& root = *d.find("skeleton")->find("assetData")->find("bones")->find("root");
    *root.find("index") = u::make_value<std::uint32_t>(0);
  });
  CHECK(u::import_pmdl(dup_bone).error().code == errc::udm_pmdl);
  // Indices of a type no model uses.
  const bytes float_idx = with([&](u::property& d) { *sub_data(d).find("indices") = u::make_array<float>({}); });
  CHECK(u::import_pmdl(float_idx).error().code == errc::udm_pmdl);
  // Weights for a different number of vertices.
  const bytes bad_weights = with([&](u::property& d) {
    u::property& w = *sub_data(d).find("vertexWeights");
    w.count = 2;
    w.bytes.resize(2 * 32);
  });
  CHECK(u::import_pmdl(bad_weights).error().code == errc::udm_pmdl);
}

TEST_CASE("extract_positions matches the importer") {
  const bytes f = fixture("error");
  auto doc = u::open_document(f);
  REQUIRE(doc);
  auto model = u::pmdl_from_document(*doc);
  REQUIRE(model);
  const u::pmdl_sub_mesh& s = model->sub_meshes[0];
  std::vector<float> out(3 * s.vertex_count());
  u::extract_positions(s, out, 0.025f);
  auto scene = u::import_pmdl(*doc);
  REQUIRE(scene);
  CHECK(out == scene->meshes[0].positions);
}

namespace {
u::property& first_sub_mesh(u::property& data) {
  return *data.find("meshGroups")->find("body")->find("meshes")->items[0].find("subMeshes")->items[0].find("assetData");
}
bytes skinned_with(const std::function<void(u::property&)>& edit) {
  u::property tree = skinned_model();
  edit(*tree.find("assetData"));
  return u::write_binary(tree).value();
}
/// The struct array of `name` in the first sub-mesh, uncompressed (so one
/// value can be edited in place).
u::property& sub_mesh_array(u::property& data, const char* name) {
  u::property& a = *first_sub_mesh(data).find(name);
  if (a.kind == u::type::array_lz4) a = u::decompress_array(a).value();
  return a;
}
}  // namespace

TEST_CASE("UDM-PMDL-JOINT: a weight naming a bone the skeleton lacks fails pmdl_from_document and the import") {
  // Audit: joint 7 of 2 bones and joint -5 passed validate and cook, which
  // dropped those influences. -1 is Pragma's unused slot and stays valid.
  for (const std::int32_t id : {3, 7, -5, -2, 0x7FFFFFFF}) {
    CAPTURE(id);
    const bytes f = skinned_with([id](u::property& d) {
      u::property& w = sub_mesh_array(d, "vertexWeights");
      u::store_value(w.bytes.data() + 2 * 32, u::vec4i{0, id, -1, -1});  // vertex 2
    });
    auto doc = u::open_document(f);
    REQUIRE(doc);
    auto model = u::pmdl_from_document(*doc);
    REQUIRE(!model);
    const error& e = model.error();
    CHECK(e.code == errc::udm_pmdl_joint);
    CHECK(e.rule_id() == "UDM-PMDL-JOINT");
    CHECK(std::string(e.context.field) == "vertexWeights.id");
    CHECK(e.context.record_index == 2);
    CHECK(e.context.value == static_cast<std::uint32_t>(id));
    CHECK(e.context.limit == 3);
    CHECK(e.subject() == "body");
    CHECK(u::import_pmdl(f).error().code == errc::udm_pmdl_joint);
  }
}

TEST_CASE("UDM-PMDL-FINITE: NaN or infinite positions, weights, poses and keys fail the import") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct bad_value {
    const char* field;
    std::function<void(u::property&)> edit;
  };
  const bad_value cases[] = {
      {"vertices.pos",
       [&](u::property& d) { u::store_value(sub_mesh_array(d, "vertices").bytes.data() + 48 + 4, nan); }},
      {"vertices.pos",
       [&](u::property& d) { u::store_value(sub_mesh_array(d, "vertices").bytes.data() + 3 * 48 + 8, -inf); }},
      {"vertices.uv",
       [&](u::property& d) { u::store_value(sub_mesh_array(d, "vertices").bytes.data() + 2 * 48 + 12 + 4, nan); }},
      {"uvSets",
       [&](u::property& d) {
         *first_sub_mesh(d).find("uvSets")->find("detail") =
             u::make_array<u::vec2>(std::vector<u::vec2>{{0, 0}, {inf, 0}, {0, 0}, {0, 0}});
       }},
      {"vertexWeights.w",
       [&](u::property& d) { u::store_value(sub_mesh_array(d, "vertexWeights").bytes.data() + 32 + 16, nan); }},
      {"subMesh.pose",
       [&](u::property& d) {
         *first_sub_mesh(d).find("pose") = u::make_value(u::scaled_transform{{0, 0, 0}, {0, 0, 0, 1}, {1, inf, 1}});
       }},
      {"bone.pose",
       [&](u::property& d) {
         u::property& root = *d.find("skeleton")->find("assetData")->find("bones")->find("root");
         *root.find("pose") = u::make_value(u::scaled_transform{{nan, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}});
       }},
      {"animation.duration",
       [&](u::property& d) { *d.find("animations")->find("wave")->find("assetData")->find("duration") = u::make_value(inf); }},
  };
  for (const bad_value& c : cases) {
    CAPTURE(c.field);
    const bytes f = skinned_with(c.edit);
    auto doc = u::open_document(f);
    REQUIRE(doc);
    CHECK(u::pmdl_from_document(*doc));  // the structure is fine: a value rule (validate --deep)
    auto scene = u::import_pmdl(*doc);
    REQUIRE(!scene);
    CHECK(scene.error().code == errc::udm_pmdl_finite);
    CHECK(std::string(scene.error().context.field) == c.field);
    CHECK(scene.error().context.value_is_float);
  }
  // The records name the vertex.
  const bytes f = skinned_with(cases[1].edit);
  auto doc = u::open_document(f);
  REQUIRE(doc);
  auto model = u::pmdl_from_document(*doc);
  REQUIRE(model);
  CHECK(u::check_pmdl_values(*model).error().context.record_index == 3);
  // A NaN key in a mapped channel.
  auto keyed = u::import_pmdl(skinned_with([&](u::property& d) {
    u::property& channels = *d.find("animations")->find("wave")->find("assetData")->find("channels");
    u::property expanded = u::decompress_array(channels).value();
    *expanded.items[0].find("times") = u::make_array<float>(std::vector<float>{0.0f, nan});
    channels = u::compress_array(expanded).value();
  }));
  REQUIRE(!keyed);
  CHECK(keyed.error().code == errc::udm_pmdl_finite);
  CHECK(std::string(keyed.error().context.field) == "animation.times");
}

TEST_CASE("budget: the import shares the parse's budget, so a small file cannot make a large scene") {
  // Audit: a 3.2 MB PMDL took 1.65 GB to validate or cook (a highly
  // compressible vertex block, decoded, then copied into the scene).
  constexpr std::uint32_t n = 20000;
  u::struct_layout vl{{u::type::vector3, u::type::vector2, u::type::vector3, u::type::vector4}, {"pos", "uv", "n", "t"}};
  const bytes f = skinned_with([&](u::property& d) {
    u::property& s = first_sub_mesh(d);
    *s.find("vertices") = u::compress_array(u::make_struct_array(vl, n, std::vector<std::byte>(n * vl.size()))).value();
    *s.find("indices") = u::make_array<std::uint32_t>({});
    s.children.erase(std::remove_if(s.children.begin(), s.children.end(),
                                    [](const u::child& c) { return c.key == "vertexWeights" || c.key == "uvSets"; }),
                     s.children.end());
  });
  CHECK(f.size() < 16000);
  const std::uint64_t decoded = std::uint64_t{n} * vl.size();  // 960 KB: the scene needs as much again
  u::pmdl_import_options o;
  o.limits.memory_floor = 0;
  o.limits.memory_per_input_byte = static_cast<std::uint32_t>(3 * decoded / 2 / f.size());
  u::open_options ro;
  ro.limits = o.limits;
  CHECK(u::open_document(f, ro));  // the parse alone fits
  auto scene = u::import_pmdl(f, o);
  REQUIRE(!scene);
  CHECK(scene.error().code == errc::udm_limit);
  CHECK(std::string(scene.error().context.field) == "vertices");
  o.limits.memory_per_input_byte = static_cast<std::uint32_t>(3 * decoded / f.size());
  CHECK(u::import_pmdl(f, o));
}

TEST_CASE("import: finite poses whose matrices are not, names that are not UTF-8, keys out of order") {
  // Found by fuzz_udm_binary/ascii running cook's converter: each made the
  // .untold writer fail with a generic E-INVALID-ARGUMENT.
  const float huge = 3e38f;
  // A huge unnormalised rotation: finite, but its matrix overflows.
  auto scene = u::import_pmdl(skinned_with([&](u::property& d) {
    *d.find("skeleton")->find("assetData")->find("bones")->find("root")->find("pose") =
        u::make_value(u::scaled_transform{{0, 0, 0}, {huge, huge, 0, 1}, {1, 1, 1}});
  }));
  REQUIRE(!scene);
  CHECK(scene.error().code == errc::udm_pmdl_finite);
  CHECK(std::string(scene.error().context.field) == "bone.pose");
  CHECK(scene.error().subject() == "root");
  // A zero scale is singular, not infinite: its inverse bind is the identity.
  CHECK(u::import_pmdl(skinned_with([&](u::property& d) {
    *d.find("skeleton")->find("assetData")->find("bones")->find("root")->find("pose") =
        u::make_value(u::scaled_transform{{0, 0, 0}, {0, 0, 0, 1}, {0, 0, 0}});
  })));
  // A sub-mesh pose that takes finite positions past the float range.
  auto posed = u::import_pmdl(skinned_with([&](u::property& d) {
    *first_sub_mesh(d).find("pose") = u::make_value(u::scaled_transform{{0, 0, 0}, {0, 0, 0, 1}, {huge, huge, huge}});
  }));
  REQUIRE(!posed);
  CHECK(posed.error().code == errc::udm_pmdl_finite);
  CHECK(std::string(posed.error().context.field) == "subMesh.pose");
  CHECK(posed.error().context.record_index == 1);  // vertex 0 is at the origin
  // Names are bytes in UDM; the scene's are UTF-8, reported as changed.
  const std::string bad_name = std::string("ar\xFFm\0x", 6);
  auto renamed = u::import_pmdl(skinned_with([&](u::property& d) {
    u::property& bones = *d.find("skeleton")->find("assetData")->find("bones");
    bones.children[0].key = bad_name;
    d.find("meshGroups")->children[0].key = "b\xC3";
  }));
  REQUIRE_MESSAGE(renamed, renamed.error().describe());
  CHECK(renamed->skeletons[0].joints[0].name == "ar?mx");
  CHECK(renamed->nodes[1].name == "b?");
  bool reported = false;
  for (const auto& r : renamed->report.entries)
    if (r.what == "names" && r.severity == convert::report_entry::kind::changed && r.count == 3) reported = true;
  CHECK(reported);  // the bone, the group's node and its mesh
  // Key times that decrease: the channel is dropped and reported, not an error.
  auto unordered = u::import_pmdl(skinned_with([&](u::property& d) {
    u::property& channels = *d.find("animations")->find("wave")->find("assetData")->find("channels");
    u::property expanded = u::decompress_array(channels).value();
    *expanded.items[0].find("times") = u::make_array<float>(std::vector<float>{0.5f, 0.0f});
    channels = u::compress_array(expanded).value();
  }));
  REQUIRE_MESSAGE(unordered, unordered.error().describe());
  CHECK(unordered->animations[0].channels.size() == 1);
  bool dropped = false;
  for (const auto& r : unordered->report.entries)
    if (r.what == "animation channels" && r.count == 2) dropped = true;
  CHECK(dropped);
}

namespace {
/// A PMDL of one sub-mesh with `n` vertices (pos, uv, n, t: 48 bytes),
/// weights ({id, w}: 32 bytes) and a triangle (v, v + 1, v + 2 mod n) per
/// vertex with `Index` indices; `edit` changes the vertex, weight and index
/// bytes before they are written.
template <class Index>
bytes grid_pmdl(std::uint32_t n, const std::function<void(std::vector<std::byte>&, std::vector<std::byte>&,
                                                          std::vector<Index>&)>& edit) {
  const u::struct_layout vl{{u::type::vector3, u::type::vector2, u::type::vector3, u::type::vector4}, {"pos", "uv", "n", "t"}};
  const u::struct_layout wl{{u::type::vector4i, u::type::vector4}, {"id", "w"}};
  std::vector<std::byte> verts(std::size_t{n} * vl.size()), weights(std::size_t{n} * wl.size());
  std::vector<Index> idx;
  for (std::uint32_t v = 0; v < n; ++v) {
    std::byte* p = verts.data() + std::size_t{v} * vl.size();
    u::store_value(p, u::vec3{float(v), 1, 2});
    u::store_value(p + 12, u::vec2{0.25f, 0.75f});
    u::store_value(p + 20, u::vec3{0, 0, 1});
    u::store_value(p + 32, u::vec4{1, 0, 0, 1});
    u::store_value(weights.data() + std::size_t{v} * wl.size(), u::vec4i{-1, -1, -1, -1});
    u::store_value(weights.data() + std::size_t{v} * wl.size() + 16, u::vec4{1, 0, 0, 0});
    idx.insert(idx.end(), {Index(v), Index((v + 1) % n), Index((v + 2) % n)});
  }
  edit(verts, weights, idx);
  u::property sub = u::make_element();
  sub.add("vertices", u::make_struct_array(vl, n, verts));
  sub.add("vertexWeights", u::make_struct_array(wl, n, weights));
  sub.add("indices", u::make_array<Index>(idx));
  return u::write_binary(one_sub_mesh_model(std::move(sub))).value();
}
}  // namespace

// The import's value checks summarise each array in one pass (the largest
// index; whether the checked floats are finite) and walk it value by value
// only when the summary shows a problem: wherever the bad value lies (in a
// whole vector block or the tail), the error is the walk's.
TEST_CASE("import: a bad index or float is found wherever it lies, with the same context") {
  constexpr std::uint32_t n = 23;  // vertex structs: 4 blocks of 5 and a tail of 3; weights: 2 of 8 and 7
  using edit_fn = std::function<void(std::vector<std::byte>&, std::vector<std::byte>&, std::vector<std::uint32_t>&)>;
  REQUIRE(u::import_pmdl(grid_pmdl<std::uint32_t>(n, [](auto&, auto&, auto&) {})));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::uint32_t v = 0; v < n; ++v) {
    CAPTURE(v);
    for (std::size_t word = 0; word < 12; ++word) {
      CAPTURE(word);
      const bytes f = grid_pmdl<std::uint32_t>(n, edit_fn([&](auto& verts, auto&, auto&) {
        u::store_value(verts.data() + 48 * std::size_t{v} + 4 * word, word % 2 == 0 ? nan : -std::numeric_limits<float>::infinity());
      }));
      const auto scene = u::import_pmdl(f);
      if (word >= 5) {  // the normal and tangent: not checked
        CHECK(scene.has_value());
        continue;
      }
      REQUIRE_FALSE(scene);
      CHECK(scene.error().code == errc::udm_pmdl_finite);
      CHECK(std::string(scene.error().context.field) == (word < 3 ? "vertices.pos" : "vertices.uv"));
      CHECK(scene.error().context.record_index == v);
    }
    for (std::size_t k = 0; k < 4; ++k) {
      const bytes f = grid_pmdl<std::uint32_t>(n, edit_fn([&](auto&, auto& weights, auto&) {
        u::store_value(weights.data() + 32 * std::size_t{v} + 16 + 4 * k, nan);
      }));
      const auto scene = u::import_pmdl(f);
      REQUIRE_FALSE(scene);
      CHECK(std::string(scene.error().context.field) == "vertexWeights.w");
      CHECK(scene.error().context.record_index == v);
    }
  }
  for (std::uint32_t i = 0; i < 3 * n; ++i) {
    CAPTURE(i);
    const auto wide = u::import_pmdl(grid_pmdl<std::uint32_t>(n, edit_fn([&](auto&, auto&, auto& idx) { idx[i] = 0x80000000u + i; })));
    REQUIRE_FALSE(wide);
    CHECK(wide.error().code == errc::udm_pmdl);
    CHECK(std::string(wide.error().context.field) == "indices");
    CHECK(wide.error().context.value == 0x80000000u + i);
    const auto narrow = u::import_pmdl(grid_pmdl<std::uint16_t>(
        n, [&](auto&, auto&, std::vector<std::uint16_t>& idx) { idx[i] = static_cast<std::uint16_t>(n + i); }));
    REQUIRE_FALSE(narrow);
    CHECK(narrow.error().context.value == n + i);
  }
}
