#version 300 es
#extension GL_GOOGLE_include_directive : require
// untold_decode.glsl in an OpenGL ES 3.0 vertex shader (compile check only).
#include "untold_decode.glsl"

layout(location = 1) in vec4 pbr_tangent;  // GL_INT_2_10_10_10_REV, normalized
layout(location = 3) in vec2 oct_normal;   // GL_SHORT x2, normalized
layout(location = 4) in ivec2 oct_tangent; // GL_SHORT x2, glVertexAttribIPointer
layout(location = 5) in uint raw_normal;   // GL_UNSIGNED_INT, glVertexAttribIPointer
out vec4 v_value;

void main() {
  vec4 t = untold_oct_decode_tangent(oct_tangent);
  vec4 n = untold_unpack_snorm10_10_10_2(raw_normal);
  v_value = vec4(untold_oct_decode(oct_normal) + t.xyz + n.xyz, untold_handedness(pbr_tangent.w) * t.w);
  gl_Position = vec4(0.0);
}
