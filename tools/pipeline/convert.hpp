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
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <untold/budget.hpp>
#include <untold/bytes.hpp>
#include <untold/convert/model.hpp>
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

/// Why `command` (e.g. "convert", "render") cannot import `input` (its
/// `bytes` and clip files `animations`) before it tries: a recognised format
/// with no importer, or --animations for a format that keeps no clips apart.
/// Empty when it can try.
[[nodiscard]] std::string import_refusal(std::string_view command, const std::filesystem::path& input, byte_span bytes,
                                         std::span<const std::filesystem::path> animations);

/// The bytes a run's budget is made from: the input file's and its clip
/// files' (those that exist).
[[nodiscard]] std::uint64_t inputs_size(std::uint64_t file_bytes, std::span<const std::filesystem::path> animations);

/// What import_scene made: the scene, or why not.
struct scene_import {
  convert::scene scene;
  std::string error;        // empty on success; starts with the quoted input path
  bool io_failure = false;  // the error is an unreadable file (a clip), not invalid content
  explicit operator bool() const noexcept { return error.empty(); }
};

/// The neutral scene of any input the library reads, by its first bytes:
/// .untold (opened with deep checks, convert::from_untold), a foreign format
/// with an importer (formats.hpp; Urho3D .mdl with its --animations clips,
/// Pragma PMDL, assetc .hmesh), else import_model by path (glTF, OBJ, FBX,
/// ...). `bytes` are the file's; `budget` is the run's, shared with the
/// stages after. Safe on untrusted input (every reader's checks and the
/// budget apply). The import behind `convert`, `render` and cook's scene.
[[nodiscard]] scene_import import_scene(std::string_view command, const std::filesystem::path& input, byte_span bytes,
                                        std::span<const std::filesystem::path> animations,
                                        const untold::limits& limits, untold::budget& budget);

/// Converts options.input into options.output (and its side files: .ani
/// clips and the material list for Urho3D, .bin and images for .gltf, LOD
/// files for .untold). The report is cook's: `error` empty on success,
/// `written`, and every loss of the import and the writer in `conversion`.
/// The input may be hostile: every reader checks it, the budget bounds
/// memory and work, and nothing is written when anything fails.
[[nodiscard]] cook_report convert_file(const convert_options& options);

}  // namespace untold::tools
