#version 450
#extension GL_GOOGLE_include_directive : require
// PBR_QUANT_V1 (24 bytes) with the Vulkan formats of untold/gpu_formats.hpp,
// dequantized by untold_decode.glsl. The test's sphere has localBounds
// [-1, 1] on every axis (test_render.cpp checks it); an engine passes each
// mesh's bounds as a per-draw constant.
#include "untold_decode.glsl"
#include "render_common.glsl"

layout(location = 0) in vec4 in_position;  // R16G16B16A16_UNORM, w = handedness
layout(location = 1) in vec2 in_normal;    // R8G8_SNORM, octahedral
layout(location = 2) in vec2 in_tangent;   // R8G8_SNORM, octahedral
layout(location = 3) in vec2 in_uv0;       // R16G16_SFLOAT
layout(location = 4) in vec2 in_uv1;       // R16G16_SFLOAT
layout(location = 5) in vec4 in_color0;    // R8G8B8A8_UNORM

void main() {
  gl_Position = place(untold_quant_position(in_position, vec3(-1.0), vec3(1.0)));
  vec4 tangent = vec4(untold_oct_decode(in_tangent), untold_quant_handedness(in_position));
  v_value = shade(untold_oct_decode(in_normal), tangent, in_uv0, in_uv1, in_color0);
}
