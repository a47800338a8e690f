#version 450
#extension GL_GOOGLE_include_directive : require
// GpuVertex (28 bytes) with the Vulkan formats of untold/gpu_formats.hpp.
#include "untold_decode.glsl"
#include "render_common.glsl"

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec2 in_normal;    // R16G16_SNORM, octahedral
layout(location = 2) in ivec2 in_tangent;  // R16G16_SINT, octahedral + handedness bit
layout(location = 3) in vec2 in_uv;        // R32G32_SFLOAT

void main() {
  gl_Position = place(in_position);
  v_value = shade(untold_oct_decode(in_normal), untold_oct_decode_tangent(in_tangent), in_uv, vec2(0.0), vec4(1.0));
}
