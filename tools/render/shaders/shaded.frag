#version 450
#extension GL_GOOGLE_include_directive : require
// Lambert with a headlight plus ambient, lit the same from both sides (both
// faces are drawn: open and single-sided meshes look solid).
#include "shaded_common.glsl"

layout(location = 0) in vec3 v_normal;
layout(location = 0) out vec4 out_color;

void main() {
  float len = length(v_normal);
  vec3 n = len > 0.0 ? v_normal / len : vec3(0.0);
  float diffuse = abs(dot(n, pc.light.xyz));
  out_color = vec4(pc.color.rgb * (pc.light.w + (1.0 - pc.light.w) * diffuse), 1.0);
}
