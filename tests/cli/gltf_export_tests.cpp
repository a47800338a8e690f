// The glTF writer (tools/pipeline/gltf_export.hpp): scenes from the Urho3D,
// PMDL and assimp importers written as .glb / .gltf + .bin, read back with
// TinyGLTF's loader, and compared with the scene: counts, vertex and index
// bytes, joints and inverse bind matrices, clips and key times, morph target
// names; the report; two writes give the same bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <tiny_gltf.h>

#include <untold/io.hpp>
#include <untold/udm/pmdl.hpp>
#include <untold/urho3d/import.hpp>

#include "../urho3d/u3d_support.hpp"
#include "cli_support.hpp"
#include "gltf_export.hpp"
#include "import_model.hpp"

namespace {

namespace fs = std::filesystem;
using namespace untold;
using tools::gltf_container;

convert::scene urho3d_scene(const std::string& rel) {
  const auto bytes = cli_test::read_bytes(cli_test::test_data("urho3d/Models/" + rel));
  auto s = urho3d::import_files(bytes, {}, fs::path(rel).stem().string());
  REQUIRE_MESSAGE(s.has_value(), s.error().describe());
  return std::move(*s);
}

convert::scene assimp_scene(const std::string& rel) {
  auto r = tools::import_model(cli_test::assimp_model(rel));
  REQUIRE_MESSAGE(r, r.error);
  return std::move(r.scene);
}

// Images are not decoded on read-back: the test compares references, not pixels.
bool keep_image(tinygltf::Image*, const int, std::string*, std::string*, int, int, const unsigned char*, int, void*) {
  return true;
}

tinygltf::Model load_glb(const std::vector<std::byte>& bytes) {
  tinygltf::TinyGLTF loader;
  loader.SetImageLoader(keep_image, nullptr);
  tinygltf::Model m;
  std::string err, warn;
  const bool ok = loader.LoadBinaryFromMemory(&m, &err, &warn, reinterpret_cast<const unsigned char*>(bytes.data()),
                                              static_cast<unsigned>(bytes.size()));
  REQUIRE_MESSAGE(ok, err);
  return m;
}

tools::gltf_output serialize(const convert::scene& s, const std::string& name = "out.glb",
                             const tools::gltf_export_options& o = {}) {
  auto out = tools::gltf_serialize(s, name, o);
  REQUIRE_MESSAGE(out.has_value(), out.error().describe());
  return std::move(*out);
}

/// `count` elements of T at `offset` of buffer view `view`.
template <class T>
std::vector<T> view_data(const tinygltf::Model& m, int view, std::size_t offset, std::size_t count) {
  const tinygltf::BufferView& v = m.bufferViews.at(static_cast<std::size_t>(view));
  const auto& data = m.buffers.at(static_cast<std::size_t>(v.buffer)).data;
  std::vector<T> out(count);
  REQUIRE(v.byteOffset + offset + count * sizeof(T) <= data.size());
  REQUIRE(offset + count * sizeof(T) <= v.byteLength);
  std::memcpy(out.data(), data.data() + v.byteOffset + offset, count * sizeof(T));
  return out;
}

/// The elements accessor `index` reads, as T (the accessor's component
/// type): its buffer view's, or zeros without one, with a sparse accessor's
/// values put at their indices.
template <class T>
std::vector<T> accessor_data(const tinygltf::Model& m, int index) {
  const tinygltf::Accessor& a = m.accessors.at(static_cast<std::size_t>(index));
  const std::size_t components = static_cast<std::size_t>(tinygltf::GetNumComponentsInType(static_cast<std::uint32_t>(a.type)));
  std::vector<T> out = a.bufferView >= 0 ? view_data<T>(m, a.bufferView, a.byteOffset, a.count * components)
                                         : std::vector<T>(a.count * components, T{});
  if (a.sparse.isSparse) {
    const auto n = static_cast<std::size_t>(a.sparse.count);
    std::vector<std::uint32_t> at;
    if (a.sparse.indices.componentType == TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT) {
      const auto narrow = view_data<std::uint16_t>(m, a.sparse.indices.bufferView,
                                                   static_cast<std::size_t>(a.sparse.indices.byteOffset), n);
      at.assign(narrow.begin(), narrow.end());
    } else {
      REQUIRE(a.sparse.indices.componentType == TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT);
      at = view_data<std::uint32_t>(m, a.sparse.indices.bufferView, static_cast<std::size_t>(a.sparse.indices.byteOffset), n);
    }
    const auto values = view_data<T>(m, a.sparse.values.bufferView, static_cast<std::size_t>(a.sparse.values.byteOffset),
                                     n * components);
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(at[i] < a.count);
      REQUIRE((i == 0 || at[i] > at[i - 1]));  // glTF: strictly increasing
      std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(i * components), components,
                  out.begin() + static_cast<std::ptrdiff_t>(at[i] * components));
    }
  }
  return out;
}

std::vector<std::uint32_t> index_data(const tinygltf::Model& m, int index) {
  if (m.accessors.at(static_cast<std::size_t>(index)).componentType == TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT) {
    const auto narrow = accessor_data<std::uint16_t>(m, index);
    return {narrow.begin(), narrow.end()};
  }
  return accessor_data<std::uint32_t>(m, index);
}

/// Every non-empty scene mesh is glTF mesh i (in order) with the scene's positions, normals, uvs and indices.
void check_meshes(const convert::scene& s, const tinygltf::Model& m) {
  std::size_t g = 0;
  for (const convert::mesh& sm : s.meshes) {
    if (sm.vertex_count() == 0) continue;
    REQUIRE(g < m.meshes.size());
    const tinygltf::Mesh& gm = m.meshes[g++];
    REQUIRE(gm.primitives.size() == 1);
    const tinygltf::Primitive& p = gm.primitives[0];
    CHECK(gm.name == sm.name);
    CHECK(accessor_data<float>(m, p.attributes.at("POSITION")) == sm.positions);
    const tinygltf::Accessor& pos = m.accessors[static_cast<std::size_t>(p.attributes.at("POSITION"))];
    CHECK(pos.minValues.size() == 3);
    CHECK(pos.maxValues.size() == 3);
    if (!sm.normals.empty()) CHECK(accessor_data<float>(m, p.attributes.at("NORMAL")) == sm.normals);
    if (!sm.uv0.empty()) CHECK(accessor_data<float>(m, p.attributes.at("TEXCOORD_0")) == sm.uv0);
    if (!sm.indices.empty()) CHECK(index_data(m, p.indices) == sm.indices);
    CHECK(p.targets.size() == sm.morphs.size());
    CHECK(p.material == (sm.material == convert::no_ref ? -1 : static_cast<int>(sm.material)));
  }
  CHECK(m.meshes.size() == g);
  CHECK(m.materials.size() == s.materials.size());
}

}  // namespace

TEST_CASE("gltf export: Urho3D models keep their meshes, vertex bytes and indices") {
  for (const char* rel : {"Box.mdl", "TeaPot.mdl", "NinjaSnowWar/Level.mdl", "LinePrimitives/Basis.mdl"}) {
    CAPTURE(rel);
    const convert::scene s = urho3d_scene(rel);
    const auto out = serialize(s);
    REQUIRE(out.files.size() == 1);
    CHECK(out.files[0].name == "out.glb");
    const tinygltf::Model m = load_glb(out.files[0].bytes);
    check_meshes(s, m);
    CHECK(m.nodes.size() >= s.nodes.size());
    CHECK(m.nodes[0].name == s.nodes[0].name);
    REQUIRE(m.scenes.size() == 1);
    CHECK(m.scenes[0].nodes == std::vector<int>{0});
  }
}

TEST_CASE("gltf export: a skinned, morphed Urho3D model with a clip keeps its joints, skin, morph and clip") {
  // The hand-written UMD2 model of the Urho3D tests (2 bones, 3 skinned vertices, morph "smile") and a clip.
  const u3d_test::tiny t = u3d_test::make_tiny();
  u3d_test::gen ani;
  ani.id("UANI").cstr("Walk").f32(1).u32(2);
  ani.cstr("root").u8(3).u32(2);
  for (int k = 0; k < 2; ++k) ani.f32(static_cast<float>(k)).f32(0).f32(1).f32(2).f32(1).f32(0).f32(0).f32(0);
  ani.cstr("child").u8(2).u32(1).f32(0).f32(0.7071f).f32(0.7071f).f32(0).f32(0);
  const std::vector<byte_span> anims = {ani.b};
  auto s = urho3d::import_files(t.file, anims, "tiny");
  REQUIRE_MESSAGE(s.has_value(), s.error().describe());
  REQUIRE(s->skeletons.size() == 1);
  // Written to a file through write_gltf, then read back from it.
  const fs::path dir = cli_test::scratch("gltf_tiny");
  auto written = tools::write_gltf(*s, dir / "tiny.glb");
  REQUIRE_MESSAGE(written.has_value(), written.error().describe());
  REQUIRE(written->files == std::vector<fs::path>{dir / "tiny.glb"});
  const tinygltf::Model m = load_glb(cli_test::read_bytes(dir / "tiny.glb"));
  check_meshes(*s, m);
  // Joints: one node per bone, in the skin's palette order (the geometry's bone mapping: child, root),
  // the child under the root, the root under the model's node.
  REQUIRE(m.skins.size() == 1);
  REQUIRE(m.skins[0].joints.size() == 2);
  const convert::skeleton& sk = s->skeletons[0];
  for (std::size_t j = 0; j < 2; ++j)
    CHECK(m.nodes[static_cast<std::size_t>(m.skins[0].joints[j])].name == sk.joints[s->skins[0].joints[j]].name);
  const int child = m.skins[0].joints[0], root = m.skins[0].joints[1];
  CHECK(m.nodes[static_cast<std::size_t>(child)].name == "child");
  CHECK(m.nodes[static_cast<std::size_t>(root)].name == "root");
  CHECK(m.nodes[static_cast<std::size_t>(root)].children == std::vector<int>{child});
  CHECK(std::count(m.nodes[0].children.begin(), m.nodes[0].children.end(), root) == 1);
  CHECK(m.nodes[0].skin == 0);
  CHECK(m.nodes[0].mesh == 0);
  // Morph "smile" on the mesh.
  REQUIRE(m.meshes[0].extras.Has("targetNames"));
  CHECK(m.meshes[0].extras.Get("targetNames").Get(0).Get<std::string>() == "smile");
  // Clip "Walk": root translation (2 keys) and rotation (2 keys), child rotation (1 key).
  REQUIRE(m.animations.size() == 1);
  CHECK(m.animations[0].name == "Walk");
  std::size_t keys = 0;
  for (const tinygltf::AnimationChannel& c : m.animations[0].channels) {
    const auto& sampler = m.animations[0].samplers[static_cast<std::size_t>(c.sampler)];
    keys += m.accessors[static_cast<std::size_t>(sampler.input)].count;
    CHECK((c.target_node == m.skins[0].joints[0] || c.target_node == m.skins[0].joints[1]));
  }
  CHECK(m.animations[0].channels.size() == 3);
  CHECK(keys == 5);
}

TEST_CASE("gltf export: a PMDL model keeps its meshes") {
  const auto bytes = cli_test::read_bytes(cli_test::test_data("udm/models/cube.pmdl_b"));
  auto s = udm::import_pmdl(bytes);
  REQUIRE_MESSAGE(s.has_value(), s.error().describe());
  const tinygltf::Model m = load_glb(serialize(*s).files[0].bytes);
  check_meshes(*s, m);
  CHECK(m.skins.size() == s->skins.size());
}

TEST_CASE("gltf export: a skinned, animated model keeps its joints, weights, bind matrices and clips") {
  const convert::scene s = assimp_scene("glTF2/simple_skin/simple_skin.gltf");
  REQUIRE(s.skins.size() == 1);
  REQUIRE(!s.animations.empty());
  const tinygltf::Model m = load_glb(serialize(s).files[0].bytes);
  check_meshes(s, m);
  REQUIRE(m.skins.size() == 1);
  const convert::skin& sk = s.skins[0];
  const convert::skeleton& skel = s.skeletons[sk.skeleton];
  REQUIRE(m.skins[0].joints.size() == sk.joints.size());
  const auto ibm = accessor_data<float>(m, m.skins[0].inverseBindMatrices);
  for (std::size_t j = 0; j < sk.joints.size(); ++j) {
    const convert::joint& joint = skel.joints[sk.joints[j]];
    CHECK(m.nodes[static_cast<std::size_t>(m.skins[0].joints[j])].name == joint.name);
    CHECK(std::vector<float>(ibm.begin() + static_cast<std::ptrdiff_t>(16 * j),
                             ibm.begin() + static_cast<std::ptrdiff_t>(16 * j + 16)) ==
          std::vector<float>(joint.inverse_bind.begin(), joint.inverse_bind.end()));
  }
  // Joints and weights per vertex (the importer's weights already sum to 1).
  const convert::mesh& mesh = s.meshes[0];
  const tinygltf::Primitive& p = m.meshes[0].primitives[0];
  const auto joints = accessor_data<std::uint16_t>(m, p.attributes.at("JOINTS_0"));
  const auto weights = accessor_data<float>(m, p.attributes.at("WEIGHTS_0"));
  for (std::size_t v = 0; v < mesh.vertex_count(); ++v)
    for (std::size_t c = 0; c < 4; ++c) {
      if (mesh.weights[v][c] <= 0) continue;
      CHECK(joints[4 * v + c] == mesh.joints[v][c]);
      CHECK(weights[4 * v + c] == doctest::Approx(mesh.weights[v][c]).epsilon(1e-6));
    }
  // The skinned mesh's node names the skin.
  bool skinned_node = false;
  for (const tinygltf::Node& n : m.nodes) skinned_node |= n.mesh == 0 && n.skin == 0;
  CHECK(skinned_node);
  // Clips: names, channel counts, key times, targets by name.
  REQUIRE(m.animations.size() == s.animations.size());
  for (std::size_t a = 0; a < s.animations.size(); ++a) {
    const convert::animation& sa = s.animations[a];
    const tinygltf::Animation& ga = m.animations[a];
    CHECK(ga.name == sa.name);
    REQUIRE(ga.channels.size() == sa.channels.size());
    for (std::size_t c = 0; c < sa.channels.size(); ++c) {
      const convert::animation_channel& sc = sa.channels[c];
      const tinygltf::AnimationChannel& gc = ga.channels[c];
      const tinygltf::AnimationSampler& gs = ga.samplers[static_cast<std::size_t>(gc.sampler)];
      CHECK(accessor_data<float>(m, gs.input) == sc.times);
      CHECK(gs.interpolation == (sc.interp == convert::interpolation::step ? "STEP" : "LINEAR"));
      const std::string target = m.nodes[static_cast<std::size_t>(gc.target_node)].name;
      CHECK(target == (sc.skeleton != convert::no_ref ? s.skeletons[sc.skeleton].joints[sc.joint].name
                                                      : s.nodes[sc.node].name));
    }
  }
}

TEST_CASE("gltf export: morph targets keep their names, default weights and weight clips") {
  const convert::scene s = assimp_scene("glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf");
  const tinygltf::Model m = load_glb(serialize(s).files[0].bytes);
  check_meshes(s, m);
  const convert::mesh& mesh = s.meshes[0];
  REQUIRE(!mesh.morphs.empty());
  const tinygltf::Mesh& gm = m.meshes[0];
  REQUIRE(gm.extras.Has("targetNames"));
  REQUIRE(gm.extras.Get("targetNames").ArrayLen() == mesh.morphs.size());
  REQUIRE(gm.weights.size() == mesh.morphs.size());
  for (std::size_t t = 0; t < mesh.morphs.size(); ++t) {
    CHECK(gm.extras.Get("targetNames").Get(static_cast<int>(t)).Get<std::string>() == mesh.morphs[t].name);
    CHECK(gm.weights[t] == doctest::Approx(mesh.morphs[t].default_weight));
    const auto& target = gm.primitives[0].targets[t];
    if (!mesh.morphs[t].position_deltas.empty())
      CHECK(accessor_data<float>(m, target.at("POSITION")) == mesh.morphs[t].position_deltas);
  }
  bool weights_channel = false;
  for (const tinygltf::Animation& a : m.animations)
    for (const tinygltf::AnimationChannel& c : a.channels) weights_channel |= c.target_path == "weights";
  CHECK(weights_channel);
}

TEST_CASE("gltf export: morph deltas are sparse when few vertices move, and absent when none do") {
  // A 3000-vertex strip with three targets: one moving 3 vertices (sparse, uint16 indices), one moving
  // every vertex (dense), one moving none (no buffer view).
  convert::scene s;
  convert::mesh mesh;
  mesh.name = "strip";
  const std::size_t v = 3000;
  for (std::size_t i = 0; i < v; ++i) mesh.positions.insert(mesh.positions.end(), {static_cast<float>(i % 2), static_cast<float>(i / 2), 0});
  for (std::size_t i = 0; i + 2 < v; i += 2) mesh.indices.insert(mesh.indices.end(), {std::uint32_t(i), std::uint32_t(i + 1), std::uint32_t(i + 2)});
  convert::morph_target few{"few", 0, std::vector<float>(3 * v, 0.0f), {}, {}};
  few.position_deltas[3 * 7 + 1] = 0.5f;
  few.position_deltas[3 * 100 + 2] = -1.0f;
  few.position_deltas[3 * 2999 + 0] = 2.0f;
  convert::morph_target all{"all", 0, std::vector<float>(3 * v, 0.25f), {}, {}};
  convert::morph_target none{"none", 0, std::vector<float>(3 * v, 0.0f), {}, {}};
  mesh.morphs = {few, all, none};
  s.meshes.push_back(mesh);
  s.nodes.push_back({"root", convert::no_ref, {}, {0}});
  const auto out = serialize(s);
  const tinygltf::Model m = load_glb(out.files[0].bytes);
  const auto& targets = m.meshes.at(0).primitives.at(0).targets;
  REQUIRE(targets.size() == 3);
  const tinygltf::Accessor& sparse = m.accessors[static_cast<std::size_t>(targets[0].at("POSITION"))];
  CHECK(sparse.bufferView == -1);
  CHECK(sparse.sparse.isSparse);
  CHECK(sparse.sparse.count == 3);
  CHECK(sparse.sparse.indices.componentType == TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT);
  CHECK(sparse.minValues == std::vector<double>{0, 0, -1});
  CHECK(sparse.maxValues == std::vector<double>{2, 0.5, 0});
  const tinygltf::Accessor& dense = m.accessors[static_cast<std::size_t>(targets[1].at("POSITION"))];
  CHECK(dense.bufferView >= 0);
  CHECK(!dense.sparse.isSparse);
  const tinygltf::Accessor& zero = m.accessors[static_cast<std::size_t>(targets[2].at("POSITION"))];
  CHECK(zero.bufferView == -1);
  CHECK(!zero.sparse.isSparse);
  CHECK(zero.minValues == std::vector<double>{0, 0, 0});
  for (std::size_t t = 0; t < 3; ++t) CHECK(accessor_data<float>(m, targets[t].at("POSITION")) == mesh.morphs[t].position_deltas);
  // The binary buffer: positions, 4497 uint16 indices (+2 padding), the sparse target's 3 indices (+2) and
  // 3 deltas, the dense target; nothing for the third.
  CHECK(m.buffers.at(0).data.size() == v * 12 + 8996 + 8 + 36 + v * 12);
}

TEST_CASE("gltf export: a mesh without the uv set its material samples gets the material without that slot") {
  // Two meshes share a textured material; only the first has uvs (assimp-testmodels' issue_3269 has this shape).
  convert::scene s;
  s.textures.push_back({.name = "t", .uri = "t.png", .format = texture_format::unknown, .width = 0, .height = 0,
                        .mip_count = 0, .srgb = true, .embedded = {}});
  convert::material mat;
  mat.name = "textured";
  mat.base_color_texture.texture = 0;
  mat.normal_texture.texture = 0;
  s.materials.push_back(mat);
  for (const bool with_uvs : {true, false}) {
    convert::mesh m;
    m.name = with_uvs ? "with uvs" : "without uvs";
    m.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    if (with_uvs) m.uv0 = {0, 0, 1, 0, 0, 1};
    m.material = 0;
    s.meshes.push_back(std::move(m));
  }
  s.nodes.push_back({"root", convert::no_ref, {}, {0, 1}});
  const auto out = serialize(s, "out.glb", {.container = gltf_container::glb, .embed_images = false});
  const tinygltf::Model m = load_glb(out.files[0].bytes);
  REQUIRE(m.meshes.size() == 2);
  REQUIRE(m.materials.size() == 2);
  CHECK(m.meshes[0].primitives[0].material == 0);
  CHECK(m.materials[0].pbrMetallicRoughness.baseColorTexture.index >= 0);
  const int copy = m.meshes[1].primitives[0].material;
  CHECK(copy == 1);
  CHECK(m.materials[1].name == "textured");
  CHECK(m.materials[1].pbrMetallicRoughness.baseColorTexture.index == -1);
  CHECK(m.materials[1].normalTexture.index == -1);
  std::uint64_t unbound = 0;
  for (const auto& e : out.report.entries)
    if (e.what == "texture bindings" && e.severity == convert::report_entry::kind::dropped) unbound += e.count;
  CHECK(unbound == 2);
}

TEST_CASE("gltf export: .gltf + .bin holds the same document and bytes as the .glb") {
  const convert::scene s = urho3d_scene("TeaPot.mdl");
  const fs::path dir = cli_test::scratch("gltf_export_pair");
  auto written = tools::write_gltf(s, dir / "teapot.gltf", {.container = gltf_container::gltf, .pretty = true});
  REQUIRE_MESSAGE(written.has_value(), written.error().describe());
  REQUIRE(written->files == std::vector<fs::path>{dir / "teapot.gltf", dir / "teapot.bin"});
  CHECK(!fs::exists(dir / "teapot.gltf.tmp"));
  tinygltf::TinyGLTF loader;
  loader.SetImageLoader(keep_image, nullptr);
  tinygltf::Model m;
  std::string err, warn;
  REQUIRE_MESSAGE(loader.LoadASCIIFromFile(&m, &err, &warn, (dir / "teapot.gltf").string()), err);
  REQUIRE(m.buffers.size() == 1);
  CHECK(m.buffers[0].uri == "teapot.bin");
  CHECK(m.buffers[0].data.size() == fs::file_size(dir / "teapot.bin"));
  check_meshes(s, m);
  // The .glb of the same scene carries the same binary buffer.
  const tinygltf::Model glb = load_glb(serialize(s).files[0].bytes);
  CHECK(glb.buffers[0].data == m.buffers[0].data);
  CHECK(glb.accessors.size() == m.accessors.size());
}

TEST_CASE("gltf export: two writes of a scene give the same bytes") {
  for (const char* rel : {"glTF2/simple_skin/simple_skin.gltf", "glTF2/textureTransform/TextureTransformTest.gltf"}) {
    CAPTURE(rel);
    const convert::scene s = assimp_scene(rel);
    const tools::gltf_export_options o{.image_directory = cli_test::assimp_model(rel).parent_path()};
    const auto a = serialize(s, "x.glb", o), b = serialize(s, "x.glb", o);
    REQUIRE(a.files.size() == b.files.size());
    for (std::size_t i = 0; i < a.files.size(); ++i) CHECK(a.files[i].bytes == b.files[i].bytes);
    const auto c = serialize(s, "x.gltf", {.container = gltf_container::gltf}),
               d = serialize(s, "x.gltf", {.container = gltf_container::gltf});
    REQUIRE(c.files.size() == d.files.size());
    for (std::size_t i = 0; i < c.files.size(); ++i) CHECK(c.files[i].bytes == d.files[i].bytes);
  }
}

TEST_CASE("gltf export: texture transforms, embedded images and the report") {
  const std::string rel = "glTF2/textureTransform/TextureTransformTest.gltf";
  const convert::scene s = assimp_scene(rel);
  std::size_t transformed = 0;
  for (const convert::material& mat : s.materials) transformed += mat.base_color_texture.has_transform;
  REQUIRE(transformed > 0);
  // Images read from the source folder go into the buffer.
  const auto out = serialize(s, "t.glb", {.image_directory = cli_test::assimp_model(rel).parent_path()});
  const tinygltf::Model m = load_glb(out.files[0].bytes);
  REQUIRE(m.images.size() == s.textures.size());
  for (const tinygltf::Image& img : m.images) {
    CHECK(img.bufferView >= 0);
    CHECK(img.mimeType == "image/png");
  }
  std::size_t with_extension = 0;
  for (const tinygltf::Material& mat : m.materials)
    with_extension += mat.pbrMetallicRoughness.baseColorTexture.extensions.count("KHR_texture_transform");
  CHECK(with_extension == transformed);
  CHECK(std::find(m.extensionsUsed.begin(), m.extensionsUsed.end(), "KHR_texture_transform") != m.extensionsUsed.end());
  // Without a folder, images are referenced by the URIs the scene gives.
  const tinygltf::Model by_uri = load_glb(serialize(s, "t.glb").files[0].bytes);
  for (std::size_t i = 0; i < by_uri.images.size(); ++i) CHECK(by_uri.images[i].uri == s.textures[i].uri);
}

TEST_CASE("gltf export: what glTF cannot hold is reported, with counts") {
  convert::scene s;
  s.nodes.push_back({"root", convert::no_ref, {}, {0, 1}});
  convert::mesh tri;
  tri.name = "tri";
  tri.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  tri.normals = {0, 0, 1, 0, 0, 1, std::numeric_limits<float>::quiet_NaN(), 0, 1};  // as in Urho3D's Editor/Axes.mdl
  tri.uv0 = {0, 0, 1, 0, std::numeric_limits<float>::infinity(), 1};
  tri.indices = {0, 1, 2};
  tri.lods.push_back({10.0f, {0, 1, 2}});
  s.meshes.push_back(tri);
  s.meshes.push_back(convert::mesh{});  // no vertices
  convert::material mat;
  mat.other_textures.emplace_back("environment", 0);
  mat.metallic = 2;  // outside [0, 1]
  s.materials.push_back(mat);
  s.textures.push_back({});  // neither bytes nor a URI
  s.lights.push_back({.name = "panel", .node = 0, .kind = convert::light_kind::area});
  s.lights.push_back({.name = "sun", .node = 0, .kind = convert::light_kind::directional});
  s.cameras.push_back({.name = "cam", .node = 0});
  convert::animation clip;
  clip.name = "empty";
  s.animations.push_back(clip);
  const auto out = serialize(s);
  const auto has = [&](convert::report_entry::kind k, const std::string& what, std::uint64_t count) {
    for (const auto& e : out.report.entries)
      if (e.severity == k && e.what == what) return e.count == count;
    return false;
  };
  using k = convert::report_entry::kind;
  CHECK(has(k::dropped, "LOD levels", 1));
  CHECK(has(k::dropped, "meshes without vertices", 1));
  CHECK(has(k::dropped, "source-specific texture slots", 1));
  CHECK(has(k::dropped, "textures", 1));
  CHECK(has(k::dropped, "area lights", 1));
  CHECK(has(k::dropped, "animations without channels", 1));
  CHECK(has(k::changed, "material factors", 1));
  CHECK(has(k::changed, "normals without a direction", 1));  // replaced by the face normal, +Z
  CHECK(has(k::changed, "non-finite values", 1));
  const tinygltf::Model m = load_glb(out.files[0].bytes);
  CHECK(accessor_data<float>(m, m.meshes[0].primitives[0].attributes.at("NORMAL")) ==
        std::vector<float>{0, 0, 1, 0, 0, 1, 0, 0, 1});
  CHECK(accessor_data<float>(m, m.meshes[0].primitives[0].attributes.at("TEXCOORD_0")) ==
        std::vector<float>{0, 0, 1, 0, 0, 1});
  CHECK(m.meshes.size() == 1);
  CHECK(m.lights.size() == 1);
  CHECK(m.cameras.size() == 1);
  CHECK(m.materials[0].pbrMetallicRoughness.metallicFactor == 1.0);
  CHECK(m.nodes[0].camera == 0);
  CHECK(m.nodes[0].mesh == 0);  // the one mesh with vertices sits on the node itself
}

TEST_CASE("gltf export: an invalid scene is an error value, nothing is written") {
  convert::scene s;
  s.nodes.push_back({"n", convert::no_ref, {}, {7}});  // no mesh 7
  const fs::path dir = cli_test::scratch("gltf_export_invalid");
  auto r = tools::write_gltf(s, dir / "bad.glb");
  REQUIRE(!r.has_value());
  CHECK(r.error().code == errc::invalid_argument);
  CHECK(fs::is_empty(dir));
}

namespace {

/// `y` equals `x` (vectors of `width` floats), except that the writer makes
/// the vectors unit as glTF requires (a reported change): where `x` is not
/// unit (its length off by more than `kept_within`: the writer's threshold),
/// `y` is `x` normalised (within 1e-6), or any unit vector when `x` has no
/// direction.
bool same_as_unit(const std::vector<float>& x, const std::vector<float>& y, std::size_t width, double kept_within) {
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i + width <= x.size(); i += width) {
    double len = 0, ylen = 0;
    for (std::size_t k = 0; k < width; ++k) len += double{x[i + k]} * x[i + k], ylen += double{y[i + k]} * y[i + k];
    len = std::sqrt(len);
    if (!(len > 1e-12)) {
      if (std::fabs(std::sqrt(ylen) - 1) > 1e-5) return false;
      continue;
    }
    for (std::size_t k = 0; k < width; ++k) {
      const double expected = std::fabs(len - 1) <= kept_within ? x[i + k] : x[i + k] / len;
      if (std::fabs(expected - y[i + k]) > 1e-6) return false;
    }
  }
  return true;
}

/// Everything two scenes must share after glTF -> scene -> .glb -> scene: meshes (streams, indices, skin,
/// morph targets, material), materials (factors, modes, slots with their transforms and samplers), skeletons
/// (names, parents, rest poses, inverse binds), clips (targets by name, paths, interpolation, keys), lights and
/// cameras (by name). Floats exactly: the writer stores the scene's floats as they are.
void check_same_scene(const convert::scene& a, const convert::scene& b) {
  REQUIRE(b.meshes.size() == a.meshes.size());
  for (std::size_t i = 0; i < a.meshes.size(); ++i) {
    const convert::mesh &x = a.meshes[i], &y = b.meshes[i];
    CAPTURE(x.name);
    CHECK(y.name == x.name);
    CHECK(y.primitive == x.primitive);
    CHECK(y.positions == x.positions);
    CHECK(same_as_unit(x.normals, y.normals, 3, 0.0025));  // the writer rescales past a squared length 1 +- 0.005
    CHECK(y.tangents.size() == x.tangents.size());
    CHECK(y.uv0 == x.uv0);
    CHECK(y.uv1 == x.uv1);
    CHECK(y.colors == x.colors);
    CHECK(y.indices == x.indices);
    CHECK(y.joints == x.joints);
    REQUIRE(y.weights.size() == x.weights.size());
    for (std::size_t v = 0; v < x.weights.size(); ++v)
      for (int k = 0; k < 4; ++k) CHECK(y.weights[v][k] == doctest::Approx(x.weights[v][k]).epsilon(1e-6));
    CHECK(y.material == x.material);
    CHECK(y.skin == x.skin);
    REQUIRE(y.morphs.size() == x.morphs.size());
    for (std::size_t t = 0; t < x.morphs.size(); ++t) {
      CHECK(y.morphs[t].name == x.morphs[t].name);
      CHECK(y.morphs[t].default_weight == x.morphs[t].default_weight);
      CHECK(y.morphs[t].position_deltas == x.morphs[t].position_deltas);
      CHECK(y.morphs[t].normal_deltas == x.morphs[t].normal_deltas);
    }
  }
  REQUIRE(b.materials.size() == a.materials.size());
  for (std::size_t i = 0; i < a.materials.size(); ++i) {
    const convert::material &x = a.materials[i], &y = b.materials[i];
    CAPTURE(x.name);
    CHECK(y.name == x.name);
    CHECK(y.base_color == x.base_color);
    CHECK(y.emissive == x.emissive);
    CHECK(y.metallic == x.metallic);
    CHECK(y.roughness == x.roughness);
    CHECK(y.alpha == x.alpha);
    CHECK(y.double_sided == x.double_sided);
    CHECK(y.transmission == x.transmission);
    const convert::texture_slot* xs[] = {&x.base_color_texture, &x.metallic_roughness_texture, &x.normal_texture,
                                         &x.occlusion_texture, &x.emissive_texture};
    const convert::texture_slot* ys[] = {&y.base_color_texture, &y.metallic_roughness_texture, &y.normal_texture,
                                         &y.occlusion_texture, &y.emissive_texture};
    for (int k = 0; k < 5; ++k) {
      CAPTURE(k);
      CHECK(ys[k]->texture == xs[k]->texture);
      CHECK(ys[k]->uv_set == xs[k]->uv_set);
      CHECK(ys[k]->wrap == xs[k]->wrap);
      CHECK(ys[k]->mag_filter == xs[k]->mag_filter);
      CHECK(ys[k]->min_filter == xs[k]->min_filter);
      CHECK(ys[k]->has_transform == xs[k]->has_transform);
      CHECK(ys[k]->offset == xs[k]->offset);
      CHECK(ys[k]->scale == xs[k]->scale);
      CHECK(ys[k]->rotation == xs[k]->rotation);
    }
  }
  CHECK(b.textures.size() == a.textures.size());
  REQUIRE(b.skeletons.size() == a.skeletons.size());
  for (std::size_t k = 0; k < a.skeletons.size(); ++k) {
    REQUIRE(b.skeletons[k].joints.size() == a.skeletons[k].joints.size());
    for (std::size_t j = 0; j < a.skeletons[k].joints.size(); ++j) {
      const convert::joint &x = a.skeletons[k].joints[j], &y = b.skeletons[k].joints[j];
      CAPTURE(x.name);
      CHECK(y.name == x.name);
      CHECK(y.parent == x.parent);
      CHECK(y.rest.translation == x.rest.translation);
      CHECK(y.rest.rotation == x.rest.rotation);
      CHECK(y.rest.scale == x.rest.scale);
      CHECK(y.inverse_bind == x.inverse_bind);
    }
  }
  REQUIRE(b.skins.size() == a.skins.size());
  for (std::size_t k = 0; k < a.skins.size(); ++k) CHECK(b.skins[k].joints == a.skins[k].joints);
  REQUIRE(b.animations.size() == a.animations.size());
  const auto target = [](const convert::scene& s, const convert::animation_channel& c) {
    return c.skeleton != convert::no_ref ? s.skeletons[c.skeleton].joints[c.joint].name : s.nodes.at(c.node).name;
  };
  for (std::size_t i = 0; i < a.animations.size(); ++i) {
    const convert::animation &x = a.animations[i], &y = b.animations[i];
    CAPTURE(x.name);
    CHECK(y.name == x.name);
    REQUIRE(y.channels.size() == x.channels.size());
    for (std::size_t c = 0; c < x.channels.size(); ++c) {
      CHECK(target(b, y.channels[c]) == target(a, x.channels[c]));
      CHECK(y.channels[c].path == x.channels[c].path);
      CHECK(y.channels[c].interp == x.channels[c].interp);
      CHECK(y.channels[c].times == x.channels[c].times);
      if (x.channels[c].path == convert::anim_path::rotation && x.channels[c].interp != convert::interpolation::cubic_spline)
        CHECK(same_as_unit(x.channels[c].values, y.channels[c].values, 4, 1e-6));  // unit quaternions, as glTF requires
      else
        CHECK(y.channels[c].values == x.channels[c].values);
    }
  }
  REQUIRE(b.lights.size() == a.lights.size());
  for (std::size_t i = 0; i < a.lights.size(); ++i) CHECK(b.lights[i].name == a.lights[i].name);
  REQUIRE(b.cameras.size() == a.cameras.size());
  for (std::size_t i = 0; i < a.cameras.size(); ++i) CHECK(b.cameras[i].name == a.cameras[i].name);
}

}  // namespace

TEST_CASE("gltf round trip: glTF -> scene -> .glb -> scene keeps everything the scene carries") {
  std::vector<fs::path> models = {cli_test::test_data("gltf/texture_transform.gltf")};
  for (const char* rel : {"glTF2/simple_skin/simple_skin.gltf",
                          "glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf",
                          "glTF2/textureTransform/TextureTransformTest.gltf", "glTF2/BoxTextured-glTF/BoxTextured.gltf",
                          "glTF2/cameras/Cameras.gltf", "glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb"}) {
    const fs::path p = cli_test::assimp_model(rel);
    if (fs::exists(p)) models.push_back(p);
    else MESSAGE("skipped " << rel << ": assimp-testmodels is not installed (scripts/install-deps.sh)");
  }
  const fs::path dir = cli_test::scratch("gltf_round_trip");
  for (const fs::path& model : models) {
    CAPTURE(model.string());
    auto first = tools::import_model(model);
    REQUIRE_MESSAGE(first, first.error);
    const fs::path out = dir / (model.stem().string() + ".glb");
    auto written = tools::write_gltf(first.scene, out, {.container = gltf_container::glb, .image_directory = model.parent_path()});
    REQUIRE_MESSAGE(written.has_value(), written.error().describe());
    auto second = tools::import_model(out);
    REQUIRE_MESSAGE(second, second.error);
    check_same_scene(first.scene, second.scene);
  }
}
