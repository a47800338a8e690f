#version 450
#extension GL_GOOGLE_include_directive : require
// PBR_STATIC_V1 with the native Vulkan formats of untold/gpu_formats.hpp.
#include "untold_decode.glsl"
#include "render_common.glsl"

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec4 in_normal;   // A2B10G10R10_SNORM_PACK32
layout(location = 2) in vec4 in_tangent;  // A2B10G10R10_SNORM_PACK32
layout(location = 3) in vec2 in_uv0;      // R16G16_SFLOAT
layout(location = 4) in vec2 in_uv1;      // R16G16_SFLOAT
layout(location = 5) in vec4 in_color0;   // R8G8B8A8_UNORM

void main() {
  gl_Position = place(in_position);
  vec4 tangent = vec4(in_tangent.xyz, untold_handedness(in_tangent.w));
  v_value = shade(in_normal.xyz, tangent, in_uv0, in_uv1, in_color0);
}
