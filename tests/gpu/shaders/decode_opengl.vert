#version 330 core
#extension GL_GOOGLE_include_directive : require
// untold_decode.glsl in an OpenGL 3.3 shader (compile check only): the
// attribute types glVertexAttrib[I]Pointer produce for both layouts.
#include "untold_decode.glsl"

layout(location = 1) in vec4 pbr_normal;   // GL_INT_2_10_10_10_REV, normalized
layout(location = 2) in vec4 pbr_tangent;  // GL_INT_2_10_10_10_REV, normalized
layout(location = 3) in vec2 oct_normal;   // GL_SHORT x2, normalized
layout(location = 4) in ivec2 oct_tangent; // GL_SHORT x2, glVertexAttribIPointer
layout(location = 5) in uint raw_tangent;  // GL_UNSIGNED_INT, glVertexAttribIPointer
out vec4 v_value;

void main() {
  vec4 t = untold_oct_decode_tangent(oct_tangent);
  vec4 u = untold_unpack_snorm10_10_10_2(raw_tangent);
  v_value = vec4(pbr_normal.xyz + untold_oct_decode(oct_normal) + t.xyz + u.xyz,
                 untold_handedness(pbr_tangent.w) * t.w * untold_handedness(u.w));
  gl_Position = vec4(0.0);
}
