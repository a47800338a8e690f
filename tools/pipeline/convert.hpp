// tools/pipeline/convert.hpp - any format the library reads into any format
// it writes, through the neutral scene: the logic behind `untold convert`
// (docs/cli.md; docs/convert.md has the matrix of what each pair keeps).
//
//   untold::tools::convert_options o;
//   o.input = "Jack.mdl";
//   o.output = "out/Jack.glb";
//   o.target = untold::tools::convert_target_of(o.output).value();
//   auto r = untold::tools::convert_file(o);   // cook_report: error, written, conversion
//
// Inputs, by their first bytes: .untold (convert::from_untold, deep checks),
// a foreign format with an importer (Urho3D .mdl + --animations .ani, Pragma
// PMDL), else assimp by path (glTF, OBJ, FBX, ...). Targets: .untold (as
// `cook` writes it), Urho3D (.mdl, an .ani per clip, the material list
// OUT.txt that Urho3D's StaticModel::ApplyMaterialList reads), glTF 2.0
// (.glb, or .gltf + .bin), assetc (.hmesh + .hmat, .hanim, .hman and KTX2
// textures: format_assetc.hpp's assetc_convert_outputs) and Pragma (.pmdl_b,
// convert::to_pmdl). Every writer's output is read back by the library's
// strict reader before it is written (to_untold, to_urho3d, to_assetc,
// to_pmdl and the glTF writer do it). One budget (untold/budget.hpp) per run, from the
// limits and the inputs' sizes, is shared by the importer and the writer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include <untold/limits.hpp>

#include "cook.hpp"

namespace untold::tools {

enum class convert_target : std::uint8_t { untold, urho3d, glb, gltf, assetc, pmdl };

/// "untold", "urho3d", "glb", "gltf", "assetc", "pmdl".
[[nodiscard]] std::string_view name(convert_target t) noexcept;
/// The target a --to value names ("untold", "urho3d" or "mdl", "glb", "gltf", "assetc" or "hmesh", "pmdl"), or nullopt.
[[nodiscard]] std::optional<convert_target> convert_target_named(std::string_view name) noexcept;
/// The target an output path's extension names (.untold, .mdl, .glb, .gltf, .hmesh, .pmdl_b), or nullopt.
[[nodiscard]] std::optional<convert_target> convert_target_of(const std::filesystem::path& output);

struct convert_options {
  std::filesystem::path input;
  std::filesystem::path output;
  convert_target target = convert_target::untold;
  /// Clip files of formats that keep them apart (Urho3D .ani).
  std::vector<std::filesystem::path> animations;
  /// Fail (nothing written) when the conversion drops anything.
  bool strict = false;
  /// Chunk compression of a .untold output (other targets have none).
  compression_policy compression{};
  untold::limits limits{};
  /// Called with a stage name and its completion in [0, 1]; may be empty.
  std::function<void(std::string_view stage, float fraction)> progress;
};

/// Converts options.input into options.output (and its side files: .ani
/// clips and the material list for Urho3D, .bin and images for .gltf, LOD
/// files for .untold). The report is cook's: `error` empty on success,
/// `written`, and every loss of the import and the writer in `conversion`.
/// The input may be hostile: every reader checks it, the budget bounds
/// memory and work, and nothing is written when anything fails.
[[nodiscard]] cook_report convert_file(const convert_options& options);

}  // namespace untold::tools
