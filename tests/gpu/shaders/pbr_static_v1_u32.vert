#version 450
#extension GL_GOOGLE_include_directive : require
// PBR_STATIC_V1 the way Direct3D and WebGPU must read it: normal and tangent
// fetched as raw u32 (R32_UINT) and unpacked in the shader.
#include "untold_decode.glsl"
#include "render_common.glsl"

layout(location = 0) in vec3 in_position;
layout(location = 1) in uint in_normal;   // R32_UINT
layout(location = 2) in uint in_tangent;  // R32_UINT
layout(location = 3) in vec2 in_uv0;
layout(location = 4) in vec2 in_uv1;
layout(location = 5) in vec4 in_color0;

void main() {
  gl_Position = place(in_position);
  vec4 normal = untold_unpack_snorm10_10_10_2(in_normal);
  vec4 tangent = untold_unpack_snorm10_10_10_2(in_tangent);
  tangent.w = untold_handedness(tangent.w);
  v_value = shade(normal.xyz, tangent, in_uv0, in_uv1, in_color0);
}
