// tools/pipeline/gltf_export.hpp - the neutral scene (untold/convert/model.hpp)
// as glTF 2.0: a .glb, or a .gltf with its .bin (docs/convert.md, "glTF writer").
//
//   untold::tools::gltf_export_options o;             // .glb, images embedded
//   auto r = untold::tools::write_gltf(scene, "out.glb", o);
//   if (!r) ... r.error()                               // an untold::error value
//   for (const auto& e : r->report.entries) ...         // what glTF cannot hold
//   for (const auto& f : r->files) ...                  // every file written
//
// What is written (glTF's conventions are the scene's, so nothing is converted):
//   - nodes in the scene's order (glTF node i == scene node i) with their TRS;
//     a node drawing several meshes gets one child node per mesh; skeleton
//     joints become nodes under the skeleton's node; a camera or light on a
//     node that already holds one gets a child node;
//   - one glTF mesh per scene mesh with one primitive: POSITION (min/max),
//     NORMAL, TANGENT, TEXCOORD_n (uv0, uv1, extra uvs), COLOR_0, JOINTS_0 /
//     WEIGHTS_0, indices (16-bit when every index fits), morph targets
//     (POSITION with min/max, NORMAL, TANGENT deltas; names in
//     mesh.extras.targetNames, default weights in mesh.weights);
//   - materials (metallic-roughness, alpha modes, double-sided, emissive and
//     KHR_materials_emissive_strength, KHR_materials_transmission,
//     KHR_texture_transform per slot), textures, samplers (the slots' wrap
//     modes and filters) and images (PNG/JPEG bytes embedded in the binary buffer, or the
//     texture's URI as given);
//   - skins (inverseBindMatrices), animations (T/R/S and morph weights,
//     STEP / LINEAR / CUBICSPLINE as the scene says), cameras,
//     KHR_lights_punctual.
// Every piece of the scene glTF cannot hold (LOD levels, area lights,
// node/mesh/material extras, which this writer does not carry yet,
// source-specific texture slots, ...) or that had to change to be valid
// glTF (a non-unit quaternion, repeated key times, out-of-range factors) is
// an entry of the result's report, with a count and a reason.
//
// Deterministic: the same scene and options give the same bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <untold/budget.hpp>
#include <untold/convert/model.hpp>
#include <untold/error.hpp>
#include <untold/limits.hpp>

namespace untold::tools {

/// Which glTF files to write.
enum class gltf_container : std::uint8_t {
  glb,   // one binary .glb (JSON chunk + BIN chunk)
  gltf,  // a .gltf (JSON) and, when there is binary data, <stem>.bin beside it
};

struct gltf_export_options {
  gltf_container container = gltf_container::glb;
  /// Put the images into the binary buffer (bufferView images): the bytes a
  /// texture embeds, and the PNG/JPEG files its URI names under
  /// `image_directory` (when set). When false, embedded images are written
  /// as files beside the output (<stem>_image<N>.png / .jpg) and URIs are
  /// kept as given.
  bool embed_images = true;
  /// Where the textures' relative URIs point (the source file's directory);
  /// empty: URI images are never read, only referenced.
  std::filesystem::path image_directory{};
  /// Indent a .gltf's JSON (2 spaces); else compact. A .glb is always compact.
  bool pretty = false;
  /// What the writer may hold and write: the binary buffer, its serialised
  /// copy and the output are charged to `budget` (the input's, shared with
  /// the importer, as `untold convert` does), else to one made from
  /// `limits` for the scene's payload (convert::payload_bytes).
  untold::limits limits{};
  untold::budget* budget = nullptr;
};

/// One output file, in memory.
struct gltf_file {
  std::string name;  // file name relative to the output's directory
  std::vector<std::byte> bytes;
};

/// The glTF files of a scene (gltf_serialize) and the writer's report.
struct gltf_output {
  std::vector<gltf_file> files;  // the .glb / .gltf first, then .bin and image files
  convert::conversion_report report;
};

/// What write_gltf did: the writer's report (the scene's own report, from
/// its importer, is not repeated here) and the files it wrote.
struct gltf_export_result {
  convert::conversion_report report;
  std::vector<std::filesystem::path> files;
};

/// The glTF files of `scene`, in memory. `output_name` is the main file's
/// name (e.g. "model.glb"); the .bin and image files are named after its
/// stem. Errors: E-INVALID-ARGUMENT when validate_model rejects the scene,
/// R-LIMITS when the binary data exceeds glTF's 4 GiB (uint32 lengths) or
/// the budget (options.budget / options.limits).
/// Precondition: none on the scene (it is validated first). Reads image
/// files under options.image_directory (only names that pass
/// is_safe_relative_path).
[[nodiscard]] result<gltf_output> gltf_serialize(const convert::scene& scene, const std::string& output_name,
                                                 const gltf_export_options& options = {});

/// gltf_serialize, then writes every file atomically (untold::write_file
/// through write_output) into `path`'s directory: `path` itself is the .glb
/// or .gltf. Errors: those of gltf_serialize, and E-IO-OPEN / E-IO-WRITE
/// (context.value: errno; subject: the file name) when a file cannot be
/// written (files written before it stay).
[[nodiscard]] result<gltf_export_result> write_gltf(const convert::scene& scene, const std::filesystem::path& path,
                                                    const gltf_export_options& options = {});

}  // namespace untold::tools
