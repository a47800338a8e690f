// tools/pipeline/assetc_convert.cpp - `untold convert --to assetc`'s files
// (format_assetc.hpp), apart from the family's readers in format_assetc.cpp:
// it needs the assetc compiler (meshlets, KTX2 encoding), which the readers
// and the web viewer's module (scripts/build-web.sh) do not.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <untold/assetc/assetc.hpp>
#include <untold/convert/to_assetc.hpp>

#include "assetc_build.hpp"
#include "assetc_ktx2.hpp"
#include "format_assetc.hpp"

namespace untold::tools {

namespace fs = std::filesystem;
namespace ua = untold::assetc;

result<std::vector<std::pair<fs::path, std::vector<std::byte>>>> assetc_convert_outputs(
    const convert::scene& s, const fs::path& input, const fs::path& output, const untold::limits& limits,
    untold::budget& budget, convert::conversion_report& report) {
  convert::to_assetc_options o = assetc_build::compiler_hooks();
  o.optimise = {};    // the scene's vertex order ...
  o.build_lods = {};  // ... and LODs are kept
  o.limits = limits;
  o.budget = &budget;
  const std::string stem = output.stem().string();
  o.source_ref = ua::source_ref(output.filename().generic_string());
  const std::unique_ptr<texture_encoder> encoder = make_raw_ktx2_encoder();
  std::vector<std::pair<fs::path, std::vector<std::byte>>> textures;
  std::vector<std::string> paths;  // the manifest's, relative to the output's directory
  o.place_texture = [&](const convert::assetc_texture_use& use, convert::conversion_report& rep) -> result<bool> {
    std::vector<std::byte> ktx;
    if (!assetc_build::encode_texture(s.textures[use.texture], use, input, *encoder, rep, ktx)) return false;
    UNTOLD_TRY(budget.charge_output(ktx.size(), "textures", errc::hm_limit_exceeded));
    paths.push_back(stem + "/tex_" + std::to_string(use.texture) + ".ktx2");
    textures.emplace_back(output.parent_path() / paths.back(), std::move(ktx));
    return true;
  };
  auto out = convert::to_assetc(s, o, report);
  if (!out) return out.error();
  std::vector<std::pair<fs::path, std::vector<std::byte>>> files;
  files.emplace_back(output, std::move(out->hmesh));
  files.emplace_back(fs::path(output).replace_extension(".hmat"), std::move(out->hmat));
  if (!out->hanim.empty()) files.emplace_back(fs::path(output).replace_extension(".hanim"), std::move(out->hanim));
  if (!out->textures.empty()) {
    std::vector<ua::manifest_entry> entries;
    for (std::size_t i = 0; i < out->textures.size(); ++i)
      entries.push_back({out->textures[i].ref, static_cast<std::uint8_t>(ua::manifest_kind::texture),
                         static_cast<std::uint8_t>(out->textures[i].srgb ? 1 : 0), paths[i]});
    auto hman = ua::write_hman(entries);
    if (!hman) return hman.error();
    if (auto opened = ua::open_hman(*hman, assetc_open_options(true)); !opened) return opened.error();
    files.emplace_back(fs::path(output).replace_extension(".hman"), std::move(*hman));
    for (auto& t : textures) files.push_back(std::move(t));
  }
  return files;
}

}  // namespace untold::tools
