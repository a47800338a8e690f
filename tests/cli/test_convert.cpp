// `untold convert` (tools/pipeline/convert.hpp) on real files: every input
// format into every target, each output read back by the library's strict
// reader; the engine's skinned, animated Jack (Urho3D) in .glb with its
// joints, clip and counts checked against the Urho3D reader's own numbers;
// the cross-format round trip .mdl -> .untold -> .glb -> .untold against
// .mdl -> .untold, within the tolerances stated in docs/convert.md.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include <untold/convert/from_untold.hpp>
#include <untold/reader.hpp>
#include <untold/urho3d/animation.hpp>
#include <untold/urho3d/model.hpp>

#include "cli_support.hpp"
#include "convert.hpp"
#include "formats.hpp"

namespace {

namespace fs = std::filesystem;
using namespace untold;
using cli_test::test_data;
using json = nlohmann::json;

tools::cook_report run_convert(const fs::path& in, const fs::path& out, std::vector<fs::path> animations = {},
                           bool strict = false) {
  tools::convert_options o;
  o.input = in;
  o.output = out;
  const auto target = tools::convert_target_of(out);
  REQUIRE(target.has_value());
  o.target = *target;
  o.animations = std::move(animations);
  o.strict = strict;
  return tools::convert_file(o);
}

std::uint32_t le32(const std::vector<std::byte>& b, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

/// The JSON chunk of a .glb (the container's first chunk), parsed.
json glb_json(const fs::path& p) {
  const auto b = cli_test::read_bytes(p);
  REQUIRE(b.size() >= 20);
  REQUIRE(le32(b, 0) == 0x46546C67u);  // "glTF"
  REQUIRE(le32(b, 4) == 2);
  REQUIRE(le32(b, 8) == b.size());
  const std::uint32_t length = le32(b, 12);
  REQUIRE(le32(b, 16) == 0x4E4F534Au);  // "JSON"
  REQUIRE(20 + std::size_t{length} <= b.size());
  return json::parse(reinterpret_cast<const char*>(b.data()) + 20, reinterpret_cast<const char*>(b.data()) + 20 + length);
}

/// Opens a .untold with deep checks and imports it into a scene.
convert::scene untold_scene(const fs::path& p) {
  const auto bytes = cli_test::read_bytes(p);
  auto a = untold::open(bytes, {.deep_checks = true});
  REQUIRE_MESSAGE(a.has_value(), a.error().describe());
  auto s = convert::from_untold(*a);
  REQUIRE_MESSAGE(s.has_value(), s.error().describe());
  return std::move(*s);
}

/// What each target's strict reader says about a written file.
void check_reads_back(const fs::path& out) {
  CAPTURE(out.string());
  REQUIRE(fs::exists(out));
  const auto bytes = cli_test::read_bytes(out);
  const std::string e = out.extension().string();
  if (e == ".untold") {
    auto a = untold::open(bytes, {.deep_checks = true});
    CHECK_MESSAGE(a.has_value(), (a ? std::string() : a.error().describe()));
  } else if (e == ".glb" || e == ".gltf") {
    const json doc = e == ".glb" ? glb_json(out) : json::parse(cli_test::read_text(out));
    CHECK(doc.at("asset").at("version") == "2.0");
    CHECK(!doc.value("meshes", json::array()).empty());
  } else {
    const tools::format_handler* f = tools::recognise(bytes);
    REQUIRE_MESSAGE(f != nullptr, "no reader recognises the output");
    const bool validates = f->validate != nullptr;
    REQUIRE(validates);
    const json v = f->validate(out.string(), bytes, true);
    CHECK_MESSAGE(v.value("valid", false), v.dump());
  }
}

}  // namespace

TEST_CASE("convert: every input format into every target, read back by the strict readers") {
  // Inputs: one per importer the tool has (glTF through the glTF importer when
  // assimp-testmodels is installed).
  std::vector<fs::path> inputs = {test_data("urho3d/Models/Box.mdl"), test_data("udm/models/cube.pmdl_b"),
                                  test_data("minimal_v4.untold"), test_data("assetc/quad.hmesh")};
  if (const fs::path gltf = cli_test::assimp_model("glTF2/BoxTextured-glTF-Binary/BoxTextured.glb"); fs::exists(gltf))
    inputs.push_back(gltf);
  else
    MESSAGE("skipped the glTF input: assimp-testmodels is not installed (scripts/install-deps.sh)");
  const fs::path dir = cli_test::scratch("convert_pairs");
  for (const fs::path& in : inputs) {
    for (const char* extension : {".untold", ".mdl", ".glb", ".gltf", ".hmesh", ".pmdl_b"}) {
      const fs::path out = dir / (in.stem().string() + "_" + (in.extension().string().substr(1)) + extension);
      CAPTURE(in.string());
      CAPTURE(out.string());
      const tools::cook_report r = run_convert(in, out);
      REQUIRE_MESSAGE(r.error.empty(), r.error);
      CHECK(r.bytes == fs::file_size(out));
      CHECK(std::find(r.written.begin(), r.written.end(), out) != r.written.end());
      check_reads_back(out);
      if (std::string(extension) == ".gltf") CHECK(fs::exists(fs::path(out).replace_extension(".bin")));
    }
  }
}

TEST_CASE("convert: Urho3D's skinned, animated Jack keeps its joints, its clip and its counts in .glb") {
  const fs::path mdl = test_data("urho3d/Models/Jack.mdl"), ani = test_data("urho3d/Models/Jack_Walk.ani");
  // The facts, from the Urho3D readers alone.
  const auto model_bytes = cli_test::read_bytes(mdl), ani_bytes = cli_test::read_bytes(ani);
  auto model = urho3d::open_model(model_bytes, {.deep_checks = true});
  REQUIRE(model.has_value());
  auto clip = urho3d::open_animation(ani_bytes, {.deep_checks = true});
  REQUIRE(clip.has_value());
  std::set<std::string> bone_names;
  for (const urho3d::bone& b : model->bones) bone_names.emplace(b.name);
  std::uint64_t lod0_indices = 0;
  for (const urho3d::geometry& g : model->geometries) lod0_indices += g.lods.at(0).index_count;
  REQUIRE(model->bones.size() == 67);
  REQUIRE(clip->tracks.size() == 54);

  const fs::path dir = cli_test::scratch("convert_jack");
  const tools::cook_report r = run_convert(mdl, dir / "jack.glb", {ani});
  REQUIRE_MESSAGE(r.error.empty(), r.error);
  CHECK(r.meshes == model->geometries.size());
  CHECK(r.triangles * 3 == lod0_indices);
  const json g = glb_json(dir / "jack.glb");

  // Every bone is a node of that name; the two skins use the geometries' bone mappings.
  std::map<std::string, int> node_of;
  for (std::size_t i = 0; i < g.at("nodes").size(); ++i) node_of[g["nodes"][i].value("name", "")] = static_cast<int>(i);
  for (const std::string& b : bone_names) CHECK_MESSAGE(node_of.count(b) == 1, b);
  REQUIRE(g.at("skins").size() == model->geometries.size());
  std::vector<std::size_t> palette_sizes, skin_sizes;
  for (const urho3d::geometry& geo : model->geometries) palette_sizes.push_back(geo.bone_mapping.size());
  for (const json& s : g["skins"]) skin_sizes.push_back(s.at("joints").size());
  CHECK(skin_sizes == palette_sizes);

  // Triangles and meshes.
  std::uint64_t indices = 0;
  for (const json& m : g.at("meshes"))
    for (const json& p : m.at("primitives")) indices += g["accessors"][p.at("indices").get<std::size_t>()]["count"].get<std::uint64_t>();
  CHECK(indices == lod0_indices);
  CHECK(g["meshes"].size() == model->geometries.size());

  // The clip: one channel per track and moved property, each with the track's key count, on the track's bone.
  REQUIRE(g.at("animations").size() == 1);
  const json& a = g["animations"][0];
  CHECK(a.at("name") == "Walk");
  std::map<std::pair<std::string, std::string>, std::uint64_t> keys;  // (bone, path) -> key count
  for (const json& c : a.at("channels")) {
    const std::string bone = g["nodes"][c.at("target").at("node").get<std::size_t>()].value("name", "");
    const json& sampler = a.at("samplers")[c.at("sampler").get<std::size_t>()];
    keys[{bone, c["target"].at("path").get<std::string>()}] = g["accessors"][sampler.at("input").get<std::size_t>()]["count"];
  }
  std::map<std::pair<std::string, std::string>, std::uint64_t> expected;
  for (const urho3d::track& t : clip->tracks) {
    if ((t.mask & urho3d::channel_position) != 0) expected[{std::string(t.name), "translation"}] = t.keyframe_count;
    if ((t.mask & urho3d::channel_rotation) != 0) expected[{std::string(t.name), "rotation"}] = t.keyframe_count;
    if ((t.mask & urho3d::channel_scale) != 0) expected[{std::string(t.name), "scale"}] = t.keyframe_count;
  }
  CHECK(keys == expected);
  // What glTF cannot hold is in the report, with counts: the LOD levels and the bones' collision shapes.
  std::map<std::string, std::uint64_t> dropped;
  for (const auto& e : r.conversion.entries)
    if (e.severity == convert::report_entry::kind::dropped) dropped[e.what] += e.count;
  CHECK(dropped["bone collision shapes"] == 52);
  CHECK(dropped.count("LOD levels") == 1);
}

namespace {

/// A mesh's triangles as sorted lists of corner attributes, so that two
/// meshes compare whatever order the writers put the vertices and triangles in.
struct corner {
  std::array<float, 3> position{}, normal{};
  std::array<float, 2> uv{};
  std::vector<std::pair<std::string, float>> influences;  // joint name -> weight, by name
};

using triangle = std::array<corner, 3>;

bool corner_less(const corner& a, const corner& b) {
  return std::tie(a.position, a.normal, a.uv) < std::tie(b.position, b.normal, b.uv);
}

std::vector<triangle> canonical_triangles(const convert::scene& s, const convert::mesh& m) {
  const auto list = convert::detail::triangle_list(m, m.indices);
  std::vector<triangle> out;
  auto corner_of = [&](std::uint32_t v) {
    corner c;
    for (int k = 0; k < 3; ++k) c.position[k] = m.positions[3 * v + k];
    if (!m.normals.empty())
      for (int k = 0; k < 3; ++k) c.normal[k] = m.normals[3 * v + k];
    if (!m.uv0.empty())
      for (int k = 0; k < 2; ++k) c.uv[k] = m.uv0[2 * v + k];
    if (!m.joints.empty()) {
      const convert::skin& sk = s.skins.at(m.skin);
      const convert::skeleton& skel = s.skeletons.at(sk.skeleton);
      for (int k = 0; k < 4; ++k)
        if (m.weights[v][k] > 0) c.influences.emplace_back(skel.joints.at(sk.joints.at(m.joints[v][k])).name, m.weights[v][k]);
      std::sort(c.influences.begin(), c.influences.end());
    }
    return c;
  };
  for (std::size_t t = 0; t + 2 < list.size(); t += 3) {
    triangle tri{corner_of(list[t]), corner_of(list[t + 1]), corner_of(list[t + 2])};
    // Rotate (keeping the winding) so that the smallest corner comes first:
    // by position, then normal and uv, so that corners sharing a position
    // (seams, degenerate triangles) do not make the order depend on which
    // corner a writer put first (cook rotates triangles for the index codec).
    const auto first = std::min_element(tri.begin(), tri.end(), corner_less);
    std::rotate(tri.begin(), first, tri.end());
    out.push_back(std::move(tri));
  }
  std::sort(out.begin(), out.end(), [](const triangle& a, const triangle& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), corner_less);
  });
  return out;
}

bool near(float a, float b, float tolerance) { return std::fabs(a - b) <= tolerance; }

template <std::size_t N>
bool near(const std::array<float, N>& a, const std::array<float, N>& b, float tolerance) {
  for (std::size_t k = 0; k < N; ++k)
    if (!near(a[k], b[k], tolerance)) return false;
  return true;
}

/// A joint's parent name and rest pose, by joint name.
std::map<std::string, std::pair<std::string, convert::transform>> joints_by_name(const convert::skeleton& k) {
  std::map<std::string, std::pair<std::string, convert::transform>> out;
  for (const convert::joint& j : k.joints)
    out[j.name] = {j.parent == convert::no_ref ? std::string() : k.joints[j.parent].name, j.rest};
  return out;
}

/// A clip's channels by (joint name, path): key times and values.
std::map<std::pair<std::string, int>, const convert::animation_channel*> channels_by_target(const convert::scene& s,
                                                                                            const convert::animation& a) {
  std::map<std::pair<std::string, int>, const convert::animation_channel*> out;
  for (const convert::animation_channel& c : a.channels) {
    const std::string name = c.skeleton != convert::no_ref ? s.skeletons[c.skeleton].joints[c.joint].name
                                                           : s.nodes.at(c.node).name;
    out[{name, static_cast<int>(c.path)}] = &c;
  }
  return out;
}

}  // namespace

TEST_CASE("convert: .mdl -> .untold -> .glb -> .untold keeps the geometry, skeleton and clip of .mdl -> .untold") {
  // Tolerances (docs/convert.md): positions and key values 1e-5 m (float32 carried through glTF as is);
  // normals 1.5 snorm10 steps (3/1023) and weights 1/255: .untold packs them, and each pass renormalises
  // and re-packs the decoded values;
  // uvs 1e-3 (half floats in the default layout); quaternions compared up to sign.
  constexpr float position_tolerance = 1e-5f, normal_tolerance = 3.0f / 1023, uv_tolerance = 1e-3f,
                  weight_tolerance = 1.0f / 255, key_tolerance = 1e-5f;
  const fs::path dir = cli_test::scratch("convert_cross");
  const fs::path mdl = test_data("urho3d/Models/Jack.mdl"), ani = test_data("urho3d/Models/Jack_Walk.ani");
  for (const auto& [in, out, animations] :
       {std::tuple{mdl, dir / "a.untold", std::vector<fs::path>{ani}}, std::tuple{dir / "a.untold", dir / "b.glb", std::vector<fs::path>{}},
        std::tuple{dir / "b.glb", dir / "c.untold", std::vector<fs::path>{}}}) {
    const tools::cook_report r = run_convert(in, out, animations);
    REQUIRE_MESSAGE(r.error.empty(), r.error);
  }
  const convert::scene a = untold_scene(dir / "a.untold"), c = untold_scene(dir / "c.untold");

  // Geometry: the same meshes (by name), the same triangles with the same corners.
  REQUIRE(a.meshes.size() == c.meshes.size());
  for (const convert::mesh& ma : a.meshes) {
    CAPTURE(ma.name);
    const auto mc = std::find_if(c.meshes.begin(), c.meshes.end(), [&](const convert::mesh& m) { return m.name == ma.name; });
    REQUIRE(mc != c.meshes.end());
    CHECK(mc->vertex_count() == ma.vertex_count());
    const auto ta = canonical_triangles(a, ma), tc = canonical_triangles(c, *mc);
    REQUIRE(ta.size() == tc.size());
    std::size_t bad = 0;
    for (std::size_t t = 0; t < ta.size(); ++t)
      for (int k = 0; k < 3; ++k) {
        const corner &x = ta[t][k], &y = tc[t][k];
        bool same = near(x.position, y.position, position_tolerance) && near(x.normal, y.normal, normal_tolerance) &&
                    near(x.uv, y.uv, uv_tolerance) && x.influences.size() == y.influences.size();
        for (std::size_t i = 0; same && i < x.influences.size(); ++i)
          same = x.influences[i].first == y.influences[i].first &&
                 near(x.influences[i].second, y.influences[i].second, weight_tolerance);
        bad += same ? 0 : 1;
      }
    CHECK(bad == 0);
  }

  // Skeleton: the same joints (by name) with the same parents and rest poses.
  REQUIRE(a.skeletons.size() == 1);
  REQUIRE(c.skeletons.size() == 1);
  const auto ja = joints_by_name(a.skeletons[0]), jc = joints_by_name(c.skeletons[0]);
  CHECK(ja.size() == 67);
  REQUIRE(ja.size() == jc.size());
  for (const auto& entry : ja) {  // not a structured binding: clang 14 cannot capture one (CAPTURE)
    const std::string& name = entry.first;
    const auto& joint = entry.second;
    CAPTURE(name);
    REQUIRE(jc.count(name) == 1);
    const auto& other = jc.at(name);
    CHECK(other.first == joint.first);
    CHECK(near(other.second.translation, joint.second.translation, position_tolerance));
    const auto& q = joint.second.rotation;
    const std::array<float, 4> minus{-q[0], -q[1], -q[2], -q[3]};
    CHECK((near(other.second.rotation, q, key_tolerance) || near(other.second.rotation, minus, key_tolerance)));
    CHECK(near(other.second.scale, joint.second.scale, key_tolerance));
  }

  // The clip: the same channels (by joint and path), key times and values.
  REQUIRE(a.animations.size() == 1);
  REQUIRE(c.animations.size() == 1);
  CHECK(c.animations[0].name == a.animations[0].name);
  CHECK(near(c.animations[0].duration, a.animations[0].duration, key_tolerance));
  const auto ca = channels_by_target(a, a.animations[0]), cc = channels_by_target(c, c.animations[0]);
  CHECK(ca.size() == 108);  // 54 tracks x (translation, rotation)
  REQUIRE(ca.size() == cc.size());
  for (const auto& entry : ca) {
    const auto& target = entry.first;
    const convert::animation_channel* channel = entry.second;
    CAPTURE(target.first);
    CAPTURE(target.second);
    REQUIRE(cc.count(target) == 1);
    const convert::animation_channel& other = *cc.at(target);
    REQUIRE(other.times.size() == channel->times.size());
    REQUIRE(other.values.size() == channel->values.size());
    std::size_t bad = 0;
    for (std::size_t k = 0; k < channel->times.size(); ++k) bad += near(other.times[k], channel->times[k], key_tolerance) ? 0 : 1;
    const std::size_t width = channel->path == convert::anim_path::rotation ? 4 : 3;
    for (std::size_t k = 0; k + width <= channel->values.size(); k += width) {
      bool same = true, flipped = true;
      for (std::size_t i = 0; i < width; ++i) {
        same = same && near(other.values[k + i], channel->values[k + i], key_tolerance);
        flipped = flipped && width == 4 && near(other.values[k + i], -channel->values[k + i], key_tolerance);
      }
      bad += same || flipped ? 0 : 1;
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("convert: --strict refuses a conversion that drops anything and writes nothing") {
  const fs::path dir = cli_test::scratch("convert_strict");
  const fs::path mdl = test_data("urho3d/Models/Jack.mdl");
  const tools::cook_report r = run_convert(mdl, dir / "jack.glb", {}, true);  // LOD levels and collision shapes: dropped
  CHECK(!r.error.empty());
  CHECK_MESSAGE(r.error.find("--strict: the conversion drops content (2 dropped entries") != std::string::npos, r.error);
  CHECK(!fs::exists(dir / "jack.glb"));
  // Through the command: exit status 1, the same refusal, and the --json report lists each loss with its count.
  const auto run = cli_test::run_untold("convert --strict --json " + cli_test::quoted(mdl) + " " +
                                        cli_test::quoted(dir / "jack.glb"));
  CHECK(run.exit_code == 1);
  CHECK(!fs::exists(dir / "jack.glb"));
  const json report = json::parse(run.out);
  CHECK(report.at("ok") == false);
  bool collision = false;
  for (const json& e : report.at("report"))
    collision = collision || (e.at("severity") == "dropped" && e.at("what") == "bone collision shapes" && e.at("count") == 52);
  CHECK(collision);
}

TEST_CASE("convert: Jack through PMDL (.mdl -> .pmdl_b -> .glb) keeps its joints, clip and counts") {
  const fs::path mdl = test_data("urho3d/Models/Jack.mdl"), ani = test_data("urho3d/Models/Jack_Walk.ani");
  const fs::path dir = cli_test::scratch("convert_jack_pmdl");
  for (const auto& [in, out, animations] :
       {std::tuple{mdl, dir / "direct.glb", std::vector<fs::path>{ani}},
        std::tuple{mdl, dir / "jack.pmdl_b", std::vector<fs::path>{ani}},
        std::tuple{dir / "jack.pmdl_b", dir / "via_pmdl.glb", std::vector<fs::path>{}}}) {
    const tools::cook_report r = run_convert(in, out, animations);
    REQUIRE_MESSAGE(r.error.empty(), r.error);
  }
  check_reads_back(dir / "jack.pmdl_b");
  const json direct = glb_json(dir / "direct.glb"), via = glb_json(dir / "via_pmdl.glb");
  // The same bones (as nodes, by name), skinned bones and triangles ...
  const auto names = [](const json& g) {
    std::multiset<std::string> out;
    for (const json& n : g.at("nodes")) out.insert(n.value("name", ""));
    return out;
  };
  // PMDL weights name skeleton bones (one skin listing every bone), Urho3D one palette per geometry:
  // every bone the Urho3D palettes bind is in the PMDL's skin.
  const auto skinned_bones = [](const json& g) {
    std::set<std::string> out;
    for (const json& s : g.at("skins"))
      for (const json& j : s.at("joints")) out.insert(g["nodes"][j.get<std::size_t>()].value("name", ""));
    return out;
  };
  const auto indices = [](const json& g) {
    std::uint64_t n = 0;
    for (const json& m : g.at("meshes"))
      for (const json& p : m.at("primitives")) n += g["accessors"][p.at("indices").get<std::size_t>()]["count"].get<std::uint64_t>();
    return n;
  };
  const std::multiset<std::string> direct_names = names(direct), via_names = names(via);
  std::size_t bones_found = 0;
  for (const json& n : direct.at("nodes"))
    if (n.contains("name") && via_names.count(n["name"].get<std::string>()) != 0) ++bones_found;
  CHECK(bones_found >= 67);
  const std::set<std::string> bound = skinned_bones(direct), via_bound = skinned_bones(via);
  CHECK(bound.size() == 52);
  CHECK(via_bound.size() == 67);
  CHECK(std::includes(via_bound.begin(), via_bound.end(), bound.begin(), bound.end()));
  CHECK(indices(via) == indices(direct));
  // ... and the clip: the same channels on the same bones with the same key counts.
  REQUIRE(via.at("animations").size() == 1);
  const auto channels = [](const json& g) {
    std::map<std::pair<std::string, std::string>, std::uint64_t> out;
    const json& a = g["animations"][0];
    for (const json& c : a.at("channels")) {
      const std::string bone = g["nodes"][c.at("target").at("node").get<std::size_t>()].value("name", "");
      const json& sampler = a.at("samplers")[c.at("sampler").get<std::size_t>()];
      out[{bone, c["target"].at("path").get<std::string>()}] = g["accessors"][sampler.at("input").get<std::size_t>()]["count"];
    }
    return out;
  };
  CHECK(channels(via) == channels(direct));
}
