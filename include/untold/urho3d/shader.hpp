// untold/urho3d/shader.hpp - Urho3D shader caches (USHD: .vs3/.ps3 for
// Direct3D 9 shader model 3, .vs4/.ps4 for Direct3D 11 shader model 4) and
// compiled AngelScript (.asc, ASBC).
//
// Reads: shader type and model, (SM4) the vertex element hash, the constant
// parameters (SM3: register index and count; SM4: constant buffer, byte
// offset and size), the texture units (sampler index) and the bytecode as a
// view into the file. .asc: recognised, the AngelScript bytecode is a view.
// Writes both back byte-exactly.
//
// Rejects (open_shader): U3D-MAGIC, U3D-TRUNC, U3D-COUNT, U3D-STRING,
// U3D-SHADER-TYPE, U3D-SHADER-MODEL, U3D-TRAILING, R-LIMITS.
// open_script: U3D-MAGIC only (the bytecode is opaque here).
//
// Safe on untrusted input: counts are checked against the remaining bytes
// before allocation; linear. Results view the input buffer.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "../sink.hpp"
#include "common.hpp"

namespace untold::urho3d {

struct shader_parameter {
  std::string_view name;
  std::uint8_t index = 0;           // SM3: first register; SM4: constant buffer
  std::uint8_t register_count = 0;  // SM3
  std::uint32_t offset = 0;         // SM4: byte offset in the constant buffer
  std::uint32_t size = 0;           // SM4: byte size
};

struct texture_unit {
  std::string_view name;
  std::uint8_t sampler = 0;
};

inline constexpr std::uint16_t shader_vertex = 0, shader_pixel = 1;

struct shader {
  std::uint16_t type = shader_vertex;  // 0 vertex, 1 pixel
  std::uint16_t model = 3;             // 3 (Direct3D 9) or 4 (Direct3D 11)
  std::uint32_t element_hash = 0;      // SM4 only: vertex element hash (0 for pixel shaders)
  std::vector<shader_parameter> parameters;
  std::vector<texture_unit> texture_units;
  byte_span bytecode;
};

/// Options of open_shader. No `deep_checks`: the cache holds no values to
/// check beyond its structure, which every open checks. No `budget`: the
/// reader holds one small record per parameter and texture unit, each
/// counted against the bytes left and limits.max_records before allocation.
struct shader_options {
  untold::limits limits{};
};

[[nodiscard]] inline bool is_shader(byte_span head) noexcept { return starts_with_id(head, "USHD"); }
[[nodiscard]] inline bool is_script(byte_span head) noexcept { return starts_with_id(head, "ASBC"); }

/// Reads and checks a USHD shader cache. Preconditions: none; safe on
/// untrusted input. The result views `file`.
[[nodiscard]] inline result<shader> open_shader(byte_span file, const shader_options& options = {}) {
  if (!is_shader(file)) return make_error(errc::u3d_bad_magic).at_field("id").at_offset(0);
  byte_cursor c(file, u3d_rules);
  (void)c.skip(4, "id");
  shader sh;
  auto type = c.read<std::uint16_t>("shaderType");
  if (!type) return type.error();
  if (*type > shader_pixel) return make_error(errc::u3d_shader_type).at_field("shaderType").with_value(*type)
      .at_offset(4);
  auto model = c.read<std::uint16_t>("shaderModel");
  if (!model) return model.error();
  if (*model != 3 && *model != 4) return make_error(errc::u3d_shader_model).at_field("shaderModel")
      .with_value(*model).at_offset(6);
  sh.type = *type;
  sh.model = *model;
  const bool sm4 = sh.model == 4;
  if (sm4) {
    auto hash = c.read<std::uint32_t>("elementHash");
    if (!hash) return hash.error();
    sh.element_hash = *hash;
  }
  auto params = c.count_u32(sm4 ? 10 : 3, "parameterCount", options.limits.max_records, errc::limit_exceeded);
  if (!params) return params.error();
  sh.parameters.resize(*params);
  for (shader_parameter& p : sh.parameters) {
    auto name = detail::read_name(c, "parameter.name");
    if (!name) return name.error();
    p.name = *name;
    auto fields = c.bytes(sm4 ? 9 : 2, "parameter");
    if (!fields) return fields.error();
    p.index = static_cast<std::uint8_t>((*fields)[0]);
    if (sm4) {
      p.offset = load_le_unchecked<std::uint32_t>(fields->data() + 1);
      p.size = load_le_unchecked<std::uint32_t>(fields->data() + 5);
    } else {
      p.register_count = static_cast<std::uint8_t>((*fields)[1]);
    }
  }
  auto units = c.count_u32(2, "textureUnitCount", options.limits.max_records, errc::limit_exceeded);
  if (!units) return units.error();
  sh.texture_units.resize(*units);
  for (texture_unit& u : sh.texture_units) {
    auto name = detail::read_name(c, "textureUnit.name");
    if (!name) return name.error();
    u.name = *name;
    auto sampler = c.read<std::uint8_t>("textureUnit.sampler");
    if (!sampler) return sampler.error();
    u.sampler = *sampler;
  }
  auto size = c.read<std::uint32_t>("bytecodeSize");
  if (!size) return size.error();
  auto code = c.array_bytes(*size, 1, "bytecode");
  if (!code) return code.error();
  sh.bytecode = *code;
  if (!c.at_end()) return c.fail(errc::u3d_trailing_bytes, "end", c.remaining());
  return sh;
}

/// Writes a USHD shader cache. Deterministic; invalid_argument for a type
/// or model the reader would reject, names with NULs or a bytecode above
/// 4 GiB.
[[nodiscard]] inline result<std::vector<std::byte>> write_shader(const shader& sh) {
  auto bad = [](const char* field, std::uint64_t value) {
    error e = make_error(errc::invalid_argument);
    e.context.field = field;
    e.context.value = value;
    e.context.has_value = true;
    return e;
  };
  if (sh.type > shader_pixel) return bad("type", sh.type);
  if (sh.model != 3 && sh.model != 4) return bad("model", sh.model);
  if (sh.bytecode.size() > 0xFFFFFFFFu) return bad("bytecode", sh.bytecode.size());
  std::vector<std::byte> out;
  byte_sink s(out);
  put_id(out, "USHD");
  s.put<std::uint16_t>(sh.type);
  s.put<std::uint16_t>(sh.model);
  const bool sm4 = sh.model == 4;
  if (sm4) s.put<std::uint32_t>(sh.element_hash);
  s.put<std::uint32_t>(static_cast<std::uint32_t>(sh.parameters.size()));
  for (const shader_parameter& p : sh.parameters) {
    if (p.name.find('\0') != std::string_view::npos) return bad("parameter.name", 0);
    s.cstring(p.name);
    s.put<std::uint8_t>(p.index);
    if (sm4) {
      s.put<std::uint32_t>(p.offset);
      s.put<std::uint32_t>(p.size);
    } else {
      s.put<std::uint8_t>(p.register_count);
    }
  }
  s.put<std::uint32_t>(static_cast<std::uint32_t>(sh.texture_units.size()));
  for (const texture_unit& u : sh.texture_units) {
    if (u.name.find('\0') != std::string_view::npos) return bad("textureUnit.name", 0);
    s.cstring(u.name);
    s.put<std::uint8_t>(u.sampler);
  }
  s.put<std::uint32_t>(static_cast<std::uint32_t>(sh.bytecode.size()));
  s.bytes(sh.bytecode);
  return out;
}

/// Compiled AngelScript: "ASBC" and the engine's serialised bytecode.
struct script {
  byte_span bytecode;
};

/// Recognises an .asc file. Preconditions: none; safe on untrusted input.
/// The result views `file`. No options: nothing is read past the magic.
[[nodiscard]] inline result<script> open_script(byte_span file) noexcept {
  if (!is_script(file)) return make_error(errc::u3d_bad_magic).at_field("id").at_offset(0);
  return script{file.subspan(4)};
}

/// Writes an .asc file: "ASBC" and the bytecode. Cannot fail (nothing to
/// check), so it returns the bytes rather than a result.
[[nodiscard]] inline std::vector<std::byte> write_script(const script& sc) {
  std::vector<std::byte> out;
  byte_sink s(out);
  put_id(out, "ASBC");
  s.bytes(sc.bytecode);
  return out;
}

}  // namespace untold::urho3d
