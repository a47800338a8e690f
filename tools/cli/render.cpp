// tools/cli/render.cpp - `untold render FILE -o OUT.png`: a picture of any
// model the library reads, drawn offscreen with Vulkan (tools/render/
// render.hpp). This file parses the options and writes the PNG. In a build
// without Vulkan or glslangValidator the command exists and says so.
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

#include <untold/detail/checks.hpp>

#include "commands.hpp"
#include "files.hpp"
#include "render.hpp"

namespace untold::tools::cli {
namespace {

struct render_args {
  std::string input, output, size = "512x512", eye, target, background = "#303338", animation;
  std::vector<std::string> animations;
  float fov = 35, time = 0;
  std::uint32_t lod = 0;
};

/// A whole decimal number in [1, max_render_size], or nullopt.
std::optional<std::uint32_t> parse_side(std::string_view text) {
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value == 0 || value > max_render_size) return std::nullopt;
  return value;
}

/// "x,y,z" (three finite floats), or nullopt.
std::optional<std::array<float, 3>> parse_point(std::string_view text) {
  std::array<float, 3> out{};
  for (std::size_t i = 0; i < 3; ++i) {
    const std::size_t comma = i < 2 ? text.find(',') : text.size();
    if (comma == std::string_view::npos) return std::nullopt;
    const std::string part(text.substr(0, comma));
    std::size_t used = 0;
    try {
      out[i] = std::stof(part, &used);
    } catch (const std::exception&) {  // std::invalid_argument, std::out_of_range
      return std::nullopt;
    }
    if (used != part.size() || !untold::detail::is_finite(out[i])) return std::nullopt;
    text.remove_prefix(i < 2 ? comma + 1 : comma);
  }
  return out;
}

/// "#RRGGBB", "#RRGGBBAA" (the '#' optional) or "transparent", or nullopt.
std::optional<std::array<std::uint8_t, 4>> parse_colour(std::string_view text) {
  if (text == "transparent") return std::array<std::uint8_t, 4>{0, 0, 0, 0};
  if (!text.empty() && text.front() == '#') text.remove_prefix(1);
  if (text.size() != 6 && text.size() != 8) return std::nullopt;
  std::array<std::uint8_t, 4> out{0, 0, 0, 0xFF};
  for (std::size_t i = 0; i < text.size() / 2; ++i) {
    const auto [end, ec] = std::from_chars(text.data() + 2 * i, text.data() + 2 * i + 2, out[i], 16);
    if (ec != std::errc{} || end != text.data() + 2 * i + 2) return std::nullopt;
  }
  return out;
}

/// The options from the command line, or the usage error in `error`.
std::optional<render_options> render_options_of(const render_args& a, std::string& error) {
  render_options o;
  o.input = a.input;
  o.animations.assign(a.animations.begin(), a.animations.end());
  const std::size_t x = a.size.find('x');
  const auto width = parse_side(std::string_view(a.size).substr(0, x));
  const auto height = x == std::string::npos ? width : parse_side(std::string_view(a.size).substr(x + 1));
  if (!width || !height) {
    error = "--size " + escaped(a.size) + ": expected WIDTHxHEIGHT or N (1 to " + std::to_string(max_render_size) + ")";
    return std::nullopt;
  }
  o.width = *width;
  o.height = *height;
  if (!a.eye.empty() && !(o.camera.eye = parse_point(a.eye))) {
    error = "--eye " + escaped(a.eye) + ": expected x,y,z";
    return std::nullopt;
  }
  if (!a.target.empty() && !(o.camera.target = parse_point(a.target))) {
    error = "--target " + escaped(a.target) + ": expected x,y,z";
    return std::nullopt;
  }
  o.camera.fov_degrees = a.fov;
  const auto background = parse_colour(a.background);
  if (!background) {
    error = "--background " + escaped(a.background) + ": expected #RRGGBB, #RRGGBBAA or transparent";
    return std::nullopt;
  }
  o.background = *background;
  o.lod = a.lod;
  o.animation = a.animation;
  o.time = a.time;
  return o;
}

int run_render(const render_args& a, const common_flags& flags) {
  std::string error;
  int code = exit_ok;
  render_result r;
  const std::optional<render_options> o = render_options_of(a, error);
  if (!o) {
    code = exit_usage;
  } else {
#if defined(UNTOLD_CLI_RENDER)
    r = render_file(*o);
    using failure = render_result::failure;
    code = r.failed == failure::none      ? exit_ok
           : r.failed == failure::usage   ? exit_usage
           : r.failed == failure::io      ? exit_io
                                          : exit_invalid;  // invalid input, or no Vulkan device
    error = r.error;
    if (r)
      if (auto failed = write_output(a.output, r.png)) {
        code = exit_io;
        error = std::move(failed->message);
      }
#else
    code = exit_invalid;
    error = "this build of untold has no Vulkan renderer (it was configured without libvulkan-dev or glslang-tools; "
            "scripts/install-deps.sh installs them)";
#endif
  }
  if (code != exit_ok) complain(error);
  if (flags.json) {
    json j{{"input", a.input}, {"output", a.output}, {"ok", code == exit_ok},
           {"error", code == exit_ok ? json(nullptr) : json(error)}};
    if (code == exit_ok)
      j.update(json{{"width", o->width},
                    {"height", o->height},
                    {"bytes", r.png.size()},
                    {"device", r.device},
                    {"meshes", r.meshes},
                    {"triangles", r.triangles},
                    {"skippedPrimitives", r.skipped_primitives},
                    {"camera", {{"eye", r.eye}, {"target", r.target}, {"fov", r.fov_degrees}}}});
    print(to_text(j));
  } else if (code == exit_ok && !flags.quiet) {
    std::printf("rendered %s -> %s: %ux%u, %llu meshes, %llu triangles on %s\n", escaped(a.input).c_str(),
                escaped(a.output).c_str(), o->width, o->height, static_cast<unsigned long long>(r.meshes),
                static_cast<unsigned long long>(r.triangles), escaped(r.device).c_str());
    if (r.skipped_primitives != 0)
      std::printf("  %llu line or point meshes not drawn\n", static_cast<unsigned long long>(r.skipped_primitives));
  }
  return code;
}

}  // namespace

void add_render_command(CLI::App& app, context& ctx) {
  auto a = std::make_shared<render_args>();
  CLI::App* cmd = app.add_subcommand("render", "Draw a model into a PNG offscreen with Vulkan (lavapipe without a GPU)");
  cmd->add_option("FILE", a->input, "model: .untold, Urho3D .mdl, Pragma .pmdl_b, assetc .hmesh, glTF/OBJ/FBX/...")
      ->required();
  cmd->add_option("-o,--output", a->output, "output PNG")->required();
  cmd->add_option("--size", a->size, "WIDTHxHEIGHT or N for a square (1 to " + std::to_string(max_render_size) + ")")
      ->capture_default_str();
  cmd->add_option("--eye", a->eye, "camera position x,y,z (default: framed from the posed bounds)");
  cmd->add_option("--target", a->target, "point the camera looks at x,y,z (default: the bounds' centre)");
  cmd->add_option("--fov", a->fov, "vertical field of view in degrees")->capture_default_str();
  cmd->add_option("--background", a->background, "#RRGGBB, #RRGGBBAA or transparent")->capture_default_str();
  cmd->add_option("--lod", a->lod, "level of detail: 0 full, k each mesh's level k or its coarsest")
      ->capture_default_str();
  cmd->add_option("--animation", a->animation, "clip NAME or INDEX to pose the model with (default: rest pose)");
  cmd->add_option("--time", a->time, "seconds into the clip")->capture_default_str();
  cmd->add_option("--animations", a->animations, "clip files of formats that keep them apart (Urho3D .ani)");
  add_common_flags(*cmd, ctx.flags, "print a JSON report (also on failure)");
  cmd->callback([a, &ctx] { ctx.exit_code = run_render(*a, ctx.flags); });
}

}  // namespace untold::tools::cli
